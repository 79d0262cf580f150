"""Each message at the platform's edit pace: a ``ChatThread`` that holds back an edit coming sooner than
``interval_s`` after the message was last written (posted or edited), and lets a later edit of the same
message replace the one held back, so a message is never edited twice where once, later, shows the same.

The renderer draws as events come; this decides when each message is written. The drawing task sends
what has fallen due (``flush``, at ``due_in``) and, before a run's last message, everything held back
(``drain``), so once the final summary is in the thread every other message shows its last state.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass

from bot.chat.progress import Progress
from bot.chat.thread import ChatThread, MessageGone

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Edit:
    text: str
    stop: str
    progress: Progress | None


class PacedThread:
    def __init__(self, thread: ChatThread, interval_s: float) -> None:
        self._thread, self._interval_s = thread, interval_s
        self._written: dict[str, float] = {}  # message id -> when it was last written
        self._held: dict[str, _Edit] = {}  # message id -> its newest edit, not yet due
        self._gone: set[str] = set()  # messages a person deleted: never edited again

    async def post(self, text: str, stop: str = "", progress: Progress | None = None) -> str:
        message_id = await self._thread.post(text, stop, progress)
        self._written[message_id] = time.monotonic()
        return message_id

    async def edit(self, message_id: str, text: str, stop: str = "", progress: Progress | None = None) -> None:
        """Edit now if the message is due, else when it is (the newest text held for it wins)."""
        if message_id not in self._gone:
            self._held[message_id] = _Edit(text, stop, progress)
        await self.flush()

    async def upload(self, files: Mapping[str, str], comment: str) -> str:
        return await self._thread.upload(files, comment)

    async def working(self, text: str) -> None:
        await self._thread.working(text)

    def due_in(self) -> float | None:
        """Seconds until the first held edit may go out; None when none is held."""
        return min((self._message_due_in(m) for m in self._held), default=None)

    async def flush(self) -> None:
        """Send every held edit whose message is due."""
        for message_id in [m for m in self._held if self._message_due_in(m) == 0.0]:
            edit = self._held.pop(message_id)
            self._written[message_id] = time.monotonic()
            try:
                await self._thread.edit(message_id, edit.text, edit.stop, edit.progress)
            except MessageGone:
                self._gone.add(message_id)
                log.info("message %s was deleted from its thread; the run goes on without editing it", message_id)

    async def drain(self) -> None:
        """Send every held edit, each when its message is due."""
        while (wait := self.due_in()) is not None:
            await asyncio.sleep(wait)
            await self.flush()

    def _message_due_in(self, message_id: str) -> float:
        written = self._written.get(message_id)
        return 0.0 if written is None else max(0.0, written + self._interval_s - time.monotonic())
