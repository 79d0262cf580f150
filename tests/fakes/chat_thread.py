"""A ``ChatThread`` that keeps what the run renderer did to it, for tests of the renderer itself (the
platforms' own threads are tested against their loopback fakes)."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field

from agents.errors import CheckInError
from bot.chat.progress import Progress
from bot.chat.thread import FULL, ChatPlatform, ThreadStyle


@dataclass
class Posted:
    id: str
    text: str
    stop: str = ""
    progress: Progress | None = None
    edits: list[str] = field(default_factory=list)  # every text an edit gave it, in order
    files: dict[str, str] = field(default_factory=dict)


class RecordingThread:
    def __init__(self, refuse_uploads: bool = False) -> None:
        self.messages: list[Posted] = []
        self.calls: list[str] = []  # "post", "edit", "upload", "working", in order
        self.statuses: list[str] = []  # what ``working`` was told, in order
        self.refuse_uploads = refuse_uploads
        self.changed = asyncio.Event()
        self._ids = itertools.count(1)

    async def post(self, text: str, stop: str = "", progress: Progress | None = None) -> str:
        message = Posted(str(next(self._ids)), text, stop, progress)
        self.messages.append(message)
        self._record("post")
        return message.id

    async def edit(self, message_id: str, text: str, stop: str = "", progress: Progress | None = None) -> None:
        message = next(m for m in self.messages if m.id == message_id)
        message.text, message.stop, message.progress = text, stop, progress
        message.edits.append(text)
        self._record("edit")

    async def upload(self, files: Mapping[str, str], comment: str) -> str:
        self._record("upload")
        if self.refuse_uploads:
            raise CheckInError("The platform refused the files.")
        message = Posted(str(next(self._ids)), comment, files=dict(files))
        self.messages.append(message)
        return f"https://chat.example/{message.id}"

    async def working(self, text: str) -> None:
        self.statuses.append(text)
        self._record("working")

    def texts(self) -> list[str]:
        return [m.text for m in self.messages]

    def _record(self, call: str) -> None:
        self.calls.append(call)
        self.changed.set()


class PlainMarkup:
    """Markdown shown as it is (as Discord and the web do)."""

    def text(self, markdown: str) -> str:
        return markdown

    def mention(self, user_id: str) -> str:
        return f"@{user_id}"


def platform(max_message_chars: int = 2000, update_interval_s: float = 0.0, max_inline_code_chars: int = 1500,
             name: str = "test", detail: str = FULL) -> ChatPlatform:
    return ChatPlatform(name, PlainMarkup(), ThreadStyle(max_message_chars, update_interval_s, max_inline_code_chars,
                                                         detail))
