"""Steps of one run that work at the same time, told to the run's sink one turn at a time.

Two agents may write at once (the Tester its tests while the Programmer writes the code; the Optimizer its
review while the tests run and the Manager triages them). Every renderer draws a turn as one block, from
``TurnStarted`` to ``TurnFinished``, so the events of two turns must not interleave. ``at_once`` runs each
step in a lane of its own: the first lane to start a turn has the floor and is told live; the other lanes'
events wait, in the order they came, until that turn has finished, then are told at once, and the turn they
were writing goes on live. The models write at the same time; the thread reads as if they took turns.
Events no thread draws (the files a step saved, which the store keeps) pass at once.

A step tells its events with ``lane_or(sink)``: its lane inside ``at_once``, else the run's own sink.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Coroutine
from typing import Any

from agents.events import Event, TurnFinished, TurnStarted, WorkSaved
from agents.handoff import Emit

_lane: contextvars.ContextVar[Emit | None] = contextvars.ContextVar("lane", default=None)
# Events no thread draws, which the store keeps: they pass at once, so a run stopped while another lane's turn
# is being told still leaves the files a finished step saved.
_UNDRAWN = (WorkSaved,)


def lane_or(sink: Emit) -> Emit:
    """Where the step running now tells its events: its lane when it runs beside others, else ``sink``."""
    return _lane.get() or sink


class _Floor:
    """Which lane is being told, and what the others said meanwhile (in arrival order)."""

    def __init__(self, sink: Emit) -> None:
        self._sink = sink
        self._holder: int | None = None  # the lane whose turn is open
        self._waiting: list[tuple[int, Event]] = []
        self._lock = asyncio.Lock()  # one event at a time reaches the sink

    def lane(self, number: int) -> Emit:
        async def emit(event: Event) -> None:
            async with self._lock:
                if self._holder not in (None, number) and not isinstance(event, _UNDRAWN):
                    self._waiting.append((number, event))
                    return
                await self._tell(number, event)
                await self._catch_up()

        return emit

    async def _tell(self, number: int, event: Event) -> None:
        if isinstance(event, TurnStarted):
            self._holder = number
        elif isinstance(event, TurnFinished) and self._holder == number:
            self._holder = None
        await self._sink(event)

    async def _catch_up(self) -> None:
        """Tell what waited: oldest first while nobody holds the floor, then the holder's own events."""
        while self._waiting:
            index = 0 if self._holder is None else next(
                (i for i, (lane, _) in enumerate(self._waiting) if lane == self._holder), None)
            if index is None:
                return
            number, event = self._waiting.pop(index)
            await self._tell(number, event)

    async def drain(self) -> None:
        """Tell whatever still waits (a lane stopped in the middle of a turn holds the floor no longer)."""
        async with self._lock:
            self._holder = None
            while self._waiting:
                await self._tell(*self._waiting.pop(0))
                self._holder = None


async def at_once(sink: Emit, *steps: Coroutine[Any, Any, Any]) -> list[Any]:
    """Run ``steps`` at the same time, each in its own lane, and return their results in order. The first
    error cancels the other steps and is raised once they have stopped; their events told so far stay told."""
    floor = _Floor(sink)
    tasks = []
    for number, step in enumerate(steps):
        context = contextvars.copy_context()
        context.run(_lane.set, floor.lane(number))
        tasks.append(asyncio.create_task(step, context=context))
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    finally:
        for task in tasks:
            task.cancel()  # no-op for those already done
        await asyncio.wait(tasks)
    failed = next((task for task in tasks if not task.cancelled() and task.exception() is not None), None)
    if failed is None and any(task.cancelled() for task in tasks):
        raise asyncio.CancelledError
    await floor.drain()
    if failed is not None:
        raise failed.exception()  # type: ignore[misc]
    return [task.result() for task in tasks]
