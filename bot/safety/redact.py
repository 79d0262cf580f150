"""Keeps secrets out of text that leaves the process: log lines, chat replies, error messages, published files.

Everywhere, the secrets this process was given are masked: tokens from the environment, and what
credentials in an endpoint URL reveal (``url_secrets``). In what the bot says about its own work (log
records, error lines) credentials written into any URL are masked as well (``urls=True``:
``https://user:password@host``, ``?api_key=...``), since an HTTP library logs whole request URLs; model
output keeps its example URLs (a ``postgres://user:password@localhost`` in generated code is code).
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
from collections.abc import Callable, Iterable
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlsplit

MASK = "[redacted]"
MIN_SECRET_LENGTH = 6  # shorter values would mask ordinary words

_URL_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)[^\s/?#@\[\]]+@")
# A query parameter is secret when its name holds one of these words, whatever else it holds (api_key, sslpassword,
# X-Amz-Signature, refresh_token, client_secret), or is ``sig`` (an Azure SAS signature): a list of exact names
# always misses the next library's spelling.
_SECRET_WORDS = ("password", "passwd", "pwd", "secret", "token", "key", "auth", "credential", "signature")
_SECRET_PARAM_NAME = rf"(?:sig|[\w.~-]*(?:{'|'.join(_SECRET_WORDS)})[\w.~-]*)"
# (a value already masked is left as it is, with what follows it)
_URL_SECRET_PARAM = re.compile(rf"(?i)(?P<name>[?&]{_SECRET_PARAM_NAME}=)(?!{re.escape(MASK)})[^&\s#\"'<>]+")


def is_secret_parameter(name: str) -> bool:
    """Whether a URL's query parameter called ``name`` carries a credential (see ``_SECRET_WORDS``)."""
    lowered = name.lower()
    return lowered == "sig" or any(word in lowered for word in _SECRET_WORDS)


# Secrets of the common formats, as people paste them into a thread: found by their shape, since the bot
# was never given them. Each pattern matches the secret itself, so the words around it stay readable.
_START = r"(?<![A-Za-z0-9])"  # not \b: a token glued to "_" (key_ghp_....py, MY_KEY_sk-...) is still one
_END = r"(?![A-Za-z0-9])"
PASTED_SECRETS = (
    re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY"
               r"(?: BLOCK)?-----|\Z)"),  # a key block cut short is masked to the end
    re.compile(rf"{_START}(?:gh[pousr]_[A-Za-z0-9]{{30,}}|github_pat_[A-Za-z0-9_]{{40,}})"),  # GitHub tokens
    # Slack bot, user, app and session tokens.
    re.compile(rf"{_START}xox[abcdeoprs]-[A-Za-z0-9%-]{{10,}}|{_START}xapp-[A-Za-z0-9-]{{10,}}"),
    re.compile(rf"{_START}sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{{20,}}"),  # OpenAI keys
    # An AWS secret access key right after its key id (the console's credentials.csv, "ID SECRET" pairs).
    re.compile(rf"({_START}(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{{16}}[\s,;:|\"']{{1,5}})[A-Za-z0-9/+]{{40}}(?![A-Za-z0-9/+])"),
    re.compile(rf"{_START}(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{{16}}{_END}"),  # AWS access key ids
    # Webhook URLs post as the app to anyone who has them: Slack's and Discord's.
    re.compile(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,}"),
    re.compile(r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/(?:v\d+/)?webhooks/\d+/[A-Za-z0-9_-]{20,}"),
    # Discord bot tokens: the bot's id in base64 (each 4 characters of digits start with M, N or O), then two parts.
    re.compile(rf"{_START}(?:[MNO][A-Za-z0-9]{{3}}){{4,7}}[A-Za-z0-9]{{0,3}}\.[A-Za-z0-9_-]{{6}}"
               rf"\.[A-Za-z0-9_-]{{27,40}}{_END}"),
    # GitLab, Stripe and Google keys.
    re.compile(rf"{_START}glpat-[A-Za-z0-9_-]{{20,}}|{_START}[sr]k_live_[A-Za-z0-9]{{24,}}"
               rf"|{_START}AIza[A-Za-z0-9_-]{{35}}{_END}"),
    # npm, Hugging Face, PyPI and SendGrid tokens.
    re.compile(rf"{_START}npm_[A-Za-z0-9]{{36}}{_END}|{_START}hf_[A-Za-z0-9]{{30,}}{_END}"
               rf"|{_START}pypi-AgE[A-Za-z0-9_-]{{50,}}"
               rf"|{_START}SG\.[A-Za-z0-9_-]{{22}}\.[A-Za-z0-9_-]{{43}}{_END}"),
    # A signed JSON Web Token: a bearer credential for as long as it lives.
    re.compile(rf"{_START}eyJ[A-Za-z0-9_-]{{8,}}\.eyJ[A-Za-z0-9_-]{{8,}}\.[A-Za-z0-9_-]{{16,}}"),
    # What an Authorization header carries, whatever its shape (curl -H, a copied request, a .http file).
    # (a value with a digit in it: ``authorization: Optional[str]`` in code is no header; nor is a call, as in
    # ``authorization = base64.b64encode(...)``).
    re.compile(r"(?i)(\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?(?:(?:bearer|basic|token|bot|digest)\s+)?)"
               r"(?=[A-Za-z._~+/=-]*\d)[A-Za-z0-9._~+/=-]{12,}+(?!\()"),
    # The password in a URL (https://deploy:PASSWORD@host), the user kept; not a placeholder an example shows
    # (password, ***, $VAR, {var}, <var>, %(var)s).
    # (a scheme is at most 32 characters: from every word of a long dotted or dashed run, an unbounded one would
    # read the rest of the run each time).
    re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]{0,31}://[^\s:/?#@\[\]]*:)(?!(?:pass(?:word)?|secret|changeme|x+|\*+)@)"
               r"(?![$<{%*])[^\s/?#\[\]]+(?=@[^\s@]*[\w\]])"),
    # An AWS secret access key is 40 characters of base64 with nothing to tell it by but its name nearby.
    # (a config line, an environment variable, the CLI's JSON: aws_secret_access_key = …, "SecretAccessKey": "…").
    re.compile(r"(?i)((?:aws_?secret_?access_?key|secret_?access_?key|aws_?secret_?key)[\"']?\s*[=:]\s*[\"']?)"
               r"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])"),
)


# Text a secret may hide in, encoded: a run of base64 (a docker config's "auth", a Kubernetes Secret's data) or of
# percent-encoding (a token in a copied URL). Each is decoded and masked whole when a secret is inside.
_BASE64_RUN = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{24,}={0,2}(?![A-Za-z0-9+/=_-])")
# Each starts where a run of its characters starts: a search from every character of a long run without a
# %XX in it would read the rest of the run each time (minutes on a file of hex or of zero bytes in base64).
_PERCENT_RUN = re.compile(r"(?<![A-Za-z0-9._~+%-])[A-Za-z0-9._~+%-]*%[0-9A-Fa-f]{2}[A-Za-z0-9._~+%-]*")


def mask_pasted_secrets(text: str) -> tuple[str, int]:
    """``text`` with every secret of a common format masked, plain or encoded in base64 or percent-encoding, and
    how many were."""
    text, count = _mask_shapes(text)
    encoded = 0

    def masked_when_hiding_one(match: re.Match[str], decode: Callable[[str], str]) -> str:
        nonlocal encoded
        if not _mask_shapes(decode(match.group()))[1]:
            return match.group()
        encoded += 1
        return MASK

    if "%" in text:
        text = _PERCENT_RUN.sub(lambda m: masked_when_hiding_one(m, unquote), text)
    text = _BASE64_RUN.sub(lambda m: masked_when_hiding_one(m, _base64_decoded), text)
    return text, count + encoded


def _base64_decoded(run: str) -> str:
    """The text ``run`` encodes in base64 (standard or URL-safe), or "" when it is not base64 of text."""
    try:
        data = base64.b64decode(run.replace("-", "+").replace("_", "/") + "=" * (-len(run.rstrip("=")) % 4))
        return data.decode("utf-8")
    except (binascii.Error, ValueError):
        return ""


def mask_secrets(text: str, known: Redactor) -> tuple[str, int]:
    """``text`` with the secrets ``known`` holds (the bot's own, in every form) and those of a common format
    masked, and how many were: for what people send, before it reaches a prompt, the store or a log."""
    before = text.count(MASK)
    text = known(text)
    own = text.count(MASK) - before
    text, pasted = mask_pasted_secrets(text)
    return text, own + pasted


def _mask_shapes(text: str) -> tuple[str, int]:
    count = 0
    for pattern in PASTED_SECRETS:
        text, found = pattern.subn(lambda m: (m.group(1) if m.re.groups else "") + MASK, text)
        count += found
    return text, count


_HTTP_USERINFO = re.compile(r"(?P<scheme>\bhttps?://)(?P<userinfo>[^\s/?#@\[\]]+)@", re.IGNORECASE)
# What code or a script writes where the credentials go: ${TOKEN}, $TOKEN, {token}, {{ token }}, <token>, %(token)s.
_PLACEHOLDER = re.compile(r"\$\{[^{}]*\}|\$\w+|\{\{?[^{}]*\}?\}|<[^<>]*>|%\(\w+\)s")


def mask_url_credentials(text: str) -> tuple[str, int]:
    """``text`` with what stands before ``@`` in each http(s) URL masked (``https://user:TOKEN@host``, or a token as
    the user name), and how many were: a person pasting a repository's URL from a git remote pastes its token.
    Placeholders are kept (``https://{user}:{token}@host`` in code, ``https://${TOKEN}@host`` in a script)."""
    count = 0

    def masked(match: re.Match[str]) -> str:
        nonlocal count
        if _PLACEHOLDER.fullmatch(match["userinfo"].rpartition(":")[2]):  # the password, or a token as the user
            return match.group()
        count += 1
        return f"{match['scheme']}{MASK}@"

    return _HTTP_USERINFO.sub(masked, text), count


class Redactor:
    """``patterns=True`` also masks secrets by their shape (``mask_pasted_secrets``): for log lines, where
    a pasted secret could arrive in a message the bot logs."""

    def __init__(self, secrets: Iterable[str], *, urls: bool = False, patterns: bool = False) -> None:
        # Longest first, so a secret that contains another is masked whole.
        forms = {form for s in secrets if len(s) >= MIN_SECRET_LENGTH for form in encoded_forms(s)}
        self._secrets = sorted(forms, key=len, reverse=True)
        self._urls, self._patterns = urls, patterns

    def with_urls(self) -> Redactor:
        """The same secrets, and credentials written into any URL masked too: for what the bot says itself."""
        wider = Redactor(())
        wider._secrets, wider._urls, wider._patterns = self._secrets, True, self._patterns
        return wider

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        if self._patterns:
            text = mask_pasted_secrets(text)[0]
        return _without_url_credentials(text) if self._urls else text


MIN_ENCODED_LENGTH = 12  # a shorter piece of an encoding could be part of any base64
# A key's first and last lines are the same in every key of its kind (and in code that reads one): no secret.
_ARMOR = re.compile(r"-----(?:BEGIN|END) [A-Z0-9 ]+-----")


def encoded_forms(secret: str) -> set[str]:
    """``secret`` as it may be written where it travels: as is, percent-encoded (a URL, a form), JSON-escaped (a
    request body, a JSON log line), each long line of a secret of several lines (a private key shown as it streams
    or quoted in part), and in base64 (a Basic header, a docker config): the part of its encoding that is the
    same wherever it starts in the encoded bytes, standard and URL-safe."""
    forms = {secret, quote(secret, safe=""), quote_plus(secret), json.dumps(secret, ensure_ascii=False)[1:-1]}
    forms.update(line.strip() for line in secret.splitlines()
                 if len(line.strip()) >= 2 * MIN_ENCODED_LENGTH and not _ARMOR.fullmatch(line.strip()))
    if len(secret) >= MIN_ENCODED_LENGTH:
        data = secret.encode("utf-8", "surrogateescape")
        for offset in range(3):
            start, end = -(-8 * offset // 6), 8 * (offset + len(data)) // 6  # characters made of its bits alone
            for encode in (base64.b64encode, base64.urlsafe_b64encode):
                core = encode(bytes(offset) + data).decode()[start:end]
                if len(core) >= MIN_ENCODED_LENGTH:
                    forms.add(core)
    return {form for form in forms if len(form) >= MIN_SECRET_LENGTH}


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
    found += [value for name, value in query if is_secret_parameter(name)]
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
