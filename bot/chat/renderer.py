"""The run renderer: what a run looks like in a chat thread, the same on every platform.

    a run's events ──> RunRenderer ──> ChatThread   post, edit, upload, working: the platform's API
    (its sink, and                     Markup       Markdown -> the platform's dialect
     its fallback                      ThreadStyle  message size, edit pace, longest inline code, detail
     publisher)

The thread, top to bottom:

- the status message (``bot.chat.status``), posted as soon as the run is accepted: where the run is, a
  line per step (``bot.chat.progress``: plan, code, review, tests of each round with their counts,
  triage, fix, check-in), kept current at the edit pace; it carries the Stop control for as long as the
  run can be stopped and says at the end how the run ended. A platform that draws progress itself gets
  the steps as data too (Slack's plan display). Who is at work also goes to the platform's passing
  status (``ChatThread.working``: Slack's thread status, Discord's typing);
- one message per agent turn, headed with the agent's name, the follow-up it belongs to and its round,
  edited while the text streams (at most once per ``update_interval_s``, whole lines only, so a secret
  split across two deltas is never shown half-masked; "waiting for the model" while it is silent), then
  replaced by the finished text: lines meant for the workflow become a badge by the name
  (``bot.chat.badges``), code blocks longer than ``max_inline_code_chars`` go to the thread as files and
  the rest are captioned with their file (``bot.chat.long_code``), and text longer than
  ``max_message_chars`` continues in further messages without breaking a code block (``bot.chat.split``).
  The Check-In's turn is two lines and the link, not the README again. Nothing is posted and then deleted;
- test results (the failing tests and the end of the output, on whole lines: ``agents.excerpts``),
  notices (queued, a retry, a check-in that fell back) and, when no Gist takes them, the run's files (the
  renderer is also the run's fallback publisher);
- the final summary: the status and why, the test result, where the result is, tokens and cost, and one
  line per agent with its tokens, cost and time.

``detail = "compact"`` keeps the status message (each turn is a line of it), each turn's files as
attachments, the run's files and the final summary: no message per turn, test run or notice.

One task per run drains a queue of events, so a slow or rate-limited platform never holds up the team, and
files the fallback publisher attaches land in order with the turns around them. A call the platform
refuses is logged and the drawing goes on. Every run ends with its ``RunFinished`` (a Stop, or the bot
shutting down, included), which removes the Stop control and ends the task; ``done()`` waits for it.
Text is redacted before markup is applied, so escaping cannot hide a secret from the redactor.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field

from agents.errors import CheckInError
from agents.events import (
    CheckedIn,
    CiChecked,
    Event,
    Notice,
    RunFinished,
    RunStarted,
    TestReported,
    TextDelta,
    TurnFinished,
    TurnStarted,
    Waiting,
)
from agents.language import BUILT_IN, Languages
from agents.types import CheckInResult, Publication, Role, Usage
from bot.chat.badges import read_turn, readme_summary
from bot.chat.links import unmasked
from bot.chat.long_code import captioned, flat_files, inline_or_attach
from bot.chat.pace import PacedThread
from bot.chat.split import split_message, whole_lines
from bot.chat.status import StatusMessage
from bot.chat.thread import COMPACT, ChatPlatform, ChatThread
from bot.chat.words import (
    agent_title,
    attached_files,
    final_text,
    notice_text,
    report_text,
    turn_header,
    where_text,
    working_text,
)
from bot.safety.inert import in_written_order

log = logging.getLogger(__name__)

Redact = Callable[[str], str]
WRITING = "_writing…_"
CUT_SHORT = "_(cut short)_"
ELLIPSIS = "…"
NO_TEXT = "(no text)"


@dataclass
class _Turn:
    """The message of the turn being written, and what has streamed into it."""

    message_id: str
    agent: str
    header: str  # in the platform's markup
    streamed: list[str] = field(default_factory=list)  # Markdown, as it came: joined when drawn, not at every piece
    dirty: bool = False
    drawn_at: float = 0.0
    waiting_s: float = 0.0  # how long the model has been silent, while it is

    @property
    def text(self) -> str:
        if len(self.streamed) > 1:
            self.streamed[:] = ["".join(self.streamed)]
        return self.streamed[0] if self.streamed else ""

    @property
    def footer(self) -> str:
        return f"_waiting for the model ({self.waiting_s:.0f} s)…_" if self.waiting_s else WRITING


@dataclass
class _Shown:
    """A message the renderer may add to later (the Check-In's, once the link is known)."""

    message_id: str
    text: str


@dataclass
class _Attach:
    """The fallback publisher's files, waiting in the queue for their turn."""

    publication: Publication
    result: asyncio.Future[CheckInResult] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class RunRenderer:
    """The event sink and fallback publisher of one run in one thread. ``open`` posts the status message
    and starts drawing; until then events wait in the queue."""

    def __init__(self, thread: ChatThread, platform: ChatPlatform, redact: Redact,
                 languages: Languages = BUILT_IN) -> None:
        self._thread = PacedThread(thread, platform.style.update_interval_s)  # every message at its own pace
        self._markup, self._style = platform.markup, platform.style
        self._redact, self._languages = redact, languages
        self._queue: asyncio.Queue[Event | _Attach] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._compact = platform.style.detail == COMPACT
        self._turn: _Turn | None = None
        self._status: StatusMessage | None = None
        self._follow_up = 0
        self._by_agent: dict[str, tuple[Usage, float]] = {}  # tokens, cost and seconds per agent, for the summary
        self._checkin: _Shown | None = None
        self.run_id = ""
        self.finished: RunFinished | None = None

    # -- what the service calls ---------------------------------------------------------------

    async def open(self, run_id: str, follows: str | None = None) -> None:
        """Post the status message with the Stop control, then draw the run's events as they come.
        ``follows``: the run this one waits for in the same thread, if any."""
        self.run_id = run_id
        self._status = StatusMessage(self._thread, run_id, follows, self._show, self._redact,
                                    self._style.update_interval_s, self._style.max_message_chars)
        await self._status.post()
        self._task = asyncio.create_task(self._draw_all(), name=f"render-{run_id}")

    async def reopen(self, run_id: str, status_message_id: str, earlier: Sequence[Event] = ()) -> None:
        """Draw in a thread whose status message an earlier process posted (to end a run it left unfinished).
        ``earlier``: the run's stored events, which that message showed already: its steps stay in it, and
        the final summary counts their tokens."""
        self.run_id = run_id
        self._status = StatusMessage(self._thread, run_id, None, self._show, self._redact,
                                    self._style.update_interval_s, self._style.max_message_chars)
        self._status.message_id = status_message_id
        for event in earlier:
            self._status.observe(event)
            if isinstance(event, TurnFinished):
                self._count(event)
        self._task = asyncio.create_task(self._draw_all(), name=f"render-{run_id}")

    @property
    def status_message_id(self) -> str:
        """The status message (the one with the Stop control), once ``open`` posted it."""
        return self._status.message_id if self._status is not None else ""

    async def __call__(self, event: Event) -> None:
        """The run's event sink: never waits, so the team goes on while the platform is written to."""
        self._queue.put_nowait(event)

    async def publish(self, publication: Publication) -> CheckInResult:
        """``agents.protocols.Publisher``: the run's files attached to the thread, in order with the turns."""
        job = _Attach(publication)
        self._queue.put_nowait(job)
        return await job.result

    def when_done(self, callback: Callable[[], object]) -> None:
        """Call ``callback`` once the drawing has ended (after ``open``)."""
        if self._task is not None:
            self._task.add_done_callback(lambda _: callback())

    async def abandon(self) -> None:
        """Stop drawing without a final word: another process draws the rest of this run in the same messages
        (the replica that claimed it, or took it over)."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait({self._task})

    async def done(self) -> RunFinished | None:
        """Wait until the run's last message is out (or the drawing was cancelled)."""
        if self._task is not None:
            await asyncio.wait({self._task})
        return self.finished

    async def after(self, event: CiChecked) -> None:
        """The pushed commit's CI, once the run is over (``bot.ci``): a step of the run's status message."""
        await self.done()
        if self._status is not None and self._status.message_id:
            self._status.observe(event)
            await self._guarded(self._status.redraw, True)
            await self._guarded(self._thread.drain)  # no drawing task is left to send an edit held back

    async def say(self, markdown: str) -> None:
        """A message in the thread once the run is over (the CI follower's last word)."""
        await self.done()
        await self._guarded(self._post, markdown)

    # -- the drawing task ---------------------------------------------------------------------

    async def _draw_all(self) -> None:
        # One getter outlives the timeouts, so no event is lost to a cancelled ``queue.get()``.
        getter: asyncio.Future[Event | _Attach] | None = None
        try:
            while True:
                getter = getter or asyncio.ensure_future(self._queue.get())
                # Events waiting are drawn first: a platform slower than the stream gets one edit with all
                # of them, not one stale edit per event.
                behind = not self._queue.empty()
                done, _ = await asyncio.wait({getter}, timeout=None if behind else self._until_due())
                if not done:  # something fell due: show what has arrived, each message at its own pace
                    if self._turn_due_in() == 0.0:
                        await self._guarded(self._redraw_turn)
                    await self._guarded(self._redraw_status)
                    await self._guarded(self._thread.flush)
                    continue
                item, getter = getter.result(), None
                if isinstance(item, _Attach):
                    await self._attach(item)
                    continue
                await self._guarded(self._draw, item)
                if isinstance(item, RunFinished):
                    return
        finally:
            if getter is not None:
                getter.cancel()

    async def _guarded(self, step: Callable[..., Awaitable[None]], *args: object) -> None:
        """One call the platform refuses (after its client's retries) must not silence the rest."""
        try:
            await step(*args)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("drawing run %s in its thread failed", self.run_id)

    def _until_due(self) -> float | None:
        waits = [self._status.due_in() if self._status else None, self._turn_due_in(), self._thread.due_in()]
        return min((w for w in waits if w is not None), default=None)

    def _turn_due_in(self) -> float | None:
        turn = self._turn
        if turn is None or not turn.dirty:
            return None
        return max(0.0, turn.drawn_at + self._style.update_interval_s - time.monotonic())

    async def _draw(self, event: Event) -> None:
        if self._status is not None:
            self._status.observe(event)
        if isinstance(event, RunStarted):
            self._follow_up = event.follow_up  # named in every header, so no round shows twice in a thread
        elif isinstance(event, TurnStarted):
            await self._guarded(self._thread.working, self._show(working_text(event.agent)))
            await self._start_turn(event)
        elif isinstance(event, TextDelta) and self._turn is not None and self._turn.agent == event.agent:
            if self._turn.waiting_s:  # the silence is over: the passing status says so too
                await self._guarded(self._thread.working, self._show(working_text(event.agent)))
            self._turn.streamed.append(event.text)
            self._turn.dirty, self._turn.waiting_s = True, 0.0
            if self._turn_due_in() == 0.0 and self._queue.empty():
                await self._redraw_turn()
        elif isinstance(event, Waiting):
            await self._guarded(self._thread.working, self._show(working_text(event.agent, event.seconds)))
            if self._turn is not None and self._turn.agent == event.agent:  # not another agent's silence
                self._turn.waiting_s, self._turn.dirty = event.seconds, True
                await self._redraw_turn()
        elif isinstance(event, TurnFinished):
            await self._finish_turn(event)
        elif isinstance(event, TestReported) and not self._compact:  # compact: the status message has the counts
            await self._post(report_text(event, self._follow_up))
        elif isinstance(event, CheckedIn):
            await self._link_checkin(event.result)
        elif isinstance(event, Notice) and not self._compact:  # compact: the status message shows the latest
            await self._post(notice_text(event.text))
        elif isinstance(event, RunFinished):
            await self._finish_run(event)
        await self._redraw_status()

    async def _redraw_status(self) -> None:
        if self._status is not None and self._status.message_id:  # a run from before a restart may not know it
            await self._status.redraw(now=self.finished is not None)

    # -- turns --------------------------------------------------------------------------------

    async def _start_turn(self, event: TurnStarted) -> None:
        await self._cut_short()  # a turn that never finished keeps what it showed
        if self._compact:
            return  # the status message shows who is at work
        header = self._show(turn_header(event.agent, event.round, self._follow_up))
        message_id = await self._thread.post(f"{header}\n{WRITING}")
        self._turn = _Turn(message_id, event.agent, header, drawn_at=time.monotonic())

    async def _redraw_turn(self) -> None:
        turn = self._turn
        if turn is None or not turn.dirty:
            return
        turn.dirty, turn.drawn_at = False, time.monotonic()
        shown = whole_lines(turn.text)
        body = self._tail(turn, shown) + "\n" if shown.strip() else ""
        if body or turn.waiting_s:
            await self._thread.edit(turn.message_id, f"{turn.header}\n{body}{self._show(turn.footer)}")

    async def _finish_turn(self, event: TurnFinished) -> None:
        if event.cut_short and self._turn is not None:  # the run's end cut it: it stays as it stood, marked cut short
            self._count(event)
            await self._cut_short()
            return
        turn, self._turn = self._turn, None
        self._count(event)
        await self._guarded(self._thread.working, "")
        if self._compact:  # the turn is a line of the status message; its files come as files
            if event.files:
                files = flat_files(event.files)
                title = turn_header(event.agent, event.round, self._follow_up).replace("**", "")
                await self._upload(files, f"📎 {title}: " + ", ".join(f"`{name}`" for name in files))
            return
        reading = read_turn(event)
        header = self._show(turn_header(event.agent, event.round, self._follow_up, reading.badge))
        inlined = inline_or_attach(reading.text, self._style.max_inline_code_chars, event.files, self._languages)
        body = readme_summary(event.text) if event.agent == Role.CHECKIN else captioned(inlined.text)
        # A cut turn with no message of its own (a stored run drawn again: its turns come whole) is drawn as it was
        # kept, with the mark its live message ended with.
        mark = f"\n{self._show(CUT_SHORT)}" if event.cut_short else ""
        pieces = self._pieces(body.strip() or NO_TEXT, header, reserve=len(mark))
        pieces[0] = f"{header}\n{pieces[0]}"
        pieces[-1] += mark
        if turn is not None:
            await self._thread.edit(turn.message_id, pieces[0])
            first = turn.message_id
        else:
            first = await self._thread.post(pieces[0])
        for piece in pieces[1:]:
            await self._thread.post(piece)
        if event.agent == Role.CHECKIN:
            self._checkin = _Shown(first, pieces[0])
            return  # its README goes with the files, wherever they are published
        if inlined.files:
            names = ", ".join(f"`{name}`" for name in inlined.files)
            await self._upload(inlined.files, f"📎 {agent_title(event.agent)}: {names}")

    def _count(self, event: TurnFinished) -> None:
        usage, seconds = self._by_agent.get(event.agent, (Usage(), 0.0))
        self._by_agent[event.agent] = (usage + event.usage, seconds + event.duration_s)

    async def _cut_short(self) -> None:
        turn, self._turn = self._turn, None
        if turn is None or self._compact:
            return
        shown = whole_lines(turn.text)
        body = self._tail(turn, shown) + "\n" if shown.strip() else ""
        await self._thread.edit(turn.message_id, f"{turn.header}\n{body}{self._show(CUT_SHORT)}")

    def _tail(self, turn: _Turn, markdown: str) -> str:
        """The newest part of a turn being written that fits its message, any open code block closed."""
        pieces = self._pieces(markdown, turn.header, reserve=len(ELLIPSIS) + 1)
        return f"{ELLIPSIS}\n{pieces[-1]}" if len(pieces) > 1 else pieces[0]

    async def _link_checkin(self, result: CheckInResult) -> None:
        """The Check-In's message says where the work went, once that is known (compact: the status does)."""
        shown = self._checkin
        if shown is not None:
            where = f"🔗 {where_text(result)}"
            await self._thread.edit(shown.message_id, f"{shown.text}\n{self._show(where)}")

    # -- the rest of the run ------------------------------------------------------------------

    async def _finish_run(self, event: RunFinished) -> None:
        self.finished = event
        await self._cut_short()
        await self._guarded(self._thread.working, "")
        await self._guarded(self._redraw_status)  # the Stop control goes, whatever happens after
        await self._guarded(self._thread.drain)  # every message in its last state before the last message
        await self._post(final_text(event, self._by_agent))

    async def _attach(self, job: _Attach) -> None:
        # A stopped run cancels ``job.result`` (its publisher stops waiting), before or during the upload;
        # settling it then would fail here and end the drawing before the run's last message.
        if job.result.done():
            return
        publication = job.publication
        try:
            link = await self._upload(attached_files(publication),
                                      f"📎 Files of run `{publication.run_id}` ({publication.status})")
        except Exception as error:  # the Manager reports it and keeps the files
            if not isinstance(error, CheckInError):
                log.exception("attaching the files of run %s failed", publication.run_id)
                error = CheckInError("The files could not be attached to the thread.")
            if not job.result.done():
                job.result.set_exception(error)
            return
        if not job.result.done():
            job.result.set_result(CheckInResult(location=link or "the files attached in this thread", kind="attachments"))

    async def _post(self, markdown: str) -> None:
        for piece in split_message(self._show(markdown), self._style.max_message_chars):
            await self._thread.post(piece)

    async def _upload(self, files: Mapping[str, str], comment: str) -> str:
        # A name is shown, so nothing in it may reorder how it reads; the content is the file itself, kept exact.
        cleaned = {in_written_order(self._redact(name)): self._redact(content) for name, content in files.items()}
        return await self._thread.upload(cleaned, self._show(comment))

    def _show(self, markdown: str) -> str:
        """Markdown as the platform shows it, with every secret masked first and no link that hides where it
        goes behind another address."""
        return self._markup.text(unmasked(self._redact(markdown)))

    def _pieces(self, markdown: str, header: str, reserve: int = 0) -> list[str]:
        room = self._style.max_message_chars - len(header) - len(WRITING) - 2 - reserve
        return split_message(self._show(markdown), room) or [""]
