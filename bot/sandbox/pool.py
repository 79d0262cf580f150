"""Containers started ahead of need, per language, each used for one run only.

With a warm pool (``warm_pool = true``) the pool keeps ``size`` ready; a run takes one (skipping create +
start) and, once it is done, has the pool start a replacement in the background (``fill``): started during
the run, it would compete with the tests for the CPU. Without one (size 0) it holds only what a run
asked to have prepared: one container, started while the team's models write, for the test run to come.
A used container is never handed out again, so no conversation ever sees another's files or leftover
processes; "reset between runs" is a fresh container. A prepared container no run took is not kept: it goes
when the run waiting for it is stopped, or after ``PREPARED_FOR_S`` unclaimed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from docker.models.containers import Container

PREPARED_FOR_S = 300.0  # a prepared container no run claimed by then is removed (the round's model took longer)
Starter = Callable[[str], Awaitable[Container]]
Remover = Callable[[Container], Awaitable[None]]


class WarmPool:
    def __init__(self, size: int, start: Starter, remove: Remover, prepared_for_s: float = PREPARED_FOR_S) -> None:
        self._size, self._prepared_for_s = size, prepared_for_s
        self._start, self._remove = start, remove
        self._ready: dict[str, list[Container]] = {}
        self._filling: set[asyncio.Task[None]] = set()
        self._removing: set[asyncio.Future[None]] = set()
        self._unwanted: dict[str, int] = {}  # containers still starting whose waiting run was stopped
        self._closed = False

    def take(self, language: str) -> Container | None:
        """A ready container for ``language`` (or None); ``fill`` starts its replacement."""
        ready = self._ready.setdefault(language, [])
        return ready.pop() if ready else None

    async def claim(self, language: str) -> Container | None:
        """As ``take``, but a container still starting for ``language`` (prepared for this very run, say) is
        waited for rather than left idle while the run starts another."""
        pending = [task for task in self._filling if task.get_name() == language]
        if not self._ready.get(language) and pending:
            try:
                await asyncio.wait(pending)
            except asyncio.CancelledError:  # the run was stopped: the container it waited for is nobody's,
                self._unwanted[language] = self._unwanted.get(language, 0) + 1
                await asyncio.shield(asyncio.wait(pending))  # and is gone before the stop completes
                raise
        return self.take(language)

    def ready(self, language: str) -> int:
        return len(self._ready.get(language, []))

    def fill(self, language: str) -> None:
        """Start containers in the background until ``size`` are ready or on their way."""
        self._top_up(language, self._size)

    def prepare(self, language: str) -> None:
        """Have one container for ``language`` ready or on its way, even when the pool keeps none."""
        self._top_up(language, max(self._size, 1))

    def _top_up(self, language: str, wanted: int) -> None:
        if self._closed:
            return
        pending = sum(1 for t in self._filling if t.get_name() == language)
        for _ in range(wanted - len(self._ready.get(language, [])) - pending):
            task = asyncio.get_running_loop().create_task(self._add(language), name=language)
            self._filling.add(task)
            task.add_done_callback(self._filling.discard)

    async def _add(self, language: str) -> None:
        # A pool that cannot start a container just stays empty: the run starts its own and reports why.
        with contextlib.suppress(Exception):
            container = await self._start(language)
            if self._closed or self._unwanted.get(language):
                self._unwanted[language] = max(0, self._unwanted.get(language, 0) - 1)
                await self._remove(container)
                return
            self._ready.setdefault(language, []).append(container)
            if len(self._ready[language]) > self._size:  # prepared for a run, not kept by the pool
                asyncio.get_running_loop().call_later(self._prepared_for_s, self._expire, language, container)

    def _expire(self, language: str, container: Container) -> None:
        ready = self._ready.get(language, [])
        if container in ready and len(ready) > self._size:
            ready.remove(container)
            task: asyncio.Future[None] = asyncio.ensure_future(self._remove(container))
            self._removing.add(task)
            task.add_done_callback(self._removing.discard)

    async def settle(self) -> None:
        """Wait until the containers on their way are ready (or failed to start), and the expired ones gone."""
        await asyncio.gather(*list(self._filling), *list(self._removing), return_exceptions=True)

    async def close(self) -> None:
        self._closed = True
        # Not cancelled: a start half done would leave its container behind; finished, it removes it.
        await asyncio.gather(*list(self._filling), *list(self._removing), return_exceptions=True)
        idle = [c for ready in self._ready.values() for c in ready]
        self._ready.clear()
        await asyncio.gather(*(self._remove(c) for c in idle), return_exceptions=True)
