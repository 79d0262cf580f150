"""A scripted OpenAI-compatible HTTP server on loopback, for the real ``openai`` client.

Speaks ``POST /v1/chat/completions`` (plain JSON and ``stream=true`` server-sent events, usage
included) and ``GET /v1/models``. Replies are scripted per agent (the ``X-Codegen-Agent``
header); failures are injected on demand: a status with headers, a stall mid-stream, a cut.
Every request is recorded.
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from multidict import CIMultiDict

from tests.fakes import loopback

CHARS_PER_TOKEN = 4


@dataclass
class Reply:
    """One scripted answer: text to stream, or an HTTP error, or a stall after some text."""

    text: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    error_body: dict[str, Any] | None = None
    stall_after: int | None = None  # stop sending (but keep the connection) after this many chars
    chunk: int = 24  # characters per streamed delta
    usage: tuple[int, int] | None = None  # (prompt, completion) tokens to report; default: counted
    omit_usage: bool = False  # behave like a server that never reports usage


def error(status: int, message: str = "scripted failure", **headers: str) -> Reply:
    return Reply(status=status, headers={k.replace("_", "-"): v for k, v in headers.items()},
                 error_body={"error": {"message": message, "type": "scripted", "code": status}})


@dataclass
class Recorded:
    path: str
    headers: CIMultiDict[str]
    body: dict[str, Any]

    @property
    def agent(self) -> str:
        return self.headers.get("X-Codegen-Agent", "")

    @property
    def prompt_chars(self) -> int:
        return sum(len(m.get("content") or "") for m in self.body.get("messages", []))


class FakeOpenAI:
    """Use as ``async with FakeOpenAI() as server:``; point the client at ``server.base_url``."""

    def __init__(self, models: tuple[str, ...] = ("gpt-4o-mini",)) -> None:
        self.models = list(models)
        self.requests: list[Recorded] = []
        self._by_agent: dict[str, deque[Reply]] = defaultdict(deque)
        self._any: deque[Reply] = deque()
        self.responder: Callable[[Recorded], Reply] | None = None
        self._runner: web.AppRunner | None = None
        self.base_url = ""
        self.release_stalls = asyncio.Event()
        self.disconnects = 0  # clients that hung up during a stall

    def script(self, agent: str, *replies: Reply | str) -> None:
        """Queue replies for one agent, consumed in order."""
        self._by_agent[agent].extend(r if isinstance(r, Reply) else Reply(r) for r in replies)

    def script_any(self, *replies: Reply | str) -> None:
        """Queue replies for whichever request comes next, before any per-agent script."""
        self._any.extend(r if isinstance(r, Reply) else Reply(r) for r in replies)

    def calls(self, agent: str | None = None) -> list[Recorded]:
        return [r for r in self.requests if agent is None or r.agent == agent]

    async def __aenter__(self) -> FakeOpenAI:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._completions)
        app.router.add_get("/v1/models", self._models)
        self._runner, port = await loopback.start(app)
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.release_stalls.set()
        if self._runner:
            await self._runner.cleanup()

    def _next(self, recorded: Recorded) -> Reply:
        if self._any:
            return self._any.popleft()
        queue = self._by_agent.get(recorded.agent)
        if queue:
            return queue.popleft()
        if self.responder:
            return self.responder(recorded)
        return error(500, f"nothing scripted for agent {recorded.agent!r}")

    async def _models(self, request: web.Request) -> web.Response:
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in self.models]
        return web.json_response({"object": "list", "data": data})

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        recorded = Recorded(request.path, CIMultiDict(request.headers), body)
        self.requests.append(recorded)
        reply = self._next(recorded)
        if reply.status != 200:
            return web.json_response(reply.error_body or {}, status=reply.status, headers=reply.headers)
        if body.get("model") not in self.models:
            return web.json_response(
                {"error": {"message": f"The model `{body.get('model')}` does not exist", "code": "model_not_found"}},
                status=404,
            )
        usage = {
            "prompt_tokens": recorded.prompt_chars // CHARS_PER_TOKEN,
            "completion_tokens": len(reply.text) // CHARS_PER_TOKEN,
        }
        if reply.usage:
            usage = {"prompt_tokens": reply.usage[0], "completion_tokens": reply.usage[1]}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        if not body.get("stream"):
            return web.json_response(_completion(body["model"], reply.text, usage))
        return await self._stream(request, body, reply, usage)

    async def _stream(self, request: web.Request, body: dict[str, Any], reply: Reply,
                      usage: dict[str, int]) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        model, sent = body["model"], 0
        for start in range(0, len(reply.text), reply.chunk):
            if reply.stall_after is not None and sent >= reply.stall_after:
                await self._stall(request)
                return response
            piece = reply.text[start:start + reply.chunk]
            await _send(response, _chunk(model, {"content": piece}, None))
            sent += len(piece)
        await _send(response, _chunk(model, {}, "stop"))
        if (body.get("stream_options") or {}).get("include_usage") and not reply.omit_usage:
            await _send(response, {**_chunk(model, {}, None), "choices": [], "usage": usage})
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response


    async def hung_up(self, within: float = 2.0) -> int:
        """The number of clients that hung up during a stall, once one has (or ``within`` seconds pass)."""
        for _ in range(int(within / 0.02)):
            if self.disconnects:
                break
            await asyncio.sleep(0.02)
        return self.disconnects

    async def _stall(self, request: web.Request) -> None:
        """Keep the connection open and silent until released, noting if the client hangs up."""
        while not self.release_stalls.is_set():
            if request.transport is None or request.transport.is_closing():
                self.disconnects += 1
                return
            await asyncio.sleep(0.02)


async def _send(response: web.StreamResponse, payload: dict[str, Any]) -> None:
    await response.write(f"data: {json.dumps(payload)}\n\n".encode())


def _chunk(model: str, delta: dict[str, str], finish: str | None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _completion(model: str, text: str, usage: dict[str, int]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": usage,
    }
