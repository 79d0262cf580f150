"""Loopback ports for the fakes and the bots under test: a fake service's aiohttp app started on a free
port, a free port to give a bot, and waiting until a bot listens on its own."""

from __future__ import annotations

import asyncio
import socket

from aiohttp import web


async def start(app: web.Application) -> tuple[web.AppRunner, int]:
    """The running app's runner (``cleanup()`` stops it) and the port it listens on."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def listening(port: int, task: asyncio.Task[None], tries: int = 500) -> None:
    """Return once something accepts connections on ``port``, or once ``task`` (the server) has ended."""
    for _ in range(tries):
        if task.done():
            return
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.02)
            continue
        writer.close()
        return
