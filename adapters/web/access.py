"""Who may use the web chat, and the headers every answer carries.

Three ways in, from the config:

- loopback only (the default): no sign-in; the person at this machine is ``local``. The ``Host`` header must
  name the loopback address, so a web page elsewhere cannot reach the bot through a name it rebinds to
  127.0.0.1;
- ``CODEGEN_WEB_TOKEN``: every request shows the token, as ``Authorization: Bearer TOKEN`` or as the session
  cookie that signing in on ``/login`` sets (a value derived from the token, never the token itself); both are
  compared in constant time;
- ``user_header``: a sign-in proxy in front (oauth2-proxy's convention) names the person in that header;
  it is believed only from ``proxy_addresses``, and each person sees only their own conversations.

A token and a proxy header may be combined. Binding anywhere but loopback without either is refused at start
(``check_binding``). Requests that change something must come from the page's own origin.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass
from http.cookies import SimpleCookie
from typing import Any

from bot.config.sections import ConfigError, WebConfig

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SESSION_COOKIE = "codegen_web_session"
LOCAL_USER = "local"  # loopback only: the person at this machine
TOKEN_USER = "token"  # the access token alone names no one: everyone holding it shares one list
MAX_USER_CHARS = 200
CROSS_ORIGIN = "Changes come from this bot's own page only."

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
]


def is_loopback(host: str) -> bool:
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_binding(settings: WebConfig, token: str) -> None:
    """Refuse to serve beyond this machine with no way to tell who is asking."""
    if is_loopback(settings.host) or token or settings.user_header:
        return
    raise ConfigError(
        f"web.host is {settings.host!r}, which other machines can reach, but no one would have to sign in: "
        "export CODEGEN_WEB_TOKEN (e.g. from `openssl rand -hex 32`), or set web.user_header behind a sign-in "
        "proxy, or keep web.host = \"127.0.0.1\""
    )


@dataclass(frozen=True)
class Verdict:
    user: str | None
    status: int = 200
    why_not: str = ""


@dataclass(frozen=True)
class Gate:
    """The access rules of one server."""

    token: str
    user_header: str
    proxy_addresses: frozenset[str]
    local_hosts: frozenset[str]  # loopback only: the Host values this server answers to

    @classmethod
    def of(cls, settings: WebConfig, token: str) -> Gate:
        port = settings.port
        local = {f"{name}:{port}" for name in ("127.0.0.1", "localhost", "[::1]")}
        if port == 80:
            local |= {"127.0.0.1", "localhost", "[::1]"}
        open_to_loopback = not token and not settings.user_header
        return cls(token, settings.user_header.lower(), frozenset(settings.proxy_addresses),
                   frozenset(local) if open_to_loopback else frozenset())

    @property
    def session(self) -> str:
        """The session cookie's value: derived from the token, so the cookie never carries the token."""
        return hmac.new(self.token.encode(), b"codegen-chat web session", hashlib.sha256).hexdigest()

    def token_matches(self, offered: str) -> bool:
        return hmac.compare_digest(offered.encode(), self.token.encode())

    def who(self, headers: dict[str, str], client: str) -> Verdict:
        """The person asking, or the refusal (a status and a sentence)."""
        if self.local_hosts and headers.get("host", "") not in self.local_hosts:
            return Verdict(None, 403, "This bot answers on its loopback address only; open it at http://127.0.0.1.")
        if self.token and not self._shows_token(headers):
            return Verdict(None, 401, "Sign in with the access token first.")
        if self.user_header:
            user = headers.get(self.user_header, "").strip()
            if client not in self.proxy_addresses or not user or len(user) > MAX_USER_CHARS:
                return Verdict(None, 401, "Sign in through the proxy in front of this bot.")
            return Verdict(user)
        return Verdict(TOKEN_USER if self.token else LOCAL_USER)

    def _shows_token(self, headers: dict[str, str]) -> bool:
        bearer = headers.get("authorization", "")
        if bearer.lower().startswith("bearer "):
            return self.token_matches(bearer[7:].strip())
        cookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except Exception:  # a malformed Cookie header is no session
            return False
        morsel = cookie.get(SESSION_COOKIE)
        return morsel is not None and hmac.compare_digest(morsel.value.encode(), self.session.encode())


class Guard:
    """ASGI middleware: security headers on every answer; the person asking in ``scope["state"]["user"]``, or
    401 (JSON for the API, the sign-in page for a browser); 403 for a change asked from another origin."""

    def __init__(self, app: ASGIApp, gate: Gate, public: Iterable[str], refused_page: Callable[[str], bytes]) -> None:
        self._app, self._gate = app, gate
        self._public = tuple(public)  # path prefixes anyone may fetch: the sign-in page, assets, health probes
        self._refused_page = refused_page

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        send = _with_headers(send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        path = scope["path"]
        if scope["method"] not in ("GET", "HEAD") and not _same_origin(headers, scope):
            await _answer(send, 403, "application/json", json.dumps({"error": CROSS_ORIGIN}).encode())
            return
        verdict = self._gate.who(headers, (scope.get("client") or ("", 0))[0])
        if verdict.user is None and not path.startswith(self._public):
            if path.startswith("/api/"):
                await _answer(send, verdict.status, "application/json", json.dumps({"error": verdict.why_not}).encode())
            else:
                await _answer(send, verdict.status, "text/html; charset=utf-8", self._refused_page(verdict.why_not))
            return
        scope.setdefault("state", {})["user"] = verdict.user or ""
        await self._app(scope, receive, send)


def _same_origin(headers: dict[str, str], scope: Scope) -> bool:
    origin = headers.get("origin")
    if origin is None:  # not a browser's cross-site request (they always send Origin on a POST)
        return True
    scheme = headers.get("x-forwarded-proto") or scope.get("scheme", "http")
    return origin in (f"{scheme}://{headers.get('host', '')}", f"{scope.get('scheme', 'http')}://{headers.get('host', '')}")


def _with_headers(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
        await send(message)
    return sending


async def _answer(send: Send, status: int, content_type: str, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", content_type.encode()), (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": body})
