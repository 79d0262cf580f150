"""The status message at the top of a run's thread: where the run is (``bot.chat.progress``), kept current
at the platform's edit pace, with the Stop control for as long as the run can be stopped."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from agents.events import Event
from bot.chat.progress import Progress, ProgressTracker, progress_text
from bot.chat.thread import ChatThread

Redact = Callable[[str], str]
Show = Callable[[str], str]  # Markdown -> the platform's markup, secrets masked


class StatusMessage:
    def __init__(self, thread: ChatThread, run_id: str, follows: str | None, show: Show, redact: Redact,
                 interval_s: float) -> None:
        self._thread, self._show, self._redact, self._interval_s = thread, show, redact, interval_s
        self._tracker = ProgressTracker(run_id, follows)
        self.message_id = ""
        self._dirty = False
        self._drawn_at = 0.0

    async def post(self) -> None:
        progress = self._progress()
        self.message_id = await self._thread.post(self._show(progress_text(progress)), stop=progress.run_id,
                                                  progress=progress)
        self._drawn_at = time.monotonic()

    def observe(self, event: Event) -> None:
        self._dirty = self._tracker.observe(event) or self._dirty

    def due_in(self) -> float | None:
        """Seconds until the message may be edited to show what changed; None when nothing did."""
        if not self._dirty:
            return None
        return max(0.0, self._drawn_at + self._interval_s - time.monotonic())

    async def redraw(self, now: bool = False) -> None:
        """Show what changed, when the edit pace allows it (``now``: the run is over, show it at once)."""
        if not self._dirty or not (now or self.due_in() == 0.0):
            return
        self._dirty, self._drawn_at = False, time.monotonic()
        progress = self._progress()
        await self._thread.edit(self.message_id, self._show(progress_text(progress)),
                                stop="" if progress.finished else progress.run_id, progress=progress)

    def _progress(self) -> Progress:
        """The progress with every secret masked: its details quote the models."""
        progress = self._tracker.snapshot()
        steps = tuple(dataclasses.replace(s, title=self._redact(s.title), detail=self._redact(s.detail))
                      for s in progress.steps)
        return dataclasses.replace(progress, headline=self._redact(progress.headline), steps=steps,
                                   note=self._redact(progress.note))
