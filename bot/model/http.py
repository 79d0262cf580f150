"""An OpenAI-compatible endpoint over HTTP: a request goes out, an answer or one failure of a short tree comes back.

The team's client speaks to the endpoint here rather than through the openai SDK: a chat reply needs one POST
with a JSON body and the body read as it arrives (``bot.model.sse``), and importing the SDK (its types package
defines a pydantic model for every OpenAI API) cost 0.4 s of CPU, a third of a run's start-up. The HTTP library
is the SDK's own (``httpx2``), with the SDK's settings: the timeout on every phase, redirects followed, no
retries (``bot.model.client`` retries, honouring ``Retry-After``).

    EndpointError
    +-- StatusError    the server answered 4xx or 5xx: its status, headers, body (parsed when JSON) and message
    +-- NoAnswer       nothing within the timeout, connecting, sending or waiting for bytes
    +-- Unreachable    no connection could be made, or it ended under way (``dropped``: it had been made)
    +-- StreamFailed   the server reported an error inside a stream that had begun well
"""

from __future__ import annotations

import json
import logging
import ssl
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import httpx2

log = logging.getLogger(__name__)

ERROR_BODY_BYTES = 64 * 1024  # of a refusal's body, what is read (a proxy's HTML page can be large)
USER_AGENT = "codegen-chat"
_LIMITS = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)  # the SDK's: one client serves every run


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

    def __init__(self, response: httpx2.Response) -> None:
        self._response = response
        self.content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body as it arrives; a transport failure on the way is one of this module's errors."""
        with _translated():
            async for part in self._response.aiter_bytes():
                yield part

    async def read(self, limit: int) -> bytes:
        """The body, up to about ``limit`` bytes."""
        body = bytearray()
        async for part in self.chunks():
            body += part
            if len(body) > limit:
                break
        return bytes(body)


class Endpoint:
    """One base URL with its key; one connection pool for every request the process sends there."""

    def __init__(self, base_url: str, api_key: str, timeout_s: float, headers: Mapping[str, str] | None = None) -> None:
        """``headers``: sent with every request besides the key (an OpenAI organization or project)."""
        self.base_url = base_url.rstrip("/") + "/"
        self._http = httpx2.AsyncClient(
            base_url=self.base_url, timeout=timeout_s, follow_redirects=True, limits=_LIMITS,
            headers={"Authorization": f"Bearer {api_key}", "User-Agent": USER_AGENT, "Accept": "application/json",
                     **(headers or {})})

    @asynccontextmanager
    async def post(self, path: str, body: dict[str, Any], headers: Mapping[str, str]) -> AsyncIterator[Answer]:
        """The answer to a POST of ``body`` as JSON, open while the block runs (closed with it, read or not)."""
        request = self._http.build_request("POST", path, content=json.dumps(body).encode(),
                                           headers={**headers, "Content-Type": "application/json"})
        log.debug("sending POST %s", path)
        with _translated():
            response = await self._http.send(request, stream=True)
        try:
            if response.status_code >= 400:
                raise await _refusal(response)
            yield Answer(response)
        finally:
            await response.aclose()

    async def get_json(self, url: str) -> object:
        """A GET's parsed JSON (``url`` absolute or under the base URL); ``ValueError`` when it is none."""
        with _translated():
            response = await self._http.get(url)
        if response.status_code >= 400:
            raise await _refusal(response)
        return response.json()

    async def close(self) -> None:
        await self._http.aclose()


async def _refusal(response: httpx2.Response) -> StatusError:
    raw = bytearray()
    with _translated():
        async for part in response.aiter_bytes():
            raw += part
            if len(raw) > ERROR_BODY_BYTES:
                break
    text = bytes(raw[:ERROR_BODY_BYTES]).decode("utf-8", "replace")
    try:
        body: object = json.loads(text)
    except ValueError:
        body = text or None
    return StatusError(response.status_code, response.headers, body, f"Error code: {response.status_code} - {body}")


_DROPPED = (httpx2.RemoteProtocolError, httpx2.ReadError, httpx2.WriteError)


@contextmanager
def _translated() -> Any:
    try:
        yield
    except httpx2.TimeoutException as error:
        raise NoAnswer(type(error).__name__) from error
    except (httpx2.RequestError, ssl.SSLError, OSError) as error:
        raise Unreachable(str(error) or type(error).__name__, dropped=isinstance(error, _DROPPED)) from error
