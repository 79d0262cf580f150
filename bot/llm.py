"""The team's chat model: any OpenAI-compatible endpoint through ``openai.AsyncOpenAI``.

Retries are ours rather than the SDK's so that they honour ``Retry-After`` fully, happen only
before the first token (a retry after text was shown would repeat it), and end in one clear
sentence. Bad credentials and unknown models are never retried.
"""

from __future__ import annotations

import asyncio
import logging
import random
import urllib.parse
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from contextlib import aclosing
from typing import cast

import openai
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletionMessageParam

from agents.errors import ModelError
from agents.types import Message, Usage
from bot.config import Config, Secrets
from bot.redact import Redactor
from bot.retry_after import retry_after_seconds

log = logging.getLogger(__name__)

AGENT_HEADER = "X-Codegen-Agent"
NO_KEY_PLACEHOLDER = "not-needed"  # local servers (Ollama, llama.cpp) take any key
MAX_RETRY_AFTER_S = 300.0  # a Retry-After beyond this is a service outage, not a rate limit
CHARS_PER_TOKEN = 4  # rough estimate, for servers that report no usage


class _Transient(Exception):
    """A failure worth retrying, with the wait the server asked for (if any)."""

    def __init__(self, reason: str, retry_after: float | None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


class OpenAIChatModel:
    def __init__(
        self,
        config: Config,
        secrets: Secrets,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._config, self._sleep = config, sleep
        self._redact = Redactor(secrets.values())
        self.base_url = config.llm.base_url or secrets.openai_base_url or None
        self.where = _without_credentials(self.base_url) if self.base_url else "the OpenAI API"  # for messages
        self.client = AsyncOpenAI(
            api_key=secrets.openai_api_key or NO_KEY_PLACEHOLDER,
            base_url=self.base_url,
            timeout=config.llm.request_timeout_s,
            max_retries=0,
        )

    def model_name(self, role: str) -> str:
        return self._config.agent(role).model

    async def stream(self, role: str, messages: Sequence[Message]) -> AsyncGenerator[str | Usage, None]:
        """Text deltas of the reply, then one ``Usage``. Closing early closes the HTTP stream."""
        retries = self._config.llm.max_retries
        for attempt in range(retries + 1):
            started = False
            try:
                async with aclosing(self._stream_once(role, messages)) as pieces:  # closed with us
                    async for piece in pieces:
                        started = started or isinstance(piece, str)
                        yield piece
                return
            except _Transient as failure:
                if started:
                    raise ModelError(f"The model stopped mid-reply for the {role}: {failure}.") from None
                if attempt == retries:
                    raise ModelError(
                        f"The model endpoint kept failing for the {role} ({failure}) after {retries + 1} attempts."
                    ) from None
                delay = self._delay(attempt, failure.retry_after)
                log.warning("model call for %s failed (%s); retry %d in %.1fs", role, failure, attempt + 1, delay)
                await self._sleep(delay)

    async def _stream_once(self, role: str, messages: Sequence[Message]) -> AsyncGenerator[str | Usage, None]:
        settings = self._config.agent(role)
        payload = [{"role": m.role, "content": m.content} for m in messages]
        usage: Usage | None = None
        chars = 0
        try:
            response = await self.client.chat.completions.create(
                model=settings.model, messages=cast("list[ChatCompletionMessageParam]", payload),
                temperature=settings.temperature, max_tokens=settings.max_tokens,
                stream=True, stream_options={"include_usage": True},
                extra_headers={AGENT_HEADER: role},
            )
            async with response:
                async for chunk in response:
                    if chunk.usage:
                        usage = Usage(chunk.usage.prompt_tokens, chunk.usage.completion_tokens)
                    for choice in chunk.choices:
                        if choice.delta and choice.delta.content:
                            chars += len(choice.delta.content)
                            yield choice.delta.content
        except openai.APIError as error:
            raise self._translate(error, role, settings.model) from None
        yield usage or _estimate(payload, chars)

    def _translate(self, error: openai.APIError, role: str, model: str) -> Exception:
        """A transient failure to retry, or a ``ModelError`` a person can act on."""
        where = self.where
        if isinstance(error, openai.APITimeoutError):
            return _Transient(f"no answer within {self._config.llm.request_timeout_s:g}s", None)
        if isinstance(error, openai.APIConnectionError):
            return _Transient(f"cannot connect to {where}", None)
        if not isinstance(error, openai.APIStatusError):
            return _Transient(self._redact(str(error)) or type(error).__name__, None)
        status = error.status_code
        if status in (408, 409, 429) or status >= 500:
            return _Transient(f"HTTP {status}", retry_after_seconds(error.response.headers))
        if status in (401, 403):
            return ModelError(
                f"The model endpoint {where} rejected the credentials (HTTP {status}): check OPENAI_API_KEY."
            )
        if status == 404:
            return ModelError(
                f"The model {model!r} (used by the {role}) was not found at {where}: "
                f"check agents.{role}.model or agents.default.model in the config."
            )
        detail = self._redact(_server_message(error))
        return ModelError(f"The model endpoint refused the {role}'s request (HTTP {status}): {detail}")

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, MAX_RETRY_AFTER_S)
        base = self._config.llm.backoff_s * (2**attempt)
        return min(self._config.llm.max_backoff_s, base) * random.uniform(0.8, 1.2)

    async def list_models(self) -> list[str]:
        page = await self.client.models.list()
        return [m.id for m in page.data]

    async def close(self) -> None:
        await self.client.close()


def _without_credentials(url: str) -> str:
    """The URL as a person may see it: a ``user:password@`` part (some gateways take one) removed."""
    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def _server_message(error: openai.APIStatusError) -> str:
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
    return error.message


def _estimate(payload: list[dict[str, str]], completion_chars: int) -> Usage:
    prompt_chars = sum(len(m["content"]) for m in payload)
    return Usage(prompt_chars // CHARS_PER_TOKEN, completion_chars // CHARS_PER_TOKEN)
