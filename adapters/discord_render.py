"""One run's events as messages in its Discord thread.

The run's sink only queues events, so a slow or rate-limited Discord never holds up the team; one task per
run posts them in order. Each agent's turn is its own message (more when it outgrows the limit), edited
as it streams at most once per ``update_interval_s``; when the turn ends, long code blocks become file
attachments. Files the fallback publisher attaches go through the same queue, so they land in order too.
"""

from __future__ import annotations

import asyncio
import io
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import discord

from agents.errors import CheckInError
from agents.events import Event, Notice, RunFinished, TestReported, TextDelta, TurnFinished, TurnStarted
from agents.fences import inert
from agents.types import CheckInResult, Publication
from bot.chat.long_code import inline_or_attach
from bot.chat.split import split_message, whole_lines
from bot.chat.words import agent_title, attached_files, final_summary, report_line, turn_header
from bot.config import DiscordConfig

log = logging.getLogger(__name__)

FILES_PER_MESSAGE = 10  # Discord's limit on attachments in one message
WORKING = "…"
STATUS_EMOJI = {"passed": "✅", "failed": "❌", "stopped": "⏹️", "error": "⚠️"}

Redact = Callable[[str], str]


@dataclass(frozen=True)
class CodeFile:
    name: str
    content: str


@dataclass
class LiveTurn:
    """The messages showing one agent's turn, and what they show."""

    header: str
    text: str = ""
    messages: list[discord.Message] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)
    flushed_at: float = 0.0
    dirty: bool = False


@dataclass
class FilePost:
    """A request to attach files, answered with the first message that carries them."""

    content: str
    files: list[CodeFile]
    done: asyncio.Future[discord.Message | None]


class ThreadRenderer:
    """The event sink of one run. ``open`` posts the run's control message (with the Stop button)."""

    def __init__(self, thread: discord.abc.Messageable, config: DiscordConfig, redact: Redact) -> None:
        self._thread, self._config, self._redact = thread, config, redact
        self._queue: asyncio.Queue[Event | FilePost] = asyncio.Queue()
        self._turn: LiveTurn | None = None
        self._control: discord.Message | None = None
        self._task: asyncio.Task[None] | None = None
        self.finished: RunFinished | None = None

    async def open(self, run_id: str, view: discord.ui.View) -> None:
        self._control = await self._thread.send(f"Working on it (run `{run_id}`).", view=view)
        self._task = asyncio.create_task(self._consume(), name=f"discord-render-{run_id}")

    async def __call__(self, event: Event) -> None:
        self._queue.put_nowait(event)

    async def done(self) -> RunFinished | None:
        """Wait until the run's last message is posted."""
        if self._task:
            await self._task
        return self.finished

    async def refuse(self, sentence: str) -> None:
        """The run could not start after all: the control message says why, without a Stop button."""
        if self._task:
            self._task.cancel()
        if self._control:
            await self._control.edit(content=self._redact(sentence), view=None)

    def publisher(self) -> ThreadFiles:
        return ThreadFiles(self)

    async def attach(self, content: str, files: list[CodeFile]) -> discord.Message | None:
        if self._task is None or self._task.done():  # no queue to keep the order in any more
            return await self._send_files(content, files)
        post = FilePost(content, files, asyncio.get_running_loop().create_future())
        self._queue.put_nowait(post)
        return await post.done

    # -- the consuming task ---------------------------------------------------------------------

    async def _consume(self) -> None:
        # One getter outlives the timeouts, so no event is lost to a cancelled ``queue.get()``.
        getter: asyncio.Task[Event | FilePost] | None = None
        try:
            while True:
                getter = getter or asyncio.create_task(self._queue.get())
                done, _ = await asyncio.wait({getter}, timeout=self._until_due())
                if not done:  # the stream paused: show what has arrived
                    await self._guarded(self._flush_turn, False)
                    continue
                item, getter = getter.result(), None
                if isinstance(item, FilePost):
                    await self._post_files(item)
                    continue
                await self._guarded(self._render, item)
                if isinstance(item, RunFinished):
                    return
        finally:
            if getter:
                getter.cancel()

    def _until_due(self) -> float | None:
        turn = self._turn
        if turn is None or not turn.dirty:
            return None
        return max(0.0, turn.flushed_at + self._config.update_interval_s - time.monotonic())

    async def _guarded(self, step: Callable[..., Awaitable[None]], *args: object) -> None:
        """One failed Discord call (a deleted thread, an outage) is logged; the run goes on."""
        try:
            await step(*args)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("could not update the Discord thread")

    async def _render(self, event: Event) -> None:
        if isinstance(event, TurnStarted):
            await self._start_turn(event)
        elif isinstance(event, TextDelta) and self._turn:
            self._turn.text += event.text
            self._turn.dirty = True
            if self._until_due() == 0.0:
                await self._flush_turn(False)
        elif isinstance(event, TurnFinished):
            await self._finish_turn(event)
        elif isinstance(event, TestReported):
            await self._post(_test_text(event))
        elif isinstance(event, Notice):
            await self._post(f"ℹ️ {event.text}")
        elif isinstance(event, RunFinished):
            await self._finish_run(event)

    # -- turns ----------------------------------------------------------------------------------

    async def _start_turn(self, event: TurnStarted) -> None:
        await self._flush_turn(True)  # a turn that never finished keeps what it showed
        self._turn = LiveTurn(turn_header(event.agent, event.round))
        await self._show(self._turn, WORKING)

    async def _flush_turn(self, final: bool) -> None:
        turn = self._turn
        if turn is None or not (turn.dirty or final):
            return
        # Whole lines only until the turn ends (see ``whole_lines``); ``_finish_turn`` shows the whole text.
        shown = whole_lines(turn.text)
        await self._show(turn, shown if shown.strip() else WORKING)
        if final:
            self._turn = None

    async def _finish_turn(self, event: TurnFinished) -> None:
        turn = self._turn or LiveTurn(turn_header(event.agent, event.round))
        self._turn = None
        inlined = inline_or_attach(event.text, self._config.inline_code_max_chars, event.files)
        await self._show(turn, inlined.text.strip() or "(no text)")
        if inlined.files:
            files = [CodeFile(name, content) for name, content in inlined.files.items()]
            names = ", ".join(f"`{f.name}`" for f in files)
            await self._send_files(f"📎 {agent_title(event.agent)}: {names}", files)

    async def _show(self, turn: LiveTurn, text: str) -> None:
        """Make the turn's messages show ``text``: edit those that changed, add or delete the rest."""
        pieces = split_message(self._redact(f"{turn.header}\n{text}"), self._config.max_message_chars)
        for index, piece in enumerate(pieces):
            if index >= len(turn.messages):
                turn.messages.append(await self._thread.send(piece))
                turn.shown.append(piece)
            elif turn.shown[index] != piece:
                turn.messages[index] = await turn.messages[index].edit(content=piece)
                turn.shown[index] = piece
        for extra in turn.messages[len(pieces):]:
            await extra.delete()
        del turn.messages[len(pieces):], turn.shown[len(pieces):]
        turn.flushed_at, turn.dirty = time.monotonic(), False

    # -- the rest of the run --------------------------------------------------------------------

    async def _finish_run(self, event: RunFinished) -> None:
        await self._flush_turn(True)
        self.finished = event
        emoji = STATUS_EMOJI.get(event.status, "")
        await self._post(f"{emoji} {final_summary(event)}".strip())
        if self._control:
            await self._control.edit(content=f"Run `{event.run_id}`: {event.status} {emoji}".strip(), view=None)

    async def _post(self, text: str) -> None:
        for piece in split_message(self._redact(text), self._config.max_message_chars):
            await self._thread.send(piece)

    async def _post_files(self, post: FilePost) -> None:
        # A stopped run cancels ``post.done`` (its publisher stops waiting), before or during the upload;
        # settling it then would raise here and end the drawing before the run's last message.
        if post.done.done():
            return
        try:
            message = await self._send_files(post.content, post.files)
        except Exception as error:  # the publisher reports it; the run goes on
            if not post.done.done():
                post.done.set_exception(error)
            return
        if not post.done.done():
            post.done.set_result(message)

    async def _send_files(self, content: str, files: list[CodeFile]) -> discord.Message | None:
        first: discord.Message | None = None
        for start in range(0, len(files), FILES_PER_MESSAGE):
            batch = [_file(f, self._redact) for f in files[start:start + FILES_PER_MESSAGE]]
            message = await self._thread.send(self._redact(content) if start == 0 else None, files=batch)
            first = first or message
        return first


class ThreadFiles:
    """The fallback publisher: the finished files, attached to the thread, found by the message's link."""

    def __init__(self, renderer: ThreadRenderer) -> None:
        self._renderer = renderer

    async def publish(self, publication: Publication) -> CheckInResult:
        files = [CodeFile(name, content) for name, content in attached_files(publication).items()]
        content = f"📎 Files of run `{publication.run_id}` ({publication.status})"
        try:
            message = await self._renderer.attach(content, files)
        except discord.HTTPException as error:  # the Manager reports a failed check-in and keeps the files
            log.warning("could not attach the files of run %s: %s", publication.run_id, error)
            raise CheckInError(f"Discord did not take the files ({error.status} {error.text or 'error'}).") from None
        return CheckInResult(location=message.jump_url if message else "(no files)", kind="attachments")


def _file(item: CodeFile, redact: Redact) -> discord.File:
    return discord.File(io.BytesIO(redact(item.content).encode("utf-8")), filename=item.name)


def _test_text(event: TestReported) -> str:
    text = f"🧪 {event.language}: {report_line(event.report)}"
    if not event.report.ok:
        output = inert(event.report.output(1500))  # output must not close our block
        text += f"\n```\n{output}\n```"
    return text
