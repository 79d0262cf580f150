"""Loopback ports for the fakes and the bots under test: a fake service's aiohttp app started on a free
port, a free port to give a bot, and waiting until a bot listens on its own."""

from __future__ import annotations

import asyncio
import socket
from urllib.parse import urlsplit

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


async def answer_to_headers_alone(url: str, headers: dict[str, str]) -> str:
    """The status line a server answers a POST with when it has only the request's headers: the body announced by
    Content-Length (20 MB) is never sent, so a server that reads a body before judging the headers is still
    waiting for it (and this fails after ten seconds rather than hang)."""
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    try:
        lines = [f"POST {parts.path} HTTP/1.1", f"Host: {parts.netloc}", "Content-Type: application/json",
                 f"Content-Length: {20 * 1024 * 1024}", *(f"{name}: {value}" for name, value in headers.items())]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
        await writer.drain()
        return (await asyncio.wait_for(reader.readline(), 10)).decode().strip()
    finally:
        writer.close()
