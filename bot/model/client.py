"""The team's chat model: any OpenAI-compatible endpoint, through the openai SDK (``bot.model.http``).

Retries are ours rather than the SDK's so that they honour ``Retry-After`` fully, happen only
before the first token (a retry after text was shown would repeat it), and end in one clear
sentence. Bad credentials and unknown models are never retried.

A reply is read defensively, because local servers and gateways answer in surprising ways:
- silence is timed by content: ``llm.request_timeout_s`` passes without a token and the call fails,
  whatever keep-alive comments or empty chunks a busy server sends meanwhile;
- a reply is bounded while it streams: past ``max_tokens`` worth of characters (or
  ``MAX_REPLY_CHARS``) it is cut and the stream closed, so a server that never stops costs nothing;
- ``max_tokens`` is clamped to what the model's context leaves after the prompt, where the endpoint
  says how large that is (``bot.model.context_window``);
- an empty reply, a cut one (``finish_reason: length``) and a prompt longer than the context are
  named as what they are, with the prompt's size (``PromptTooLong``, ``EmptyReply``, ``ReplyCut``);
- an HTML page, a plain JSON completion (taken as the reply), invalid server-sent events or a chunk
  without ``choices`` each become one sentence naming the endpoint and what it returned;
- requests go through the endpoint's gate (``bot.model.endpoint_gate``): a server that serves one request at a
  time and drops the reply under way when another arrives is found out and sent one at a time, and the
  dropped reply is asked again (at once when none of it had arrived, else by the Manager: ``ReplyDropped``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import urllib.parse
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import aclosing
from typing import Any

from agents.errors import EmptyReply, ModelError, PromptTooLong, ReplyCut, ReplyDropped
from agents.types import Message, Usage
from bot.config.sections import Config, Secrets
from bot.model.context_window import context_from_models, context_from_props, read_context_error
from bot.model.endpoint_gate import EndpointGate
from bot.model.http import Answer, Endpoint, EndpointError, NoAnswer, StatusError, StreamFailed, Unreachable
from bot.model.retry_after import retry_after_seconds
from bot.model.sse import NotEvents, chunk_of, event_data
from bot.safety.redact import Redactor

log = logging.getLogger(__name__)

AGENT_HEADER = "X-Codegen-Agent"
NO_KEY_PLACEHOLDER = "not-needed"  # local servers (Ollama, llama.cpp) take any key
MAX_RETRY_AFTER_S = 300.0  # a Retry-After beyond this is a service outage, not a rate limit
CHARS_PER_TOKEN = 4  # rough estimate, for servers that report no usage
PROMPT_CHARS_PER_TOKEN = 3.0  # a cautious estimate of a prompt's size (code has short tokens) until a server says
MAX_CHARS_PER_TOKEN = 32  # a reply longer than max_tokens * this has ignored max_tokens (no tokenizer averages more): cut
MAX_REPLY_CHARS = 1_000_000  # no reply is longer, whatever max_tokens says
MIN_REPLY_TOKENS = 64  # a prompt that leaves less room than this in the context does not fit
DISCOVERY_TIMEOUT_S = 5.0
SHOWN_URL = Redactor((), urls=True)  # what a message may show of a URL
OPENAI_API = "https://api.openai.com/v1"  # where requests go when no base URL is configured


class _Transient(Exception):
    """A failure worth retrying, with the wait the server asked for (if any)."""

    def __init__(self, reason: str, retry_after: float | None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


class _Dropped(Exception):
    """The stream ended with no ``finish_reason`` while another request was under way: the server dropped it."""

    def __init__(self, usage: Usage) -> None:
        self.usage = usage


class _ContextLearned(Exception):
    """A context error told the window's size: the same request, clamped to it, is worth one more try."""


class OpenAIChatModel:
    def __init__(
        self,
        config: Config,
        secrets: Secrets,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        contexts: Mapping[str, int] | None = None,
    ) -> None:
        self._config, self._sleep = config, sleep
        self._redact, self._secrets = Redactor(secrets.values()), secrets
        self.base_url = config.llm.base_url or secrets.openai_base_url or None
        self.where = _without_credentials(self.base_url) if self.base_url else "the OpenAI API"  # for messages
        self.endpoint = self._endpoint(self.base_url or OPENAI_API)
        self._left: list[Endpoint] = []  # endpoints moved away from, closed with the client
        self._contexts: dict[str, int] = dict(contexts or {})  # model -> context window in tokens, where known
        self._asked: set[str] = set()  # models whose window the endpoint was asked about
        self._chars_per_token: dict[str, float] = {}  # measured from a server's own count of a prompt
        self.gate = EndpointGate(config.llm.parallel_requests)  # shared by every run this client serves

    def model_name(self, role: str) -> str:
        return self._config.agent(role).model

    async def stream(self, role: str, messages: Sequence[Message],
                     temperature: float | None = None) -> AsyncGenerator[str | Usage, None]:
        """Text deltas of the reply, then one ``Usage``. Closing early closes the HTTP stream."""
        retries = self._config.llm.max_retries
        learned = dropped = False
        attempt = 0
        while True:
            started = False
            try:
                async with aclosing(self._stream_once(role, messages, temperature)) as pieces:  # closed with us
                    async for piece in pieces:
                        started = started or isinstance(piece, str)
                        yield piece
                return
            except _Dropped as failure:
                if started or dropped:  # text was shown: the Manager asks again, and says so
                    raise ReplyDropped(
                        f"The model server at {self.where} ended the {role}'s reply when another request reached "
                        "it (it answers one request at a time; it now gets one at a time).", failure.usage) from None
                dropped = True  # nothing shown yet: ask again at once, now that requests go one at a time
            except _ContextLearned:
                if learned:
                    raise ModelError(f"The model endpoint {self.where} kept refusing the {role}'s request "
                                     "for its length, even within the context it reported.") from None
                learned = True  # once: the next request is clamped to the window the error gave
            except _Transient as failure:
                if started:
                    raise ModelError(f"The model stopped mid-reply for the {role}: {failure}.") from None
                if attempt == retries:
                    raise ModelError(
                        f"The model endpoint kept failing for the {role} ({failure}) after {retries + 1} attempts."
                    ) from None
                delay = self._delay(attempt, failure.retry_after)
                log.warning("model call for %s failed (%s); retry %d in %.1fs", role, failure, attempt + 1, delay)
                attempt += 1
                await self._sleep(delay)

    async def _stream_once(self, role: str, messages: Sequence[Message],
                           temperature: float | None) -> AsyncGenerator[str | Usage, None]:
        settings = self._config.agent(role)
        model = settings.model
        payload = [{"role": m.role, "content": m.content} for m in messages]
        prompt_tokens = self._prompt_tokens(model, payload)
        context = await self.context_window(model)
        max_tokens = self._reply_room(role, model, settings.max_tokens, prompt_tokens, context)
        reply = _Reply(self._redact, self.where, role, min(MAX_REPLY_CHARS, max_tokens * MAX_CHARS_PER_TOKEN))
        kind = ""
        temperature = settings.temperature if temperature is None else temperature
        body = {"model": model, "messages": payload, "temperature": temperature, "max_tokens": max_tokens,
                "stream": True, "stream_options": {"include_usage": True}}
        async with self.gate.call() as call:  # held while the reply streams
            try:
                async with self.endpoint.chat(body, {AGENT_HEADER: role}) as answer:
                    kind = answer.content_type
                    if kind == "application/json":  # the server ignored stream=true: take the whole completion
                        for piece in reply.from_completion(await answer.read(MAX_REPLY_CHARS * 2)):
                            yield piece
                    else:
                        async for piece in reply.from_stream(answer, self._config.llm.request_timeout_s):
                            yield piece
            except EndpointError as error:
                raise self._translate(error, role, model, prompt_tokens, payload, replying=reply.chars > 0) from None
        if call.crowded and reply.finish is None and not reply.cut and kind != "application/json" and self.gate.auto:
            if self.gate.serialize():
                log.warning("the model server at %s dropped a reply when another request reached it: it answers "
                            "one request at a time, and now gets one at a time (set [llm] parallel_requests = 1 "
                            "to say so up front)", self.where)
            raise _Dropped(_estimate(payload, reply.chars))
        if reply.finish == "length" or reply.cut:
            if not reply.chars:
                raise self._too_long(role, model, prompt_tokens, context)
            raise ReplyCut(reply.cut or (
                f"The {role}'s reply reached its limit of {max_tokens:,} tokens before it ended "
                f"(the prompt was about {prompt_tokens:,} tokens{_of_context(context)})."),
                reply.usage or _estimate(payload, reply.chars), context)
        if not reply.chars:
            raise await self._why_empty(role, model, payload, prompt_tokens, context, kind)
        yield reply.usage or _estimate(payload, reply.chars)

    # -- the context window -------------------------------------------------------------------

    async def context_window(self, model: str) -> int | None:
        """The model's context window in tokens, where the endpoint says (asked once per model)."""
        if model not in self._contexts and model not in self._asked:
            self._asked.add(model)
            found = await self._discover_context(model)
            if found:
                self._contexts[model] = found
        return self._contexts.get(model)

    async def _discover_context(self, model: str) -> int | None:
        """From the models listing, else llama.cpp's /props; nothing when neither says (or answers)."""
        for url in (self._url("models"), self._url("/props")):
            try:
                async with asyncio.timeout(DISCOVERY_TIMEOUT_S):
                    body = await self.endpoint.get_json(url)
            except (EndpointError, ValueError, TypeError, TimeoutError):
                continue
            if isinstance(body, dict):
                found = context_from_models(body, model) if url.endswith("models") else context_from_props(body)
                if found:
                    return found
        return None

    def _url(self, path: str) -> str:
        """``models`` under the API's base URL; ``/props`` at the server's root (llama.cpp serves it there)."""
        base = self.endpoint.base_url
        if not path.startswith("/"):
            return base.rstrip("/") + "/" + path
        parts = urllib.parse.urlsplit(base)
        root = parts.path.rstrip("/").removesuffix("/v1")
        return urllib.parse.urlunsplit(parts._replace(path=root + path))

    def _prompt_tokens(self, model: str, payload: list[dict[str, str]]) -> int:
        chars = sum(len(m["content"]) for m in payload)
        return int(chars / self._chars_per_token.get(model, PROMPT_CHARS_PER_TOKEN)) + 4 * len(payload)

    def _reply_room(self, role: str, model: str, wanted: int, prompt_tokens: int, context: int | None) -> int:
        """``max_tokens`` for this request: the configured one, or what the context leaves after the prompt."""
        if context is None:
            return wanted
        room = context - prompt_tokens
        if room < MIN_REPLY_TOKENS:
            raise self._too_long(role, model, prompt_tokens, context)
        return min(wanted, room)

    def _too_long(self, role: str, model: str, prompt_tokens: int, context: int | None) -> PromptTooLong:
        return PromptTooLong(
            f"The {role}'s prompt (about {prompt_tokens:,} tokens) does not fit the context of {model} at "
            f"{self.where}{_of_context(context, ' ({:,} tokens)')}.", prompt_tokens, context)

    async def _why_empty(self, role: str, model: str, payload: list[dict[str, str]], prompt_tokens: int,
                         context: int | None, kind: str) -> ModelError:
        """Why an answer held no text. Some servers (llama-cpp-python) answer a prompt longer than the
        context with HTTP 200 and an empty stream; asked again without streaming they say so, with numbers."""
        if kind and kind not in ("text/event-stream", "application/json"):
            return ModelError(
                f"The model endpoint {self.where} answered with {_kind_of(kind)} ({kind}), not an "
                "OpenAI-compatible stream: check llm.base_url or OPENAI_BASE_URL (it usually ends in /v1).")
        try:
            body = {"model": model, "messages": payload, "max_tokens": 1, "stream": False}
            async with self.gate.call(), self.endpoint.chat(body, {AGENT_HEADER: role}) as answer:
                await answer.read(MAX_REPLY_CHARS)  # a request like any other: it must not drop another one's reply
        except StatusError as error:
            told = read_context_error(_server_message(error))
            if told:
                self._learn(model, told.limit, told.prompt, payload)
                return self._too_long(role, model, told.prompt or prompt_tokens, told.limit or context)
        except EndpointError:
            pass
        return EmptyReply(
            f"The model at {self.where} sent an empty reply for the {role} (HTTP 200, no text; "
            f"the prompt was about {prompt_tokens:,} tokens{_of_context(context)}).", prompt_tokens, context)

    def _learn(self, model: str, limit: int | None, prompt: int | None, payload: list[dict[str, str]]) -> None:
        if limit:
            self._contexts[model] = limit
        if prompt:
            chars = sum(len(m["content"]) for m in payload)
            self._chars_per_token[model] = max(1.0, chars / max(1, prompt - 4 * len(payload)))

    # -- failures -----------------------------------------------------------------------------

    def _translate(self, error: EndpointError, role: str, model: str, prompt_tokens: int,
                   payload: list[dict[str, str]], replying: bool = False) -> Exception:
        """A transient failure to retry, or a ``ModelError`` a person can act on."""
        where = self.where
        if isinstance(error, NoAnswer):
            return _Transient(f"no answer within {self._config.llm.request_timeout_s:g}s", None)
        if isinstance(error, Unreachable):
            if not error.dropped:
                return _Transient(f"cannot connect to {where}", None)
            # reached, then dropped: the server closed it (a crash, a restart, a proxy's limit), or the network broke
            return _Transient(f"the server at {where} closed the connection{'' if replying else ' before answering'}",
                              None)
        detail = self._redact(_server_message(error) if isinstance(error, StatusError) else str(error))
        told = read_context_error(detail)
        if told is not None and (not isinstance(error, StatusError) or error.status in (400, 413, 422)):
            self._learn(model, told.limit, told.prompt, payload)
            prompt = told.prompt or prompt_tokens
            if told.limit and prompt + MIN_REPLY_TOKENS <= told.limit:
                return _ContextLearned()  # the prompt fits: only max_tokens was too large for the window
            return self._too_long(role, model, prompt, told.limit or self._contexts.get(model))
        if not isinstance(error, StatusError):
            return _Transient(detail or type(error).__name__, None)
        status = error.status
        if status in (408, 409, 429) or status >= 500:
            return _Transient(f"HTTP {status}", retry_after_seconds(error.headers))
        if status in (401, 403):
            return ModelError(
                f"The model endpoint {where} rejected the credentials (HTTP {status}): check OPENAI_API_KEY."
            )
        if status == 404:
            return ModelError(
                f"The model {model!r} (used by the {role}) was not found at {where}: "
                f"check agents.{role}.model or agents.default.model in the config."
            )
        return ModelError(f"The model endpoint refused the {role}'s request (HTTP {status}): {detail}")

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, MAX_RETRY_AFTER_S)
        base = self._config.llm.backoff_s * (2**attempt)
        return min(self._config.llm.max_backoff_s, base) * random.uniform(0.8, 1.2)

    async def list_models(self) -> list[str]:
        """The models the endpoint offers; ``EndpointError``, or ``ValueError`` for a listing of another shape."""
        listing = await self.endpoint.get_json("models")
        try:
            return [str(entry["id"]) for entry in listing["data"]]  # type: ignore[index]
        except (KeyError, TypeError) as error:
            raise ValueError(f"not a models listing ({type(error).__name__})") from None

    def move_to(self, base_url: str) -> None:
        """Send the requests from now on to ``base_url`` (the embedded server, started again on another port). The
        endpoint left stays open for a reply still unwinding there, and is closed with the client."""
        if base_url == self.base_url:
            return
        self._left.append(self.endpoint)
        self.base_url, self.where, self.endpoint = base_url, _without_credentials(base_url), self._endpoint(base_url)

    def _endpoint(self, base_url: str) -> Endpoint:
        secrets = self._secrets
        return Endpoint(base_url, secrets.openai_api_key or NO_KEY_PLACEHOLDER, self._config.llm.request_timeout_s,
                        secrets.openai_org_id or None, secrets.openai_project_id or None)

    async def close(self) -> None:
        for endpoint in (*self._left, self.endpoint):
            await endpoint.close()


class _Reply:
    """One reply as it arrives: its text's length, how it finished, its usage, and the size cap."""

    def __init__(self, redact: Redactor, where: str, role: str, cap: int) -> None:
        self._redact, self._where, self._role, self._cap = redact, where, role, cap
        self.chars = 0
        self.finish: str | None = None
        self.usage: Usage | None = None
        self.cut = ""  # why the reply was cut short here, when it was

    async def from_stream(self, answer: Answer, silence_s: float) -> AsyncIterator[str]:
        """Text deltas of the answer's event stream; fails after ``silence_s`` without a token (keep-alives
        and empty chunks do not count)."""
        body = aiter(answer.chunks())
        events = aiter(event_data(body))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + silence_s
        while not self.cut:
            try:
                async with asyncio.timeout_at(deadline):
                    data = await anext(events)
                chunk = chunk_of(data)
            except StopAsyncIteration:
                await _drained(body)  # so the connection serves the next request
                return
            except TimeoutError:
                raise _Transient(f"no answer within {silence_s:g}s", None) from None
            except NotEvents as error:
                raise ModelError(f"The model endpoint {self._where} sent a stream that is not valid server-sent "
                                 f"events ({error}).") from None
            for text in self._read(chunk):
                deadline = loop.time() + silence_s
                yield text

    def from_completion(self, body: bytes) -> list[str]:
        """The text of a whole (non-streamed) completion, the one piece of this reply."""
        try:
            data = json.loads(body)
            choice = data["choices"][0]
            text = choice["message"]["content"] or ""
        except (ValueError, KeyError, IndexError, TypeError):
            shown = self._redact(body[:120].decode("utf-8", "replace"))
            raise ModelError(f"The model endpoint {self._where} answered with JSON that is not a chat completion: "
                             f"{shown!r}.") from None
        self.finish = choice.get("finish_reason")
        usage = data.get("usage") or {}
        if isinstance(usage.get("prompt_tokens"), int) and isinstance(usage.get("completion_tokens"), int):
            self.usage = Usage(usage["prompt_tokens"], usage["completion_tokens"])
        return [piece for piece in [self._within_cap(str(text))] if piece]

    def _read(self, chunk: dict[str, Any]) -> list[str]:
        usage = chunk.get("usage")
        if isinstance(usage, dict) and isinstance(usage.get("prompt_tokens"), int):
            self.usage = Usage(usage["prompt_tokens"], usage.get("completion_tokens") or 0)
        error = chunk.get("error")
        if error:  # as the SDK reads an error sent inside a stream: one to retry before any text
            message = error.get("message") if isinstance(error, dict) else None
            raise StreamFailed(message if isinstance(message, str) and message else "an error occurred during streaming",
                               error)
        choices = chunk.get("choices")
        if not isinstance(choices, list):
            if usage:
                return []
            raise ModelError(f"The model endpoint {self._where} sent a stream chunk without 'choices' "
                             "(not an OpenAI-compatible chat stream).")
        pieces = []
        for choice in choices:
            if not isinstance(choice, dict):
                continue
            self.finish = choice.get("finish_reason") or self.finish
            delta = choice.get("delta")
            content = delta.get("content") if isinstance(delta, dict) else None
            if content and isinstance(content, str):
                piece = self._within_cap(content)
                if piece:
                    pieces.append(piece)
        return pieces

    def _within_cap(self, text: str) -> str:
        if not self.chars:
            text = text.lstrip(BYTE_ORDER_MARK)  # some servers start a reply with one; it would hide a first fence
        room = self._cap - self.chars
        if len(text) > room:
            text = text[:max(0, room)]
            self.cut = (f"The {self._role}'s reply passed {self._cap:,} characters, more than its max_tokens "
                        "allows, and was cut there.")
        self.chars += len(text)
        return text


BYTE_ORDER_MARK = "\ufeff"
DRAIN_S = 0.1  # what is left after [DONE] is read this long at most (the SDK's bound), then the connection closes


async def _drained(body: AsyncIterator[bytes]) -> None:
    """Read what follows ``[DONE]`` (usually nothing but the body's end), so HTTP/1.1 keeps the connection."""
    try:
        async with asyncio.timeout(DRAIN_S):
            async for _ in body:
                pass
    except Exception:  # the reply is whole: whatever the rest of the body does, it is not an error
        log.debug("the body after [DONE] could not be read; the connection is closed", exc_info=True)


def _kind_of(content_type: str) -> str:
    return {"text/html": "an HTML page", "text/plain": "plain text"}.get(content_type, "something else")


def _of_context(context: int | None, template: str = "; the model's context holds {:,}") -> str:
    return template.format(context) if context else ""


def _without_credentials(url: str) -> str:
    """The URL as a person may see it: a ``user:password@`` part (some gateways take one) removed, and secret
    query values (``?api_key=``) masked."""
    parts = urllib.parse.urlsplit(url)
    if "@" in parts.netloc:
        url = urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))
    return SHOWN_URL(url)


def _server_message(error: StatusError) -> str:
    body: Any = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
    return error.message


def _estimate(payload: list[dict[str, str]], completion_chars: int) -> Usage:
    prompt_chars = sum(len(m["content"]) for m in payload)
    return Usage(prompt_chars // CHARS_PER_TOKEN, completion_chars // CHARS_PER_TOKEN, estimated=True)
