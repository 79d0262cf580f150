"""Renders one run's events into its Slack thread: a reply per agent turn, edited live as tokens arrive.

Events are queued and drawn by one task per run, in order, so a slow or rate-limited Slack never holds
up the team, and edits of a message are spaced by ``update_interval_s`` (Slack allows about one a
second). A turn too long for one message continues in further replies; long files become snippets.
The renderer is also the run's fallback publisher: attaching the files waits its turn in the same
queue, so they land after the turns before them rather than wherever the drawing has got to.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field

from adapters.slack_text import escape, live_view, pieces, to_mrkdwn
from adapters.slack_thread import Thread, ThreadPublisher
from agents.events import Event, Notice, RunFinished, TestReported, TextDelta, TurnFinished, TurnStarted
from agents.fences import inert
from agents.types import CheckInResult, Publication
from bot.chat.long_code import inline_or_attach
from bot.chat.split import whole_lines
from bot.chat.words import STATUS_WORDS, final_summary, turn_header
from bot.config import SlackConfig

log = logging.getLogger(__name__)

FAILING_OUTPUT_CHARS = 1500
WRITING = "_writing…_"


@dataclass
class _Live:
    """The reply of the turn being written."""

    ts: str
    header: str
    text: str = ""
    dirty: bool = False
    edited_at: float = 0.0


@dataclass
class _Publish:
    """A check-in waiting in the queue for its turn."""

    publication: Publication
    result: asyncio.Future[CheckInResult] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class ThreadRenderer:
    """The event sink and fallback publisher of one run."""

    def __init__(self, thread: Thread, settings: SlackConfig) -> None:
        self._thread, self._settings = thread, settings
        self.status_ts = ""  # the reply holding the Stop button, set before ``start``
        self._queue: asyncio.Queue[Event | _Publish] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._live: _Live | None = None

    async def __call__(self, event: Event) -> None:
        self._queue.put_nowait(event)  # never waits: the run goes on while Slack is being written to

    async def publish(self, publication: Publication) -> CheckInResult:
        """``agents.protocols.Publisher``: the files attached to the thread, in order with the turns."""
        job = _Publish(publication)
        self._queue.put_nowait(job)
        return await job.result

    def start(self) -> asyncio.Task[None]:
        """Start drawing; the task ends once the run's ``RunFinished`` is drawn."""
        if self._task is None:
            self._task = asyncio.create_task(self._work(), name="slack-render")
        return self._task

    async def _work(self) -> None:
        while True:
            try:
                event = await asyncio.wait_for(self._queue.get(), self._time_to_edit())
            except TimeoutError:
                await self._guard(self._edit_live())
                continue
            if isinstance(event, _Publish):
                await self._publish(event)
                continue
            await self._guard(self._draw(event))
            if isinstance(event, RunFinished):
                return

    async def _publish(self, job: _Publish) -> None:
        if job.result.done():  # the run was stopped while its check-in waited
            return
        try:
            result = await ThreadPublisher(self._thread).publish(job.publication)
        except Exception as error:  # CheckInError for the Manager to report; anything else too, not lost here
            if not job.result.done():
                job.result.set_exception(error)
            return
        if not job.result.done():
            job.result.set_result(result)

    async def _guard(self, step: Awaitable[None]) -> None:
        """One event that Slack refuses (after the client's retries) must not silence the rest."""
        try:
            await step
        except Exception:
            log.exception("drawing a run's event in Slack failed")

    def _time_to_edit(self) -> float | None:
        live = self._live
        if live is None or not live.dirty:
            return None
        return max(0.0, live.edited_at + self._settings.update_interval_s - time.monotonic())

    async def _draw(self, event: Event) -> None:
        if isinstance(event, TurnStarted):
            await self._start_turn(event)
        elif isinstance(event, TextDelta) and self._live is not None:
            self._live.text += event.text
            self._live.dirty = True
            if self._time_to_edit() == 0.0:
                await self._edit_live()
        elif isinstance(event, TurnFinished):
            await self._finish_turn(event)
        elif isinstance(event, TestReported):
            await self._post(_test_text(event))
        elif isinstance(event, Notice):
            await self._thread.post(f"_{escape(event.text)}_")
        elif isinstance(event, RunFinished):
            await self._finish_run(event)

    async def _start_turn(self, event: TurnStarted) -> None:
        header = _header(event.agent, event.round)
        ts = await self._thread.post(f"{header}\n{WRITING}")
        self._live = _Live(ts=ts, header=header, edited_at=time.monotonic())

    async def _edit_live(self) -> None:
        live = self._live
        if live is None or not live.dirty:
            return
        live.dirty = False
        shown = whole_lines(live.text)  # half a secret would slip past redaction (and half words flicker)
        if not shown.strip():
            return
        live.edited_at = time.monotonic()
        body = live_view(shown, self._room(live.header))
        await self._thread.update(live.ts, f"{live.header}\n{body}\n{WRITING}")

    async def _finish_turn(self, event: TurnFinished) -> None:
        live, self._live = self._live, None
        inlined = inline_or_attach(event.text, self._settings.upload_files_over_chars, event.files)
        footer = (f"_{event.usage.prompt_tokens:,} in / {event.usage.completion_tokens:,} out tokens · "
                  f"{event.duration_s:.1f}s" + (f" · {escape(event.model)}_" if event.model else "_"))
        header = live.header if live else _header(event.agent, event.round)
        parts = pieces(inlined.text, self._room(header))
        parts[0] = f"{header}\n{parts[0]}"
        if len(parts[-1]) + len(footer) + 1 <= self._settings.max_message_chars:
            parts[-1] += "\n" + footer
        else:
            parts.append(footer)
        if live:
            await self._thread.update(live.ts, parts[0])
        else:
            await self._thread.post(parts[0])
        for part in parts[1:]:
            await self._thread.post(part)
        if inlined.files:
            await self._thread.upload(inlined.files)

    async def _finish_run(self, event: RunFinished) -> None:
        live, self._live = self._live, None
        if live is not None:  # the run ended mid-turn (stopped, or an error): keep what was written
            shown = whole_lines(live.text)
            body = live_view(shown, self._room(live.header)) if shown.strip() else ""
            await self._thread.update(live.ts, f"{live.header}\n{body}\n_(cut short)_")
        word = STATUS_WORDS.get(event.status, str(event.status))
        if self.status_ts:
            await self._thread.update(self.status_ts, f"Run `{event.run_id}` finished: {word}.")
        await self._post(final_summary(event))

    async def _post(self, markdown: str) -> None:
        for part in pieces(markdown, self._settings.max_message_chars):
            await self._thread.post(part)

    def _room(self, header: str) -> int:
        """Characters left for the body of a reply that starts with ``header`` and may end with a note."""
        return self._settings.max_message_chars - len(header) - len(WRITING) - 2


def _header(agent: str, round_: int) -> str:
    return to_mrkdwn(turn_header(agent, round_))


def _test_text(event: TestReported) -> str:
    report = event.report
    text = f"**Tests** ({event.language}): {report.summary()} in {report.duration_s:.1f}s"
    if not event.report.ok:
        text += f"\n```\n{inert(event.report.output(FAILING_OUTPUT_CHARS))}\n```"
    return text

