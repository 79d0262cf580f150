"""Turns a coroutine that emits events into the async iterator of those events that consumers read.

The Manager's steps are ordinary coroutines: each awaits a sink for every event it has to tell and
returns what it produced. ``events_of`` runs such a coroutine and hands its events over one at a time:
``emit`` returns only once the consumer has taken the event and asked for the next one, exactly as if
the work were a generator paused at a ``yield``. So a slow consumer slows the run instead of letting
events pile up, and closing the iterator (or cancelling its consumer) cancels the work, which closes
whatever it holds open (the model's stream).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable

from agents.events import Event

Emit = Callable[[Event], Awaitable[None]]


async def events_of(work: Callable[[Emit], Awaitable[None]]) -> AsyncIterator[Event]:
    """The events ``work`` emits, in order; an error ``work`` raises is raised here after them."""
    loop = asyncio.get_running_loop()
    told: deque[tuple[Event, asyncio.Future[None]]] = deque()  # an event, and the future its emit waits on
    wake: list[asyncio.Future[None]] = []  # the consumer's wait for an event or the work's end, while it waits

    def woken(_: object = None) -> None:
        if wake and not wake[0].done():
            wake[0].set_result(None)

    async def emit(event: Event) -> None:
        taken = loop.create_future()
        told.append((event, taken))
        woken()
        await taken  # until the consumer has dealt with it and come back for more

    # Two futures an event, no task or ``asyncio.wait``: a streamed reply tells hundreds of events a call.
    task = asyncio.ensure_future(work(emit))
    task.add_done_callback(woken)
    try:
        while True:
            if told:
                event, taken = told.popleft()
                yield event
                if not taken.done():
                    taken.set_result(None)
                continue
            if task.done():  # emit waits for each event, so none is left
                break
            wake.append(loop.create_future())
            try:
                await wake[0]
            finally:
                wake.clear()
        await task  # its error, if it failed
    finally:
        if not task.done():
            task.cancel()
            await asyncio.wait({task})
        if not task.cancelled():
            task.exception()  # retrieved: the error (if any) was raised above or is superseded
