"""A scripted OpenAI-compatible HTTP server on loopback, for the real ``openai`` client.

Speaks ``POST /v1/chat/completions`` (plain JSON and ``stream=true`` server-sent events, usage
included) and ``GET /v1/models``. Replies are scripted per agent (the ``X-Codegen-Agent``
header); failures are injected on demand: a status with headers, a stall mid-stream (silent, or
with SSE keep-alive comments as busy servers send), a cut, ``finish_reason: length``, a reply that
never ends, a raw body (an HTML page, invalid events), a plain JSON answer to a streamed request.

``pace`` makes it a slow model: ``(seconds before the first token, tokens per second)`` for every
streamed reply, as a busy or modest server answers (the benchmarks' slow model).

``context`` makes it a server with a context window: a prompt (counted at ``CHARS_PER_TOKEN``) plus
``max_tokens`` that does not fit is refused the way ``overflow`` says: "openai" (HTTP 400 with the
numbers) or "llama-cpp-python" (HTTP 200 and an empty stream; HTTP 400 with numbers when not
streamed). ``advertise`` puts the window in ``/v1/models`` (``context_length``) or ``/props``.
Every request is recorded.
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict, deque
from collections.abc import Callable, Iterator
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
    pause_after: int | None = None  # pause after this many chars until ``resume`` is set, then send the rest
    chunk: int = 24  # characters per streamed delta
    usage: tuple[int, int] | None = None  # (prompt, completion) tokens to report; default: counted
    omit_usage: bool = False  # behave like a server that never reports usage
    keepalive_s: float | None = None  # during a stall, send an SSE comment this often (a busy server's ping)
    finish: str = "stop"  # the finish_reason of the last chunk ("length": cut at max_tokens)
    endless: bool = False  # after the text, keep streaming it again until the client hangs up
    raw: bytes | None = None  # send exactly this body (with ``content_type``) instead of a completion
    content_type: str = "text/event-stream"
    ignore_stream: bool = False  # answer a streamed request with one plain JSON completion


def error(status: int, message: str = "scripted failure", **headers: str) -> Reply:
    return Reply(status=status, headers={k.replace("_", "-"): v for k, v in headers.items()},
                 error_body={"error": {"message": message, "type": "scripted", "code": status}})


@dataclass
class Recorded:
    path: str
    headers: CIMultiDict[str]
    body: dict[str, Any]
    peer: object = None  # the client's address: one for every request a kept-alive connection carried

    @property
    def agent(self) -> str:
        return self.headers.get("X-Codegen-Agent", "")

    @property
    def prompt_chars(self) -> int:
        return sum(len(m.get("content") or "") for m in self.body.get("messages", []))


class FakeOpenAI:
    """Use as ``async with FakeOpenAI() as server:``; point the client at ``server.base_url``."""

    def __init__(self, models: tuple[str, ...] = ("gpt-4o-mini",), context: int | None = None,
                 overflow: str = "openai", advertise: str = "", pace: tuple[float, float] | None = None,
                 one_at_a_time: bool = False) -> None:
        self.models = list(models)
        self.pace = pace
        # As llama-cpp-python's server (interrupt_requests): a request arriving while a reply streams ends
        # that reply at once, with [DONE] and no finish_reason.
        self.one_at_a_time = one_at_a_time
        self.dropped = 0  # replies ended so
        self.streaming = 0  # replies streaming now
        self.overlapped_after_drop = 0  # replies that began while another streamed, after a drop
        self._latest = 0
        self.context, self.overflow, self.advertise = context, overflow, advertise
        self.requests: list[Recorded] = []
        self._by_agent: dict[str, deque[Reply]] = defaultdict(deque)
        self._any: deque[Reply] = deque()
        self.responder: Callable[[Recorded], Reply] | None = None
        self._runner: web.AppRunner | None = None
        self.base_url = ""
        self.release_stalls = asyncio.Event()
        self.resume = asyncio.Event()  # lets replies paused by ``pause_after`` go on
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
        app.router.add_get("/props", self._props)
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
        extra = {"context_length": self.context} if self.advertise == "models" else {}
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake", **extra} for m in self.models]
        return web.json_response({"object": "list", "data": data})

    async def _props(self, request: web.Request) -> web.Response:
        if self.advertise != "props":
            return web.json_response({"detail": "Not Found"}, status=404)
        return web.json_response({"default_generation_settings": {"n_ctx": self.context}, "total_slots": 1})

    def _overflow(self, body: dict[str, Any], prompt_tokens: int) -> web.StreamResponse | None:
        """The refusal of a prompt that does not fit ``context``, or None when it fits."""
        wanted = int(body.get("max_tokens") or 0)
        if self.context is None or prompt_tokens + wanted <= self.context:
            return None
        if body.get("stream") and self.overflow == "llama-cpp-python":
            return web.Response(body=b"", content_type="text/event-stream")
        message = (f"This model's maximum context length is {self.context} tokens. However, you requested "
                   f"{prompt_tokens + wanted} tokens ({prompt_tokens} in the messages, {wanted} in the completion). "
                   "Please reduce the length of the messages or completion.")
        return web.json_response({"error": {"message": message, "type": "invalid_request_error",
                                            "code": "context_length_exceeded"}}, status=400)

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        peer = request.transport.get_extra_info("peername") if request.transport else None
        recorded = Recorded(request.path, CIMultiDict(request.headers), body, peer)
        self.requests.append(recorded)
        refused = self._overflow(body, recorded.prompt_chars // CHARS_PER_TOKEN)
        if refused is not None:  # before the script: the reply waits for a request that fits
            return refused
        reply = self._next(recorded)
        if reply.status != 200:
            return web.json_response(reply.error_body or {}, status=reply.status, headers=reply.headers)
        if body.get("model") not in self.models:
            return web.json_response(
                {"error": {"message": f"The model `{body.get('model')}` does not exist", "code": "model_not_found"}},
                status=404,
            )
        if reply.raw is not None:
            return web.Response(body=reply.raw, headers={"Content-Type": reply.content_type})
        usage = {
            "prompt_tokens": recorded.prompt_chars // CHARS_PER_TOKEN,
            "completion_tokens": len(reply.text) // CHARS_PER_TOKEN,
        }
        if reply.usage:
            usage = {"prompt_tokens": reply.usage[0], "completion_tokens": reply.usage[1]}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        if not body.get("stream") or reply.ignore_stream:
            return web.json_response(_completion(body["model"], reply.text, usage, reply.finish))
        return await self._stream(request, body, reply, usage)

    async def _stream(self, request: web.Request, body: dict[str, Any], reply: Reply,
                      usage: dict[str, int]) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        self._latest += 1
        mine = self._latest
        if self.streaming and self.dropped:
            self.overlapped_after_drop += 1
        self.streaming += 1
        try:
            return await self._stream_reply(request, response, body, reply, usage, mine)
        finally:
            self.streaming -= 1

    async def _stream_reply(self, request: web.Request, response: web.StreamResponse, body: dict[str, Any],
                            reply: Reply, usage: dict[str, int], mine: int) -> web.StreamResponse:
        model, sent, paused = body["model"], 0, False
        await _send(response, _chunk(model, {"role": "assistant"}, None))  # as real servers open a stream
        first_token_s, tokens_per_s = self.pace or (0.0, 0.0)
        await asyncio.sleep(first_token_s)
        for piece in _pieces(reply):
            if self.one_at_a_time and self._latest != mine:  # another request came: this reply ends here
                self.dropped += 1
                await response.write(b"data: [DONE]\n\n")
                await response.write_eof()
                return response
            if reply.stall_after is not None and sent >= reply.stall_after:
                await self._stall(request, response, reply.keepalive_s)
                return response
            if reply.pause_after is not None and sent >= reply.pause_after and not paused:
                paused = True
                if not await self._pause(request):
                    return response
            try:
                if request.transport is None or request.transport.is_closing():
                    raise ConnectionResetError
                await _send(response, _chunk(model, {"content": piece}, None))
                if tokens_per_s:
                    await asyncio.sleep(len(piece) / CHARS_PER_TOKEN / tokens_per_s)
            except ConnectionError:  # the client hung up (as it should on a reply that never ends)
                self.disconnects += 1
                return response
            sent += len(piece)
        await _send(response, _chunk(model, {}, reply.finish))
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

    async def _pause(self, request: web.Request) -> bool:
        """Wait for ``resume``; False when the client hung up meanwhile."""
        while not self.resume.is_set():
            if request.transport is None or request.transport.is_closing():
                self.disconnects += 1
                return False
            await asyncio.sleep(0.02)
        return True

    async def _stall(self, request: web.Request, response: web.StreamResponse, keepalive_s: float | None) -> None:
        """Keep the connection open (silent, or sending only keep-alive comments) until released, noting if
        the client hangs up."""
        loop = asyncio.get_running_loop()
        next_ping = loop.time() + (keepalive_s or 0)
        while not self.release_stalls.is_set():
            if request.transport is None or request.transport.is_closing():
                self.disconnects += 1
                return
            if keepalive_s and loop.time() >= next_ping:
                await response.write(b": ping\n\n")
                next_ping = loop.time() + keepalive_s
            await asyncio.sleep(0.02)


async def _send(response: web.StreamResponse, payload: dict[str, Any]) -> None:
    await response.write(f"data: {json.dumps(payload)}\n\n".encode())


MAX_ENDLESS_CHARS = 200_000_000  # a bound for "endless": no test reads this far


def _pieces(reply: Reply) -> Iterator[str]:
    """The reply's text in chunks; for ``endless``, again and again until the bound."""
    sent = 0
    while True:
        for start in range(0, len(reply.text), reply.chunk):
            piece = reply.text[start:start + reply.chunk]
            sent += len(piece)
            yield piece
        if not reply.endless or not reply.text or sent >= MAX_ENDLESS_CHARS:
            return


def _chunk(model: str, delta: dict[str, str], finish: str | None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _completion(model: str, text: str, usage: dict[str, int], finish: str = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
        "usage": usage,
    }
