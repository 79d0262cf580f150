"""``/healthz`` and ``/readyz`` over HTTP (aiohttp): on any aiohttp application (Slack's HTTP server in
HTTP mode, the pull requests' webhook server), or on a small server of their own. What they report is
``bot.health.checks``'s; what is wrong with a part is told only to a probe from this machine (``codegen-chat
health``, a container's HEALTHCHECK), since these servers face Slack, GitHub or a cluster's network."""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Mapping

from aiohttp import web

from bot.config.sections import ConfigError
from bot.health.checks import Health

log = logging.getLogger(__name__)


def health_routes(health: Health) -> list[web.RouteDef]:
    """``GET /healthz`` and ``GET /readyz``, to add to any aiohttp application."""

    async def alive(_: web.Request) -> web.Response:
        return web.json_response({"alive": True})

    async def ready(request: web.Request) -> web.Response:
        readiness = await health.readiness()
        detailed = from_this_machine(request.remote) and not forwarded(request.headers)
        return web.json_response(readiness.as_json(detailed=detailed), status=200 if readiness.ready else 503)

    return [web.get("/healthz", alive), web.get("/readyz", ready)]


def from_this_machine(peer: str | None) -> bool:
    """Whether a connection's own peer address (never one a header names) is a loopback address."""
    try:
        address = ipaddress.ip_address(peer or "")
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


FORWARDING_HEADERS = ("forwarded", "x-forwarded-for", "x-real-ip", "x-forwarded-host")


def forwarded(headers: Mapping[str, str]) -> bool:
    """Whether a proxy passed the request on (what proxies add): a proxy on this machine makes every probe from
    elsewhere arrive from loopback, so such a request is not taken for one from this machine."""
    return any(name in headers for name in FORWARDING_HEADERS)


async def start_health_server(health: Health, host: str, port: int) -> web.AppRunner:
    """The endpoints on a small server of their own; ``cleanup()`` the returned runner to stop it."""
    app = web.Application()
    app.add_routes(health_routes(health))
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
    except OSError as error:
        await runner.cleanup()
        raise ConfigError(f"runtime.health_port: cannot listen on {host}:{port} ({error.strerror or error}): "
                          "pick a free port, or 0 for no health server of its own") from None
    log.info("health endpoints on http://%s:%d/healthz and /readyz", host, port)
    return runner
