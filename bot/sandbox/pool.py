"""Containers started ahead of need, per language, each used for one run only.

With a warm pool (``warm_pool = true``) the pool keeps ``size`` ready; a run takes one (skipping create +
start) and the pool starts a replacement in the background. Without one (size 0) it holds only what a run
asked to have prepared: one container, started while the team's models write, for the test run to come.
A used container is never handed out again, so no conversation ever sees another's files or leftover
processes; "reset between runs" is a fresh container.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from docker.models.containers import Container

Starter = Callable[[str], Awaitable[Container]]
Remover = Callable[[Container], Awaitable[None]]


class WarmPool:
    def __init__(self, size: int, start: Starter, remove: Remover) -> None:
        self._size = size
        self._start, self._remove = start, remove
        self._ready: dict[str, list[Container]] = {}
        self._filling: set[asyncio.Task[None]] = set()
        self._closed = False

    def take(self, language: str) -> Container | None:
        """A ready container for ``language`` (or None), and a replacement on its way."""
        ready = self._ready.setdefault(language, [])
        container = ready.pop() if ready else None
        self.fill(language)
        return container

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
            if self._closed:
                await self._remove(container)
            else:
                self._ready.setdefault(language, []).append(container)

    async def close(self) -> None:
        self._closed = True
        # Not cancelled: a start half done would leave its container behind; finished, it removes it.
        await asyncio.gather(*list(self._filling), return_exceptions=True)
        idle = [c for ready in self._ready.values() for c in ready]
        self._ready.clear()
        await asyncio.gather(*(self._remove(c) for c in idle), return_exceptions=True)
