"""HTTP mode: Slack posts events and button clicks to a real aiohttp server. Each request is checked
(``adapters.slack.requests``: its signature's headers before its body is read, the signature itself, then UTF-8,
JSON and shape) before bolt reads it; a bad one is answered 401 or 400 with one sentence, never a traceback."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest

from adapters.slack.requests import header_refusal, refusal
from bot.config.sections import SlackConfig
from bot.health.checks import Health
from bot.health.http import health_routes

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1024 * 1024  # Slack's event payloads are far smaller


def events_app(app: AsyncApp, path: str, signing_secret: str, health: Health | None = None) -> web.Application:
    """An aiohttp application that hands ``POST path`` to bolt (events, interactivity, url_verification),
    and serves the bot's ``/healthz`` and ``/readyz`` (one port to expose)."""

    async def dispatch(request: web.Request) -> web.Response:
        refused = header_refusal(request.headers, signing_secret)
        body = b"" if refused else await request.read()
        refused = refused or refusal(body, request.headers, signing_secret)
        if refused is not None:
            log.warning("slack: refused a request from %s: %s", request.remote, refused.reason)
            return web.Response(status=refused.status, text=refused.reason.capitalize() + ".")
        bolt_request = AsyncBoltRequest(body=body.decode(), query=request.query_string,
                                        headers=request.headers)  # type: ignore[arg-type]
        return await to_aiohttp_response(await app.async_dispatch(bolt_request))

    async def alive(_: web.Request) -> web.Response:
        return web.Response(text="ok")

    web_app = web.Application(client_max_size=MAX_BODY_BYTES)
    web_app.router.add_post(path, dispatch)
    if health is not None:
        web_app.add_routes(health_routes(health))
    else:
        web_app.router.add_get("/healthz", alive)
    return web_app


async def serve_http(app: AsyncApp, settings: SlackConfig, signing_secret: str, health: Health | None = None,
                     listening: Callable[[], Awaitable[None]] | None = None) -> None:
    """Serve until cancelled; ``listening`` is called once the port takes requests."""
    runner = web.AppRunner(events_app(app, settings.http_path, signing_secret, health), access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, settings.http_host, settings.http_port).start()
        if listening is not None:
            await listening()
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
