"""Who may use the web chat, and the headers every answer carries.

Three ways in, from the config:

- loopback only (the default): no sign-in; the person at this machine is ``local``. The ``Host`` header must
  name the loopback address, so a web page elsewhere cannot reach the bot through a name it rebinds to
  127.0.0.1;
- ``CODEGEN_WEB_TOKEN``: every request shows the token, as ``Authorization: Bearer TOKEN`` or as the session
  cookie that signing in on ``/login`` sets (when it was set, and a signature of that under the token, never the
  token itself: it lasts ``SESSION_S``, and signing out on ``/logout`` forgets it); both are compared in constant
  time;
- ``user_header``: a sign-in proxy in front (oauth2-proxy's convention) names the person in that header;
  it is believed only from a connection whose own peer address is in ``proxy_addresses`` (never from an address
  a header names: the server does not rewrite the client from ``X-Forwarded-For``), the ``Host`` header must be
  one of ``allowed_hosts`` or the bot's own address (a DNS-rebinding page cannot speak through the proxy's
  trust), and each person sees only their own conversations.

A token and a proxy header may be combined. Binding anywhere but loopback without either is refused at start
(``check_binding``). Requests that change something must come from the page's own origin.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import re
import time
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
SESSION_S = 7 * 24 * 3600  # a session signed in with the token lasts a week; then the token is asked for again
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
    # No referrer to other sites; the page's own forms (sign-in) keep their Origin: with none at all, a browser
    # sends "Origin: null" on a form's post, and the sign-in would be refused as coming from elsewhere.
    (b"referrer-policy", b"same-origin"),
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


MIN_TOKEN_CHARS = 24  # shorter, a token can be guessed by whoever reaches the page: `openssl rand -hex 32` gives 64


def check_binding(settings: WebConfig, token: str) -> None:
    """Refuse to serve beyond this machine with no way to tell who is asking, or with a token easily guessed."""
    if is_loopback(settings.host):
        return
    if token and len(token) < MIN_TOKEN_CHARS and not settings.user_header:  # with the proxy, both are asked for
        raise ConfigError(
            f"web.host is {settings.host!r}, which other machines can reach, and CODEGEN_WEB_TOKEN has only "
            f"{len(token)} characters (at least {MIN_TOKEN_CHARS}): make a long random one with `openssl rand -hex 32`"
        )
    if token or settings.user_header:
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
    proxies: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]
    hosts: Hosts | None  # the Host values this server answers to; None: any (the token alone decides)
    clock: Callable[[], float] = time.time  # what a session's age is told by

    @classmethod
    def of(cls, settings: WebConfig, token: str) -> Gate:
        proxies = tuple(_unmapped(ipaddress.ip_network(a.strip("[]"), strict=False)) for a in settings.proxy_addresses)
        if settings.user_header:  # a page that rebinds its name to this machine must not speak for the proxy
            hosts: Hosts | None = Hosts.own(settings).adding(settings.allowed_hosts)
        elif not token:
            hosts = Hosts.own(settings)  # loopback only, no sign-in
        else:
            hosts = None
        return cls(token, settings.user_header.lower(), proxies, hosts)

    def new_session(self) -> str:
        """A session cookie's value: when it starts, signed under the token (the cookie never carries the token)."""
        started = str(int(self.clock()))
        return f"{started}.{self._signature(started)}"

    def session_holds(self, value: str) -> bool:
        """Whether a session cookie's value was made here, under this token, less than ``SESSION_S`` ago."""
        started, _, signature = value.partition(".")
        if not started.isascii() or not started.isdigit() or self.clock() - int(started) >= SESSION_S:
            return False
        return hmac.compare_digest(signature.encode(), self._signature(started).encode())

    def _signature(self, started: str) -> str:
        return hmac.new(self.token.encode(), f"codegen-chat web session {started}".encode(), hashlib.sha256).hexdigest()

    def token_matches(self, offered: str) -> bool:
        return hmac.compare_digest(offered.encode(), self.token.encode())

    def who(self, headers: dict[str, str], client: str) -> Verdict:
        """The person asking, or the refusal (a status and a sentence)."""
        if self.hosts is not None and not self.hosts.allow(headers.get("host", "")):
            return Verdict(None, 403, self.hosts.refusal)
        if self.token and not self._shows_token(headers):
            return Verdict(None, 401, "Sign in with the access token first.")
        if self.user_header:
            user = headers.get(self.user_header, "").strip()
            if not self.from_proxy(client) or not user or len(user) > MAX_USER_CHARS or "\n" in user:
                return Verdict(None, 401, "Sign in through the proxy in front of this bot.")
            return Verdict(user)
        return Verdict(TOKEN_USER if self.token else LOCAL_USER)

    def from_proxy(self, client: str) -> bool:
        """Whether the connection's own peer (never an address a header names) is a listed proxy."""
        try:
            peer = ipaddress.ip_address(client)
        except ValueError:
            return False
        if isinstance(peer, ipaddress.IPv6Address) and peer.ipv4_mapped is not None:
            peer = peer.ipv4_mapped  # a dual-stack socket shows an IPv4 peer as ::ffff:a.b.c.d
        return any(peer in network for network in self.proxies)

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
        return morsel is not None and self.session_holds(morsel.value)


@dataclass(frozen=True)
class Hosts:
    """The names a ``Host`` header may carry: with a port, exactly that; without one, that name on any port."""

    exact: frozenset[str]
    any_port: frozenset[str]
    refusal: str

    @classmethod
    def own(cls, settings: WebConfig) -> Hosts:
        """This server's own addresses: the loopback names, and ``web.host``, at its port (at no port for 80)."""
        names = {"127.0.0.1", "localhost", "[::1]"}
        if not is_loopback(settings.host):
            names.add(settings.host if ":" not in settings.host or settings.host.startswith("[")
                      else f"[{settings.host}]")
        exact = {f"{name}:{settings.port}".lower() for name in names}
        if settings.port == 80:
            exact |= {name.lower() for name in names}
        if settings.user_header:
            refusal = "This bot answers only at the names in web.allowed_hosts; open it through its sign-in proxy."
        else:
            refusal = "This bot answers on its loopback address only; open it at http://127.0.0.1."
        return cls(frozenset(exact), frozenset(), refusal)

    def adding(self, allowed: Iterable[str]) -> Hosts:
        allowed = [name.lower() for name in allowed]
        with_port = {name for name in allowed if re.search(r":[0-9]+$", name)}
        return Hosts(self.exact | with_port, self.any_port | (set(allowed) - with_port), self.refusal)

    def allow(self, host: str) -> bool:
        host = host.strip().lower()
        return host in self.exact or re.sub(r":[0-9]+$", "", host) in self.any_port

    def page_origin(self, host: str) -> bool:
        """A browser's Origin (its host and port) names this server's page: an entry with a port at that port, one
        without at none (the scheme's own), so another site on the same name (``chat.example.com:3000``) does not."""
        host = host.strip().lower()
        return host in self.exact or host in self.any_port


def _unmapped(network: ipaddress.IPv4Network | ipaddress.IPv6Network) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    """An IPv4-mapped IPv6 network (``::ffff:10.0.0.0/104``) as the IPv4 network it names, as peers are compared."""
    if isinstance(network, ipaddress.IPv6Network) and network.prefixlen >= 96 and \
            network.network_address in ipaddress.ip_network("::ffff:0:0/96"):
        return ipaddress.ip_network((int(network.network_address) & 0xFFFFFFFF, network.prefixlen - 96))
    return network


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
        headers = _headers(scope)
        path = scope["path"]
        if scope["method"] not in ("GET", "HEAD") and not _same_origin(headers, scope, self._gate.hosts):
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


def _headers(scope: Scope) -> dict[str, str]:
    """The request's headers by lower-case name. One sent more than once reads as all its values, a line each: that
    names no person, token, session or origin, so a request carrying the proxy's header and one of its own (a proxy
    that adds its header rather than replacing the sender's) is believed as neither. Cookie headers are the
    exception HTTP makes: several are one list of cookies (``; `` between them)."""
    headers: dict[str, str] = {}
    for key, value in scope["headers"]:
        name = key.decode("latin-1").lower()
        text = value.decode("latin-1")
        between = "; " if name == "cookie" else "\n"
        headers[name] = f"{headers[name]}{between}{text}" if name in headers else text
    return headers


def _same_origin(headers: dict[str, str], scope: Scope, names: Hosts | None) -> bool:
    origin = headers.get("origin")
    if origin is None:  # not a browser's cross-site request (they always send Origin on a POST)
        return True
    # Each proxy on the way may add its own X-Forwarded-Proto (a list, or the header again): the page's scheme is
    # one of them. Whoever sends them, only this host, as the browser says it loaded the page, is the same origin.
    forwarded = re.split(r"[,\n]", headers.get("x-forwarded-proto", ""))
    schemes = {scheme.strip().lower() for scheme in forwarded if scheme.strip()} | {scope.get("scheme", "http")}
    if origin in {f"{scheme}://{headers.get('host', '')}" for scheme in schemes}:
        return True
    # A proxy that sends its own upstream address as Host (nginx's default) leaves the public name to the browser's
    # Origin alone: a name this server answers at (web.allowed_hosts, its own addresses) is the page's own too.
    scheme, _, name = origin.partition("://")
    return names is not None and scheme in ("http", "https") and "/" not in name and names.page_origin(name)


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
