"""One web conversation as its pages show it: the run renderer's messages and the person's own tasks, and
the pages watching it. It is the renderer's ``ChatThread``: a post, an edit or an upload changes a message
here and goes, as an op, to every page watching.

What a page is sent (JSON, one server-sent event each):

    {"type": "message", "message": {...}}                a message, new or replaced whole
    {"type": "edit", "id", "keep", "text", "stop"}        its first ``keep`` UTF-16 code units stay, ``text`` follows
    {"type": "remove", "id"}
    {"type": "panel", "panel": {...}}                     files, test rounds, status, usage, result (``panel``)
    {"type": "conversations", "conversations": [...]}     the person's list of conversations changed
    {"type": "working", "text"}                           who is at work now ("Programmer is writing…"), or ""

A turn being written is edited many times and mostly grows, so an edit sends only what changed at its end.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.chat.progress import Progress
from bot.safety.inert import in_written_order

Op = dict[str, Any]
MAX_PENDING_OPS = 2000  # a page this far behind is dropped; it reconnects and starts again from a snapshot


class Watcher:
    """One page's stream: the ops it has not been sent yet. ``None`` in the queue ends the stream."""

    def __init__(self, user: str) -> None:
        self.user = user
        self.queue: asyncio.Queue[Op | None] = asyncio.Queue(MAX_PENDING_OPS)
        self.closed = False

    def send(self, op: Op) -> None:
        if self.closed:
            return
        try:
            self.queue.put_nowait(op)
        except asyncio.QueueFull:  # too slow to keep up: better a fresh snapshot than an unbounded backlog
            self.close()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        while not self.queue.empty():
            self.queue.get_nowait()
        self.queue.put_nowait(None)


@dataclass
class Message:
    id: str
    author: str  # "bot", or "you" for the person's own task
    text: str  # Markdown; the page renders it as untrusted
    stop: str = ""  # the run whose Stop control the message carries
    files: dict[str, str] = field(default_factory=dict)  # files the bot attached, name -> content
    attached: tuple[str, ...] = ()  # the names of the files the person gave with a task

    def as_json(self) -> Op:
        return {"id": self.id, "author": self.author, "text": self.text, "stop": self.stop, "files": self.files,
                "attached": list(self.attached)}


class Conversation:
    """The messages of one conversation and the pages watching it. ``changed`` is called when something
    lasting happened (a message posted, a Stop control gone), so the side panel can be brought up to date."""

    def __init__(self, key: str, owner: str) -> None:
        self.key, self.owner = key, owner
        self.messages: dict[str, Message] = {}
        self.watchers: set[Watcher] = set()
        self.panel: Op = {}
        self.working_text = ""
        self.changed: Callable[[Conversation], None] = lambda _: None
        self.relay: Callable[[Conversation, Op], None] = lambda _, __: None  # to the other replicas' copies
        self._ids = itertools.count(1)
        self._prefix = os.urandom(3).hex()  # ids stay distinct when a conversation is drawn again

    # -- bot.chat.thread.ChatThread -----------------------------------------------------------

    async def post(self, text: str, stop: str = "", progress: Progress | None = None) -> str:
        return self.add("bot", text, stop).id  # the status message's text shows the progress already

    async def edit(self, message_id: str, text: str, stop: str = "", progress: Progress | None = None) -> None:
        message = self.messages.get(message_id)
        if message is None:
            return
        old_text, old_stop = message.text, message.stop
        message.text, message.stop = text, stop
        keep = _common_prefix(old_text, text)
        self._broadcast({"type": "edit", "id": message_id, "keep": _utf16_length(text[:keep]), "text": text[keep:],
                         "stop": stop})
        if stop != old_stop:
            self.changed(self)

    async def upload(self, files: Mapping[str, str], comment: str) -> str:
        """The files are shown in the thread under ``comment``; every file of the run is in the side panel
        and its zip too, so there is no separate link."""
        # Shown on the page only (the zip gives them exact): nothing in them may read otherwise than it is.
        self.add("bot", comment, files={name: in_written_order(content) for name, content in files.items()})
        return ""

    async def working(self, text: str) -> None:
        if text != self.working_text:
            self.working_text = text
            self._broadcast({"type": "working", "text": text})

    # -- the person's side ----------------------------------------------------------------------

    def say(self, text: str, attachments: tuple[str, ...] = ()) -> str:
        """The person's own message: a task, and the names of the files given with it."""
        return self.add("you", text, attached=attachments).id

    def add(self, author: str, text: str, stop: str = "", files: dict[str, str] | None = None,
            attached: tuple[str, ...] = ()) -> Message:
        message = Message(f"{self._prefix}-{next(self._ids)}", author, text, stop, files or {}, attached)
        self.messages[message.id] = message
        self._broadcast({"type": "message", "message": message.as_json()})
        self.changed(self)
        return message

    def remove(self, message_id: str) -> None:
        if self.messages.pop(message_id, None) is not None:
            self._broadcast({"type": "remove", "id": message_id})

    def snapshot(self) -> list[Op]:
        return [m.as_json() for m in self.messages.values()]

    # -- another replica's copy (``adapters.web.relay``) --------------------------------------------

    def apply(self, op: Op) -> bool:
        """An op the copy of this conversation on another replica sent its pages: applied here and sent to this
        replica's pages. True when something lasting changed (the side panel is read again)."""
        kind = op.get("type")
        if kind == "message":
            data = op["message"]
            self.messages[data["id"]] = Message(data["id"], data["author"], data["text"], data["stop"],
                                                dict(data["files"]), tuple(data["attached"]))
        elif kind == "edit":
            message = self.messages.get(op["id"])
            if message is None:
                return False
            lasting = message.stop != op["stop"]
            message.text, message.stop = _utf16_prefix(message.text, op["keep"]) + op["text"], op["stop"]
            self._send(op)
            return lasting
        elif kind == "remove":
            self.messages.pop(op["id"], None)
        elif kind == "working":
            self.working_text = op["text"]
        else:
            return False
        self._send(op)
        return kind != "working"

    def replace(self, snapshot: list[Op], working: str) -> None:
        """The live messages of a run under way on another replica, in place of the ones drawn from the store:
        the pages watching reconnect to see them (the next ops name these messages)."""
        self.messages = {data["id"]: Message(data["id"], data["author"], data["text"], data["stop"],
                                             dict(data["files"]), tuple(data["attached"])) for data in snapshot}
        self.working_text = working
        for watcher in list(self.watchers):
            watcher.close()

    def _broadcast(self, op: Op) -> None:
        self._send(op)
        self.relay(self, op)

    def _send(self, op: Op) -> None:
        for watcher in list(self.watchers):
            watcher.send(op)


def _utf16_length(text: str) -> int:
    """``text``'s length as the page's JavaScript counts it (an emoji beyond the BMP is two units), so that
    its ``slice(0, keep)`` keeps exactly the common prefix."""
    return len(text.encode("utf-16-le")) // 2


def _utf16_prefix(text: str, units: int) -> str:
    """The start of ``text`` that is ``units`` UTF-16 code units long (what an edit's ``keep`` counts)."""
    return text.encode("utf-16-le")[: units * 2].decode("utf-16-le", errors="ignore")


def _common_prefix(a: str, b: str) -> int:
    limit = min(len(a), len(b))
    if a[:limit] == b[:limit]:
        return limit
    low, high = 0, limit  # the longest common prefix, by halves: a long turn is compared in a few steps
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low
