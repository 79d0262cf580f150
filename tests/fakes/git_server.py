"""A real git smart-HTTP server on loopback: git's own ``http-backend`` behind a small aiohttp server that
checks the token the way GitHub does (HTTP Basic, any user name, the token as the password) and records
every request's headers, so a test can see the token arrived as a header and nowhere else.

Repositories live under ``root`` as ``OWNER/NAME.git`` bare repositories, made by ``tests.repos``; they allow
partial clones (``uploadpack.allowFilter``) and pushes (``http.receivepack``), as GitHub does.
"""

from __future__ import annotations

import asyncio
import base64
import os
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web

from tests.fakes import loopback


@dataclass
class GitRequest:
    method: str
    path: str
    query: str
    headers: dict[str, str]


@dataclass
class FakeGitHost:
    root: Path
    token: str = "ghp_git_token_0123456789"
    requests: list[GitRequest] = field(default_factory=list)
    also: set[str] = field(default_factory=set)  # more tokens it accepts (a GitHub fake's installation tokens)
    _runner: web.AppRunner | None = None
    _port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    async def start(self) -> FakeGitHost:
        app = web.Application(client_max_size=1024**3)
        app.router.add_route("*", "/{path:.*}", self._serve)
        self._runner, self._port = await loopback.start(app)
        return self

    async def close(self) -> None:
        if self._runner:
            await self._runner.cleanup()

    async def __aenter__(self) -> FakeGitHost:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _authorized(self, request: web.Request) -> bool:
        header = request.headers.get("Authorization", "")
        if not header.startswith("Basic "):
            return False
        _, _, password = base64.b64decode(header[6:]).decode().partition(":")
        return password == self.token or password in self.also

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        self.requests.append(GitRequest(request.method, request.path, request.query_string, dict(request.headers)))
        if not self._authorized(request):
            return web.Response(status=401, headers={"WWW-Authenticate": 'Basic realm="GitHub"'})
        body = await request.read()
        env = {
            "PATH": os.environ["PATH"], "GIT_PROJECT_ROOT": str(self.root), "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": request.path, "REQUEST_METHOD": request.method, "QUERY_STRING": request.query_string,
            "CONTENT_TYPE": request.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(body)),
            "REMOTE_USER": "x-access-token", "REMOTE_ADDR": "127.0.0.1", "GIT_CONFIG_NOSYSTEM": "1",
            "HOME": str(self.root),
        }
        # A gzip-encoded body (git compresses large requests) arrives decoded: aiohttp undoes the encoding.
        if "Git-Protocol" in request.headers:
            env["GIT_PROTOCOL"] = request.headers["Git-Protocol"]
        process = await asyncio.create_subprocess_exec(
            "git", "http-backend", env=env, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE)
        out, _err = await process.communicate(body)
        head, _, payload = out.partition(b"\r\n\r\n")
        status, headers = 200, {}
        for line in head.decode().split("\r\n"):
            name, _, value = line.partition(": ")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers[name] = value
        return web.Response(status=status, body=payload, headers=headers)
