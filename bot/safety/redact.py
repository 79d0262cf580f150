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


class Redactor:
    def __init__(self, secrets: Iterable[str], *, urls: bool = False) -> None:
        # Longest first, so a secret that contains another is masked whole.
        self._secrets = sorted({s for s in secrets if len(s) >= MIN_SECRET_LENGTH}, key=len, reverse=True)
        self._urls = urls

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, MASK)
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
    redacting = RedactingFilter(Redactor(secrets, urls=True))
    for handler in logging.getLogger().handlers:
        handler.addFilter(redacting)
