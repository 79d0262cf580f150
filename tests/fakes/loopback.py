"""Starts a fake service's aiohttp app on a free loopback port."""

from __future__ import annotations

from aiohttp import web


async def start(app: web.Application) -> tuple[web.AppRunner, int]:
    """The running app's runner (``cleanup()`` stops it) and the port it listens on."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
