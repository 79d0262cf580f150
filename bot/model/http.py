"""An OpenAI-compatible endpoint through the openai SDK: a request goes out, an answer or one failure of a short tree comes back.

The SDK sends every request: base URL, key, organization and project, the timeout on every phase, redirects,
its connection pool, its status errors. A chat reply is asked for as the SDK's raw streaming response
(``with_streaming_response``), so its body is read as bytes by ``bot.model.sse`` rather than as one pydantic
object per streamed chunk, which cost more CPU per call than everything else a run does per chunk. The SDK
retries nothing here (``max_retries=0``): ``bot.model.client`` retries, honouring ``Retry-After`` fully and
only before the first token.

    EndpointError
    +-- StatusError    the server answered 4xx or 5xx: its status, headers, body (parsed when JSON) and message
    +-- NoAnswer       nothing within the timeout, connecting, sending or waiting for bytes
    +-- Unreachable    no connection could be made, or it ended under way (``dropped``: it had been made)
    +-- StreamFailed   the server reported an error inside a stream that had begun well
"""

from __future__ import annotations

import ipaddress
import json
import logging
import ssl
import sys
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from typing import Any
from urllib.parse import urlsplit

# The SDK's HTTP library, for its errors alone: the SDK maps them to its own while it sends a request, but a raw
# streaming response's body raises them as they are while it is read.
import httpx2

# The SDK imports its optional aiohttp transport with itself wherever aiohttp is installed (here it is, for the servers'
# health checks): about 0.15 s, an eighth of a one-off run's start-up, for a transport this client never uses (it sends
# through the SDK's default one). A None in ``sys.modules`` makes that one import fail as the SDK expects when aiohttp
# is missing; the entry is removed again at once, so whatever wants the transport later can still import it.
_AIOHTTP_TRANSPORT = "openai._vendor.httpx_aiohttp"
_skipping = "openai" not in sys.modules and _AIOHTTP_TRANSPORT not in sys.modules
if _skipping:
    sys.modules[_AIOHTTP_TRANSPORT] = None  # type: ignore[assignment]
try:
    import openai
finally:
    if _skipping and _AIOHTTP_TRANSPORT in sys.modules and sys.modules[_AIOHTTP_TRANSPORT] is None:
        del sys.modules[_AIOHTTP_TRANSPORT]

log = logging.getLogger(__name__)

ERROR_BODY_CHARS = 64 * 1024  # of a refusal's body, what is kept (a proxy's HTML page can be large)


class EndpointError(Exception):
    """A request that got no usable answer."""


class StatusError(EndpointError):
    def __init__(self, status: int, headers: Mapping[str, str], body: object, message: str) -> None:
        super().__init__(message)
        self.status, self.headers, self.body, self.message = status, headers, body, message


class NoAnswer(EndpointError):
    pass


class Unreachable(EndpointError):
    def __init__(self, reason: str, dropped: bool) -> None:
        super().__init__(reason)
        self.dropped = dropped  # the connection was made, then ended (a crash, a restart, a proxy's limit)


class StreamFailed(EndpointError):
    def __init__(self, message: str, body: object) -> None:
        super().__init__(message)
        self.body = body


class Answer:
    """A response whose status was fine, its body not read yet."""

    def __init__(self, response: openai.AsyncAPIResponse[Any]) -> None:
        self._response = response
        self.content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body as it arrives; a transport failure on the way is one of this module's errors."""
        with _translated():
            async for part in self._response.iter_bytes():
                yield part

    async def read(self, limit: int) -> bytes:
        """The body, up to about ``limit`` bytes."""
        body = bytearray()
        async for part in self.chunks():
            body += part
            if len(body) > limit:
                break
        return bytes(body)


def http_client_for(base_url: str) -> httpx2.AsyncClient | None:
    """The SDK's HTTP client for ``base_url``. For plain HTTP to this machine (the embedded server, an Ollama on
    loopback) one that never goes through the environment's proxy (HTTP_PROXY, ALL_PROXY): a proxy cannot reach
    this machine's loopback, and the prompts sent there are not to leave it. Elsewhere None: the SDK's own."""
    return openai.DefaultAsyncHttpxClient(trust_env=False) if on_this_machine(base_url) else None


def on_this_machine(url: str) -> bool:
    """Whether ``url`` is plain HTTP to a loopback address (or ``localhost``)."""
    parts = urlsplit(url)
    if parts.scheme != "http":
        return False
    try:
        return parts.hostname == "localhost" or ipaddress.ip_address(parts.hostname or "").is_loopback
    except ValueError:
        return False


class Endpoint:
    """One base URL with its key: one SDK client, one connection pool for every request the process sends there."""

    def __init__(self, base_url: str, api_key: str, timeout_s: float, organization: str | None = None,
                 project: str | None = None) -> None:
        self._sdk = openai.AsyncOpenAI(api_key=api_key, base_url=base_url, organization=organization, project=project,
                                       timeout=timeout_s, max_retries=0, http_client=http_client_for(base_url))
        self.base_url = str(self._sdk.base_url)

    @asynccontextmanager
    async def chat(self, body: dict[str, Any], headers: Mapping[str, str]) -> AsyncIterator[Answer]:
        """The answer to a chat completion request (``body`` in its wire form), open while the block runs."""
        log.debug("sending POST chat/completions")
        with _translated():
            async with self._sdk.chat.completions.with_streaming_response.create(
                    **body, extra_headers=dict(headers)) as response:
                yield Answer(response)

    async def get_json(self, url: str) -> object:
        """A GET's parsed JSON (``url`` absolute or under the base URL); the text when the body is not JSON."""
        with _translated():
            return await self._sdk.get(url, cast_to=object)

    async def close(self) -> None:
        await self._sdk.close()


# A connection that was made and then ended, as the HTTP library says it.
_DROPPED = (httpx2.RemoteProtocolError, httpx2.ReadError, httpx2.WriteError)


@contextmanager
def _translated() -> Iterator[None]:
    try:
        yield
    except openai.APIStatusError as error:
        raise _refusal(error) from error
    except (openai.APITimeoutError, httpx2.TimeoutException) as error:
        raise NoAnswer(type(error.__cause__ or error).__name__) from error
    except openai.APIConnectionError as error:
        cause = error.__cause__
        raise Unreachable(str(cause or error) or type(cause).__name__, dropped=isinstance(cause, _DROPPED)) from error
    except (httpx2.RequestError, ssl.SSLError, OSError) as error:  # while a streamed body is read
        raise Unreachable(str(error) or type(error).__name__, dropped=isinstance(error, _DROPPED)) from error
    except openai.APIError as error:
        raise EndpointError(error.message) from error


def _refusal(error: openai.APIStatusError) -> StatusError:
    """The status error with the whole body the server sent (the SDK's ``body`` is only its ``error`` member)."""
    try:
        text = error.response.text[:ERROR_BODY_CHARS]
    except httpx2.ResponseNotRead:
        text = ""
    try:
        body: object = json.loads(text)
    except ValueError:
        body = text or None
    status = error.status_code
    return StatusError(status, error.response.headers, body, f"Error code: {status} - {body}")
