"""How many requests the model endpoint gets at once.

Hosted APIs and servers such as vLLM answer many requests at once; llama.cpp's server and Ollama with one
slot serve one at a time, and llama-cpp-python's server even ends the reply under way when a second request
arrives (its stream stops with no ``finish_reason``). A team whose agents write at the same time, or two runs
at once, would then lose replies to each other. ``[llm] parallel_requests`` says how many requests the
endpoint takes; 0 ("auto", the default) sends as many as the runs make until the endpoint drops a reply
while another request was under way, and from then on one at a time.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass


@dataclass(eq=False)
class Call:
    crowded: bool = False  # another request to the endpoint was under way at some moment of this one


class EndpointGate:
    def __init__(self, limit: int) -> None:
        self.auto = limit == 0
        self._slots = asyncio.Semaphore(limit) if limit else None
        self._active: set[Call] = set()
        self._idle = asyncio.Event()  # no request under way
        self._idle.set()
        self._serial = False  # auto found that the endpoint serves one request at a time

    @asynccontextmanager
    async def call(self) -> AsyncIterator[Call]:
        """A slot for one request, held while it streams."""
        slots = self._slots
        if slots is not None:
            await slots.acquire()
        try:
            while self._serial and self._active:  # requests under way when auto found out finish first
                await self._idle.wait()
            call = Call(crowded=bool(self._active))  # no await from the check to here: no one slips between
            for other in self._active:
                other.crowded = True
            self._active.add(call)
            self._idle.clear()
            try:
                yield call
            finally:
                self._active.discard(call)
                if not self._active:
                    self._idle.set()
        finally:
            if slots is not None:
                slots.release()

    def serialize(self) -> bool:
        """From now on one request at a time (auto only); True when that is a change."""
        if not self.auto or self._serial:
            return False
        self._serial = True
        return True
