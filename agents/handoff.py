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
from collections.abc import AsyncIterator, Awaitable, Callable

from agents.events import Event

Emit = Callable[[Event], Awaitable[None]]


async def events_of(work: Callable[[Emit], Awaitable[None]]) -> AsyncIterator[Event]:
    """The events ``work`` emits, in order; an error ``work`` raises is raised here after them."""
    slot: asyncio.Queue[Event] = asyncio.Queue(maxsize=1)

    async def emit(event: Event) -> None:
        await slot.put(event)
        await slot.join()  # until the consumer has dealt with it and come back for more

    task = asyncio.ensure_future(work(emit))
    getter: asyncio.Future[Event] | None = None
    try:
        while True:
            getter = asyncio.ensure_future(slot.get())
            await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
            if not getter.done():  # the work ended; emit waits for each event, so none is left
                break
            event = getter.result()
            yield event
            slot.task_done()
        await task  # its error, if it failed
    finally:
        if getter is not None and not getter.done():
            getter.cancel()
        if not task.done():
            task.cancel()
            await asyncio.wait({task})
        if not task.cancelled():
            task.exception()  # retrieved: the error (if any) was raised above or is superseded
