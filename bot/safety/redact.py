"""Keeps secrets out of text that leaves the process: log lines, chat replies, error messages, published files.

Everywhere, the secrets this process was given are masked: tokens from the environment, and what
credentials in an endpoint URL reveal (``url_secrets``). In what the bot says about its own work (log
records, error lines) credentials written into any URL are masked as well (``urls=True``:
``https://user:password@host``, ``?api_key=...``), since an HTTP library logs whole request URLs; model
output keeps its example URLs (a ``postgres://user:password@localhost`` in generated code is code).
"""

from __future__ import annotations

import base64
import logging
import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, unquote, urlsplit

MASK = "[redacted]"
MIN_SECRET_LENGTH = 6  # shorter values would mask ordinary words

_URL_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)[^\s/?#@\[\]]+@")
_SECRET_PARAMS = r"(?:api[-_]?key|key|access[-_]?token|token|secret|client[-_]?secret|password|passwd|pwd|sig|signature|auth)"
_URL_SECRET_PARAM = re.compile(rf"(?i)(?P<name>[?&]{_SECRET_PARAMS}=)[^&\s#\"'<>]+")


# Secrets of the common formats, as people paste them into a thread: found by their shape, since the bot
# was never given them. Each pattern matches the secret itself, so the words around it stay readable.
PASTED_SECRETS = (
    re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY"
               r"(?: BLOCK)?-----|\Z)"),  # a key block cut short is masked to the end
    re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})"),  # GitHub tokens
    re.compile(r"\bxox[abeoprs]-[A-Za-z0-9-]{10,}|\bxapp-[A-Za-z0-9-]{10,}"),  # Slack bot, user and app tokens
    re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),  # OpenAI keys
    # An AWS secret access key right after its key id (the console's credentials.csv, "ID SECRET" pairs).
    re.compile(r"(\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}[\s,;:|\"']{1,5})[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])"),
    re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"),  # AWS access key ids
    # Webhook URLs post as the app to anyone who has them: Slack's and Discord's.
    re.compile(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,}"),
    re.compile(r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/(?:v\d+/)?webhooks/\d+/[A-Za-z0-9_-]{20,}"),
    # Discord bot tokens: the bot's id in base64 (each 4 characters of digits start with M, N or O), then two parts.
    re.compile(r"\b(?:[MNO][A-Za-z0-9]{3}){4,7}[A-Za-z0-9]{0,3}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}\b"),
    re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}|\b[sr]k_live_[A-Za-z0-9]{24,}|\bAIza[A-Za-z0-9_-]{35}\b"),  # GitLab, Stripe, Google
    # An AWS secret access key is 40 characters of base64 with nothing to tell it by but its name nearby.
    # (a config line, an environment variable, the CLI's JSON: aws_secret_access_key = …, "SecretAccessKey": "…").
    re.compile(r"(?i)((?:aws_?secret_?access_?key|secret_?access_?key|aws_?secret_?key)[\"']?\s*[=:]\s*[\"']?)"
               r"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])"),
)


def mask_pasted_secrets(text: str) -> tuple[str, int]:
    """``text`` with every secret of a common format masked, and how many were."""
    count = 0
    for pattern in PASTED_SECRETS:
        text, found = pattern.subn(lambda m: (m.group(1) if m.re.groups else "") + MASK, text)
        count += found
    return text, count


_HTTP_USERINFO = re.compile(r"(?P<scheme>\bhttps?://)[^\s/?#@\[\]]+@", re.IGNORECASE)


def mask_url_credentials(text: str) -> tuple[str, int]:
    """``text`` with what stands before ``@`` in each http(s) URL masked (``https://user:TOKEN@host``, or a token as
    the user name), and how many were: a person pasting a repository's URL from a git remote pastes its token."""
    return _HTTP_USERINFO.subn(lambda m: f"{m['scheme']}{MASK}@", text)


class Redactor:
    """``patterns=True`` also masks secrets by their shape (``mask_pasted_secrets``): for log lines, where
    a pasted secret could arrive in a message the bot logs."""

    def __init__(self, secrets: Iterable[str], *, urls: bool = False, patterns: bool = False) -> None:
        # Longest first, so a secret that contains another is masked whole.
        self._secrets = sorted({s for s in secrets if len(s) >= MIN_SECRET_LENGTH}, key=len, reverse=True)
        self._urls, self._patterns = urls, patterns

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        if self._patterns:
            text = mask_pasted_secrets(text)[0]
        return _without_url_credentials(text) if self._urls else text


def _without_url_credentials(text: str) -> str:
    if "://" in text:
        text = _URL_USERINFO.sub(lambda m: f"{m['scheme']}{MASK}@", text)
    if "=" in text:
        text = _URL_SECRET_PARAM.sub(lambda m: f"{m['name']}{MASK}", text)
    return text


def url_secrets(url: str) -> list[str]:
    """What credentials in an endpoint URL reveal, in every form they may be sent or logged: the password
    (as written and decoded), ``user:password``, its Basic-auth encoding, and secret query values."""
    if not url:
        return []
    try:
        parts = urlsplit(url.strip())
        password = parts.password or ""
        user = parts.username or ""
        query = parse_qsl(parts.query)
    except ValueError:
        return []
    found: list[str] = []
    if password:
        plain = f"{unquote(user)}:{unquote(password)}"
        found += [password, unquote(password), f"{user}:{password}", plain,
                  base64.b64encode(plain.encode()).decode()]
    elif user:  # a token given as the user name (https://TOKEN@host)
        found += [user, unquote(user)]
    found += [value for name, value in query if re.fullmatch(_SECRET_PARAMS, name, re.IGNORECASE)]
    return found


def database_url_secrets(url: str) -> list[str]:
    """A database URL's secrets: its password in every form, and secret query values (``?password=``). Unlike an
    endpoint's, its user name alone is no token (``postgresql://codegen@db/codegen``) and is not masked."""
    try:
        parts = urlsplit(url.strip())
        user = parts.username or ""
        has_password = bool(parts.password)
    except ValueError:
        return []
    return [s for s in url_secrets(url) if has_password or s not in (user, unquote(user))]


def masked_url(url: str) -> str:
    """``url`` as a message may show it: the password and secret query values replaced by ``***``."""
    try:
        parts = urlsplit(url.strip())
        password = parts.password
    except ValueError:
        return "(a URL that cannot be read)"
    if password:
        user_info, _, host = parts.netloc.rpartition("@")
        parts = parts._replace(netloc=f"{user_info.partition(':')[0]}:***@{host}")
    return _URL_SECRET_PARAM.sub(lambda m: f"{m.group('name')}***", parts.geturl())


class RedactingFilter(logging.Filter):
    """A logging filter that masks secrets in every record's rendered message."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self._redact = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = self._redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        if record.exc_info and not record.exc_text:
            # The formatter would render the traceback after filters ran, unmasked; render it now.
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self._redact(record.exc_text)
        return True


def install_log_redaction(secrets: Iterable[str]) -> None:
    """Mask ``secrets`` in every handler of the root logger (call after logging is configured)."""
    redacting = RedactingFilter(Redactor(secrets, urls=True, patterns=True))
    for handler in logging.getLogger().handlers:
        handler.addFilter(redacting)
