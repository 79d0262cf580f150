"""The status message at the top of a run's thread: where the run is (``bot.chat.progress``), kept current
at the platform's edit pace, with the Stop control for as long as the run can be stopped."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from agents.events import Event
from bot.chat.progress import Progress, ProgressTracker, progress_text
from bot.chat.split import split_message
from bot.chat.thread import ChatThread

Redact = Callable[[str], str]
Show = Callable[[str], str]  # Markdown -> the platform's markup, secrets masked


class StatusMessage:
    def __init__(self, thread: ChatThread, run_id: str, follows: str | None, show: Show, redact: Redact,
                 interval_s: float, max_chars: int) -> None:
        self._thread, self._show, self._redact, self._interval_s = thread, show, redact, interval_s
        self._max_chars = max_chars
        self._tracker = ProgressTracker(run_id, follows)
        self.message_id = ""
        self._dirty = False
        self._drawn_at = 0.0

    async def post(self) -> None:
        progress = self._progress()
        self.message_id = await self._thread.post(self._shown(progress), stop=progress.run_id,
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
        await self._thread.edit(self.message_id, self._shown(progress),
                                stop="" if progress.finished else progress.run_id, progress=progress)

    def _shown(self, progress: Progress) -> str:
        """The status as the platform shows it, within one message: a platform refuses a longer one, and the message
        would stay as it was (its Stop control too) to the run's end. A long run's oldest steps are folded into one
        line (the fewest that make it fit: a bisection), so how the run stands and its latest steps stay in view."""
        def text(folded: int) -> str:
            return self._show(progress_text(progress, folded))

        low, high = 0, len(progress.steps)
        while low < high:
            middle = (low + high) // 2
            if len(text(middle)) <= self._max_chars:
                high = middle
            else:
                low = middle + 1
        shown = text(low)
        return shown if len(shown) <= self._max_chars else split_message(shown, self._max_chars)[0]

    def _progress(self) -> Progress:
        """The progress with every secret masked: its details quote the models."""
        progress = self._tracker.snapshot()
        steps = tuple(dataclasses.replace(s, title=self._redact(s.title), detail=self._redact(s.detail))
                      for s in progress.steps)
        return dataclasses.replace(progress, headline=self._redact(progress.headline), steps=steps,
                                   note=self._redact(progress.note))
