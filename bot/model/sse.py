"""The data of each server-sent event in a byte stream, as plain JSON chunks a chat reply is read from.

The openai SDK's typed stream turns every streamed chunk into a pydantic object (a model of the chunk, its
choices, its delta), which cost more CPU per call than everything else a run does per chunk. A reply needs three
fields of each chunk, so the client asks the SDK for its raw streaming response and reads the event stream itself
(``text/event-stream`` as the HTML standard defines it: lines ending in CR, LF or CRLF, ``data:`` fields joined by
newlines, a blank line ending an event, comments skipped), decoding each event's JSON once, as plain dicts.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

DONE = "[DONE]"  # the OpenAI stream's last event
MAX_LINE_BYTES = 16 * 1024 * 1024  # no chunk of a chat reply is this long: a stream without line ends is no SSE


class NotEvents(ValueError):
    """The bytes are not an OpenAI-style event stream (a line past the bound, a data field that is not JSON)."""


async def event_data(chunks: AsyncIterator[bytes]) -> AsyncIterator[str]:
    """Each event's data, in order, up to and without the ``[DONE]`` event (or the stream's end)."""
    pending = bytearray()
    data: list[str] = []
    async for chunk in chunks:
        pending += chunk
        if b"\n" in chunk or b"\r" in chunk:  # else a long line's middle: split once it ends, not at every read
            lines = bytes(pending).splitlines(keepends=True)
            # The last line may continue in the next chunk (a CR at the end may be the first half of a CRLF).
            pending = bytearray(lines.pop() if not lines[-1].endswith(b"\n") else b"")
            for line in lines:
                event = _field(line.rstrip(b"\r\n"), data)
                if event == DONE:
                    return
                if event is not None:
                    yield event
        if len(pending) > MAX_LINE_BYTES:
            raise NotEvents(f"a line longer than {MAX_LINE_BYTES:,} bytes")
    event = _field(bytes(pending).rstrip(b"\r\n"), data) if pending else None
    for last in (event, _field(b"", data)):  # a stream cut without its blank line still ends its event
        if last is not None and last != DONE:
            yield last


def _field(line: bytes, data: list[str]) -> str | None:
    """Take one line into ``data``; at a blank line, the event's data (and ``data`` emptied)."""
    if not line:
        if not data:
            return None
        event = "\n".join(data)
        data.clear()
        return event
    name, _, value = line.partition(b":")
    if name == b"data":
        data.append(value.removeprefix(b" ").decode("utf-8", "replace"))
    return None  # comments (``: ping``), ``event``, ``id`` and ``retry`` say nothing a chat reply needs


def chunk_of(data: str) -> dict[str, Any]:
    """One event's JSON; a JSON value that is no object is read as an object without fields."""
    try:
        value = json.loads(data)
    except json.JSONDecodeError as error:
        raise NotEvents(f"a data line is not JSON: {error.msg}") from None
    return value if isinstance(value, dict) else {}
