"""Serving the web chat with uvicorn, and what ``codegen-chat doctor`` says about it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Iterator, Sequence

import uvicorn
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from adapters.web.access import MIN_TOKEN_CHARS, Gate, check_binding, is_loopback
from adapters.web.hub import Hub
from adapters.web.platform import PLATFORM, platform
from adapters.web.routes import STATIC, WebChat, build_app
from bot.config.doctor_types import CheckResult
from bot.config.sections import Config, ConfigError, Secrets, WebConfig
from bot.health.checks import Health
from bot.runs.service import Service
from bot.safety.redact import Redactor

log = logging.getLogger(__name__)

SHUTDOWN_GRACE_S = 10.0  # how long a stopping bot waits for its pages to say their runs stopped
VENDORED = ("vendor/marked.umd.js", "vendor/purify.min.js", "vendor/highlight.min.js")


async def serve(service: Service, config: Config, secrets: Secrets, public_routes: Sequence[BaseRoute] = ()) -> None:
    """Serve the web chat until cancelled; then stop its runs, say so on its pages, and close."""
    settings, token = config.web, secrets.codegen_web_token
    check_binding(settings, token)
    listening = bind(settings)
    web, redact = platform(settings), Redactor(secrets.values())
    hub = Hub(service.history, web, redact, busy=lambda key: service.active_run(PLATFORM, key) is not None,
              languages=service.languages, fanout=service.fanout)
    chat = WebChat(service, hub, web, config.input, Gate.of(settings, token), redact)
    if service.health is not None and service.health.carrier == PLATFORM:
        public_routes = [*public_routes, *health_routes(service.health)]
    # proxy_headers off: the gate judges the connection's real peer; X-Forwarded-For is anyone's to write.
    server = _Server(uvicorn.Config(build_app(chat, public_routes), lifespan="off", log_config=None, access_log=False,
                                    timeout_graceful_shutdown=5, proxy_headers=False))
    serving = asyncio.create_task(server.serve(sockets=[listening]), name="web-server")
    log.warning("web chat: open %s (%s)", address(settings), access_mode(settings, token))
    # Its pages draw runs again from the store, an interrupted run as such, so there is no thread to tell.
    await service.online(web, None, connected=lambda: not serving.done())
    try:
        await asyncio.shield(serving)
    finally:
        await service.stop_all(PLATFORM, SHUTDOWN_GRACE_S)
        await hub.close()  # pages' streams end; a page reconnects to whoever serves next
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await serving
        listening.close()


def health_routes(health: Health) -> list[Route]:
    """``GET /healthz`` and ``GET /readyz`` on the web chat's server (one port to expose), open without
    signing in as probes are; what they say is ``bot.health.checks``'s, as on every server that carries them.
    What is wrong with a part is told only to someone the chat itself would let in (the gate's verdict): a
    probe from elsewhere learns whether the bot is ready, not where its database or Docker engine is."""

    async def alive(_: Request) -> JSONResponse:
        return JSONResponse({"alive": True})

    async def ready(request: Request) -> JSONResponse:
        readiness = await health.readiness()
        signed_in = bool(getattr(request.state, "user", ""))
        return JSONResponse(readiness.as_json(detailed=signed_in), status_code=200 if readiness.ready else 503)

    return [Route("/healthz", alive), Route("/readyz", ready)]


def bind(settings: WebConfig) -> socket.socket:
    """The listening socket, or a ``ConfigError`` naming the address (taken, or not this machine's)."""
    host = settings.host.strip("[]")
    try:
        family = socket.getaddrinfo(host, settings.port, type=socket.SOCK_STREAM)[0][0]
        return socket.create_server((host, settings.port), family=family, backlog=512)
    except OSError as error:
        raise ConfigError(f"web: cannot listen on {address(settings)} ({error.strerror or error}): is another program "
                          "(or another bot) using it? Set web.port, or stop the other one") from None


def address(settings: WebConfig) -> str:
    host = settings.host if ":" not in settings.host or settings.host.startswith("[") else f"[{settings.host}]"
    return f"http://{host}:{settings.port}"


def access_mode(settings: WebConfig, token: str) -> str:
    ways = []
    if token:
        ways.append("the access token CODEGEN_WEB_TOKEN")
    if settings.user_header:
        ways.append(f"the sign-in proxy's {settings.user_header} header from {', '.join(settings.proxy_addresses)}")
    if ways:
        return "signed in with " + " and ".join(ways)
    return "this machine only, no sign-in" if is_loopback(settings.host) else "refused: nobody would sign in"


async def doctor_checks(config: Config, secrets: Secrets) -> list[CheckResult]:
    settings, token = config.web, secrets.codegen_web_token
    how = "served by `codegen-chat serve` too" if settings.enabled else "`codegen-chat web` serves it"
    results = [CheckResult("web chat", True, f"{address(settings)}, {access_mode(settings, token)} ({how})")]
    try:
        check_binding(settings, token)
    except ConfigError as error:
        results.append(CheckResult("web chat access", False, str(error), required=settings.enabled))
    if settings.user_header and not settings.allowed_hosts:
        results.append(CheckResult("web chat hosts", False, "web.allowed_hosts is empty: behind the sign-in proxy, "
                                   f"only requests naming {address(settings)} or a loopback name are served",
                                   "list the names people open the chat at, e.g. allowed_hosts = "
                                   "[\"chat.example.com\"]", required=False))
    if token and len(token) < MIN_TOKEN_CHARS:
        results.append(CheckResult("web chat token", False, f"CODEGEN_WEB_TOKEN has {len(token)} characters",
                                   "use a long random one: `openssl rand -hex 32`", required=False))
    missing = [name for name in ("index.html", "app.js", "app.css", *VENDORED) if not (STATIC / name).is_file()]
    if missing:
        results.append(CheckResult("web chat page", False, f"missing from the install: {', '.join(missing)}",
                                   "reinstall the package (pip install .)"))
    results.append(await asyncio.to_thread(_port_check, settings))
    return results


def _port_check(settings: WebConfig) -> CheckResult:
    try:
        bind(settings).close()
    except ConfigError:
        return CheckResult("web chat port", False, f"{address(settings)} is in use (a running bot, or another program)",
                           "stop it, or set web.port", required=False)
    return CheckResult("web chat port", True, f"{address(settings)} is free")


class _Server(uvicorn.Server):
    """uvicorn inside the bot's own event loop: the bot's entry point owns the process's signals."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield
