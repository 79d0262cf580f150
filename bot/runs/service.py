"""The bot's front door for every adapter: checks a request, queues it within the limits, runs the team.

For chat platforms it also decides which messages to take (``admit``: not a redelivery, addressed to the
bot or in a thread it works in, allowed by the platform's allowlists, a task it can take), draws each
run in its thread (``start``), and says who may stop a run (``stop``: only who started it). Adapters
translate their platform's events into these calls; they never touch the store.

Limits: at most ``limits.max_concurrent_runs`` runs at once, ``limits.max_runs_per_user`` per user,
one run at a time per thread (follow-ups in a thread wait for the run before them, then continue
from its files). A run that must wait is told where it is in the queue.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import secrets as random_tokens
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from agents.errors import CheckInError, UserInputError
from agents.events import CheckedIn, Event, Notice, RunFinished
from agents.manager import FixReplies, Manager, Order, TeamSettings
from agents.prompts import PromptBook
from agents.protocols import ChatModel, Publisher, Sandbox
from agents.run_request import RunRequest
from agents.types import Attachment, PriorWork, RunStatus, ThreadContext
from bot.chat.access import Place, refusal
from bot.chat.renderer import RunRenderer
from bot.chat.thread import ChatPlatform, ChatThread
from bot.checkin.masking import MaskingPublisher
from bot.ci.nudges import CiNudges
from bot.ci.rounds import CiRounds, Fix, Pushed, StartFix
from bot.config.sections import Config
from bot.health.checks import Connected, Health
from bot.process.logs import tag_logs
from bot.repos.desk import RepoDesk
from bot.repos.names import RepoTarget, may_read
from bot.repos.opening import OpenedRepo
from bot.runs.fanout import Fanout
from bot.runs.github_links import LinkReader
from bot.runs.runner import INTERNAL_ERROR_REASON, STOPPED_REASON, EventSink, deliver, drive, stopped
from bot.runs.thread_context import Earlier, Gathered, ReadEarlier, read_messages, thread_context
from bot.runs.usage import RunUsage
from bot.runs.worker import DurableQueue, FencedThread, Worker, WorkerSettings
from bot.safety.redact import Redactor, mask_secrets, mask_url_credentials
from bot.safety.text import not_text
from bot.sandbox.languages import registry
from bot.store.errors import HandedBack, Silenced, StoreError
from bot.store.postgres_queue import Claimed
from bot.store.protocol import History, Store
from bot.store.records import INTERRUPTED_REASON, Interrupted, conversation_key
from bot.store.rows import thread_json

log = logging.getLogger(__name__)

PublisherFactory = Callable[[Publisher], Publisher]  # wraps an adapter's fallback (e.g. with a Gist publisher)


@dataclass(frozen=True)
class ChatRequest:
    """A request to the team from any platform."""

    platform: str  # "terminal", "slack", "discord"
    thread_key: str  # where the conversation lives on that platform (a thread, a DM, a terminal session)
    user_id: str
    text: str
    attachments: tuple[Attachment, ...] = ()
    repo: str = ""  # a repository given apart from the text (the terminal's --repo OWNER/NAME|URL|PATH)
    base: str = ""  # and its base branch (--base)
    branch: str = ""  # a branch of the bot's own to continue on (the pull request it opened, commented on)
    # where it was asked, most specific first, as [repos."owner/name"] defaults_for names places ("slack:C0123")
    places: tuple[str, ...] = ()
    link: str = ""  # a link back to the conversation, for a pull request's description
    thread: ThreadContext | None = None  # what was read of the thread the request was made in
    # the run this one goes on from after a restart (a takeover: itself; ``resume_interrupted``: the interrupted
    # one): the team is told it is resumed, and the run keeps that run's branch
    resumes: str = ""
    pull: int = 0  # a fix round's pull request (its number): updated, and no other opened


@dataclass(frozen=True)
class Arrival:
    """A person's message that may be for the bot, as its platform delivered it."""

    key: str  # the message's id on the platform: every redelivery of it carries the same
    thread_key: str  # the conversation it belongs to; empty when the bot will open a thread for it
    place: Place
    text: str  # the task as the person wrote it, without the bot's mention
    addressed: bool  # it names the bot (a mention, a direct message, a command): always for the bot

    def request(self, platform: str, thread_key: str = "", attachments: tuple[Attachment, ...] = ()) -> ChatRequest:
        """The request this message makes, in ``thread_key`` (its own thread unless another is given)."""
        where = [f"{platform}:{part}" for part in (self.place.channel, self.place.server) if part]
        return ChatRequest(platform, thread_key or self.thread_key, self.place.user, self.text, attachments,
                           places=(*where, platform))


@dataclass(frozen=True)
class Admission:
    """Whether to take a message: ``take``, or ``refusal`` (a sentence for the person: they may not use
    the bot here), or neither (not for the bot, or already taken)."""

    take: bool = False
    refusal: str = ""
    known_thread: bool = False  # the bot works in this thread already: its runs there hold the thread's context


IGNORED = Admission()


@dataclass(frozen=True)
class Prepared:
    """What an adapter makes of an admitted message: the request (its files read) and the thread to draw in."""

    request: ChatRequest
    thread: ChatThread
    earlier: ReadEarlier | None = None  # how to read the messages before it (a chat thread), when the run wants them


Prepare = Callable[[], Awaitable["Prepared | None"]]  # None: it could not, and has said why


@dataclass(frozen=True)
class Taken:
    """How a message was taken: the run it started, or a refusal for the adapter to say (neither: not for
    the bot, already taken, or the adapter's preparation said why it could not go on)."""

    run: RunHandle | None = None
    refusal: str = ""


@dataclass
class RunHandle:
    run_id: str
    task: asyncio.Task[RunFinished] = field(repr=False)

    def cancel(self) -> None:
        self.task.cancel()

    async def wait(self) -> RunFinished:
        """The run's final event. Cancelling the caller does not cancel the run (``cancel`` does)."""
        return await asyncio.shield(self.task)


@dataclass
class _Waiter:
    run_id: str
    user_id: str
    thread: str
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    stop_reason: str = STOPPED_REASON  # why the run ends if it is cancelled: a Stop, or the bot shutting down


THREAD_RETRIES_S = (1.0, 4.0, 16.0)  # the pauses before a claimed job's thread is tried again, then it is given up


class Service:
    def __init__(
        self,
        config: Config,
        store: Store,
        model: ChatModel,
        sandbox: Sandbox,
        publisher_for: PublisherFactory = lambda fallback: fallback,
        prompts: PromptBook | None = None,
        redact: Redactor | None = None,
        health: Health | None = None,
        repos: RepoDesk | None = None,
        ci: CiRounds | None = None,
        links: LinkReader | None = None,
        nudges: CiNudges | None = None,
    ) -> None:
        self._config, self._store, self._model, self._sandbox = config, store, model, sandbox
        self._repos = repos
        self.ci = ci  # the chains following the CI of the pull requests the runs push to
        self._publisher_for = publisher_for
        self.languages = self._languages = registry(config.sandbox)  # the config's languages too, for every layer
        self._prompts = prompts or PromptBook(languages=self._languages)
        self._redact = redact or Redactor(())
        self._links = links or LinkReader(config.input, config.checkin.github_api_url, "")
        self._waiting: list[_Waiter] = []
        self._running: list[_Waiter] = []
        self._handles: dict[str, RunHandle] = {}
        self._drawn: dict[str, tuple[str, RunRenderer]] = {}  # run id -> (platform, its renderer) until drawn
        self._closing = ""  # why no new work is taken: the bot is shutting down
        self.health = health
        self.nudges = nudges or CiNudges()  # a webhook's CI deliveries wake whatever follows that commit's CI
        self.fanout: Fanout | None = None  # messages to every replica (the web chat's live updates), on PostgreSQL
        # Runs as durable jobs (``take_jobs``): the shared queue, this replica's worker on it, the platforms it
        # can draw in (their adapters are connected), and the runs it has lost to another replica.
        self._queue: DurableQueue | None = None
        self._worker: Worker | None = None
        self._openers: dict[str, tuple[ChatPlatform, ThreadOpener]] = {}
        self._lost: set[str] = set()
        self._unrecorded: set[str] = set()  # jobs whose write failed here: they go back to the queue

    def take_jobs(self, queue: DurableQueue, settings: WorkerSettings) -> Worker:
        """From now on a chat platform's runs are durable jobs on ``queue``, claimed by whichever replica's worker
        the shared limits let start them (this one's included, once the platform is ``online`` here)."""
        self._queue = queue
        self._worker = Worker(queue, settings, self._execute, self._drop)
        return self._worker

    # -- what adapters call -------------------------------------------------------------------

    async def admit(self, arrival: Arrival, platform: ChatPlatform, replayed: bool = False) -> Admission:
        """Whether to take a message. ``UserInputError`` when it is for the bot but its task cannot be
        taken (empty, too long, the queue full): checked before the adapter downloads any file. ``replayed``: an
        event a replica received and died handling (``unhandled``): its first sighting was that replica's, and
        the queue makes one run per message at most."""
        known = bool(arrival.thread_key) and await self._store.has_conversation(platform.name, arrival.thread_key)
        if not arrival.addressed and not (arrival.text.strip() and known):
            return IGNORED  # chatter, or a follow-up the platform delivered without its text
        self._refuse_while_closing()  # before it is remembered as taken: after the restart it can be sent again
        # One key per message: a platform's retries of an event, and the two events one mention can
        # produce, must start one run. The store remembers keys across restarts.
        if not replayed and not await self._store.first_sighting(f"{platform.name}:{arrival.key}"):
            log.debug("%s message %s already taken; ignored", platform.name, arrival.key)
            return IGNORED
        refused = refusal(platform.access, arrival.place)
        if refused:
            return Admission(refusal=refused)
        self.check(arrival.request(platform.name))
        return Admission(take=True, known_thread=known)

    async def first_sighting(self, key: str) -> bool:
        """True the first time ``key`` is seen by any process sharing the store (a webhook's delivery id, a
        sentence to say once): adapters keep such facts here, never in the store themselves."""
        return await self._store.first_sighting(key)

    async def _read_earlier(self, read: ReadEarlier, request: ChatRequest) -> ThreadContext:
        """The context the messages before a request give it (``bot.runs.thread_context``), with the GitHub
        links in them read (those the person may have read); when the platform withholds them, a line saying so
        and no context; when reading fails in a way the adapter did not foresee, the same, so the request is
        still taken."""
        try:
            earlier = await read()
        except Exception:
            log.exception("reading the messages before a %s request failed", request.platform)
            earlier = Earlier(withheld=READ_FAILED)
        if earlier.withheld:  # the status message says so for good, the notice says why
            return ThreadContext(summary=NOT_READ, notes=(earlier.withheld,))
        kept = read_messages(earlier.messages, self._config.input)  # a message left out is not followed either
        linked = await self._links.read([request.text, *(m.text for m in kept)],
                                        lambda name: may_read(name, self._config.repos, request.platform,
                                                              request.user_id))
        gathered = Gathered(linked.messages, linked.files, (*earlier.notes, *linked.notes))
        return thread_context(earlier.messages, request.text, self._config.input, gathered, earlier.more_before,
                              self._languages)

    def check(self, request: ChatRequest) -> None:
        """Raise ``UserInputError`` with a clear sentence when the request cannot be taken."""
        self._refuse_while_closing()
        limits = self._config.input
        text = request.text.strip()
        if not text:
            raise UserInputError("The task is empty: say what the code should do.")
        if len(text) > limits.max_task_chars:
            raise UserInputError(
                f"The task is {len(text):,} characters long; the limit is {limits.max_task_chars:,}. "
                "Shorten it or attach the long part as a file."
            )
        problem = not_text(text)
        if problem:
            raise UserInputError(f"The task is not all text ({problem}); send it again as plain text.")
        if len(request.attachments) > limits.max_attachments:
            raise UserInputError(f"{len(request.attachments)} files attached; the limit is {limits.max_attachments}.")
        for attachment in request.attachments:
            problem = not_text(attachment.name) or not_text(attachment.content)
            if problem:
                raise UserInputError(f"An attached file is not all text ({problem}); attach it again as UTF-8.")
        names = [a.name for a in request.attachments]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise UserInputError(f"Two attached files are both called {twice[0]}; rename one so neither is lost.")
        self._repository(_masked_naming(request, self._redact))  # its sentence may quote the --repo argument
        queue = self._config.limits
        if len(self._waiting) >= queue.max_queued_runs:
            raise UserInputError("The bot is busy with too many runs right now; try again in a few minutes.")
        if sum(w.user_id == request.user_id for w in self._waiting) >= queue.max_queued_runs_per_user:
            raise UserInputError(f"You already have {queue.max_queued_runs_per_user} runs waiting; "
                                 "let them start (or stop one) before asking for more.")

    async def submit(self, request: ChatRequest, sink: EventSink, fallback: Publisher, run_id: str = "") -> RunHandle:
        """Record the run and start it (or queue it). Raises ``UserInputError`` for bad requests."""
        self.check(request)
        run_id = run_id or new_run_id()
        # Queued before the first await, so the limits `check` reads count this run at once and the
        # queue keeps the order requests arrived in.
        waiter = _Waiter(run_id, request.user_id, conversation_key(request.platform, request.thread_key))
        self._waiting.append(waiter)
        try:
            request = await _masked_off_the_loop(request, self._redact)
            conversation = await self._store.conversation(request.platform, request.thread_key)
            await self._store.create_run(run_id, conversation, request.text.strip(), request.user_id,
                                         [a.name for a in request.attachments], request.thread)
        except BaseException:
            self._waiting.remove(waiter)
            raise
        task = asyncio.create_task(self._run(request, run_id, conversation, waiter, sink, fallback), name=f"run-{run_id}")
        handle = RunHandle(run_id, task)
        self._handles[run_id] = handle
        task.add_done_callback(lambda _: self._handles.pop(run_id, None))
        # Let the task take its first step before anyone can cancel it: a task cancelled before it
        # starts never runs its own handler, and the run would stay "running" with no final event.
        await asyncio.sleep(0)
        return handle

    async def take(self, arrival: Arrival, platform: ChatPlatform, prepare: Prepare, replayed: bool = False) -> Taken:
        """The one way a chat message becomes a run, so no adapter can skip a check by calling things out of
        order: the message is admitted (``admit``: a redelivery, chatter, the allowlists, a task that can be
        taken), then the adapter prepares it (``prepare``: files read, the thread opened; the expensive part,
        after every cheap refusal), then the run starts in that thread, with the queue's limits checked again.
        A task that cannot be taken is a ``UserInputError`` before ``prepare``; once the thread exists, it is
        said there instead."""
        admission = await self.admit(arrival, platform, replayed)
        if not admission.take:
            return Taken(refusal=admission.refusal)
        prepared = await prepare()
        if prepared is None:
            return Taken()
        request = prepared.request
        wanted = self._config.input.thread_messages > 0 and not admission.known_thread  # its own threads: follow-ups
        if prepared.earlier is not None and wanted:
            request = dataclasses.replace(request, thread=await self._read_earlier(prepared.earlier, request))
        try:
            return Taken(run=await self._start(request, prepared.thread, platform, f"{platform.name}:{arrival.key}"))
        except UserInputError as error:  # the queue filled up while the adapter prepared
            await prepared.thread.post(platform.markup.text(f"⚠️ {error}"))
            return Taken()

    async def _start(self, request: ChatRequest, thread: ChatThread, platform: ChatPlatform,
                     source: str = "") -> RunHandle | None:
        """Queue the run and draw it in ``thread`` (``_draw``); once it has pushed to a pull request, follow that
        pull request's CI there (``bot.ci.rounds``), fix rounds included. As a durable job when this replica takes
        jobs for the platform: no handle here (whichever replica claims it runs it and follows its CI);
        ``source``: the message it was asked in (one job per message)."""
        if self._queue is not None and platform.name in self._openers:
            await self._enqueue(request, thread, platform, self._queue, source)
            return None
        handle, renderer = await self._draw(request, thread, platform)
        if self.ci is not None:
            self.ci.follow(_pushed(handle, renderer, request.link), self._fix_round(request, thread, platform),
                           self.nudges)
        return handle

    def _fix_round(self, request: ChatRequest, thread: ChatThread, platform: ChatPlatform) -> StartFix:
        """How a CI chain starts a fix round in the thread: a follow-up of the same person on the same
        repository (so on the same branch) and the followed pull request's base, its task saying what failed, the
        failing output quoted; it updates that pull request only."""
        async def start(wanted: Fix) -> Pushed | None:
            # new work, never the resumed run again (the request may be a takeover's)
            fix = dataclasses.replace(request, text=wanted.task, attachments=(), thread=wanted.failing,
                                      repo=wanted.repository, base=wanted.base, pull=wanted.pull, resumes="")
            try:
                handle, renderer = await self._draw(fix, thread, platform)
            except UserInputError as error:  # the queue is full, the bot is closing
                await thread.post(platform.markup.text(f"⚠️ No fix round for the failing CI: {error}"))
                return None
            return await _pushed(handle, renderer, request.link)
        return start

    async def _draw(self, request: ChatRequest, thread: ChatThread,
                    platform: ChatPlatform) -> tuple[RunHandle, RunRenderer]:
        """Queue the run and draw it in ``thread``: the status message with the Stop control first, then
        every event (``bot.chat.renderer``). ``UserInputError`` says why a request cannot be taken."""
        run_id = new_run_id()
        follows = self.active_run(request.platform, request.thread_key)
        renderer = RunRenderer(thread, platform, self._redact, self._languages)
        handle = await self.submit(request, renderer, renderer, run_id=run_id)
        # The status message (and its Stop control) appears once the run exists, so a press always finds
        # it; the run's first events wait in the renderer's queue meanwhile, so it still comes first.
        try:
            await renderer.open(run_id, follows)
        except BaseException:
            handle.cancel()  # a run nobody can see or stop helps no one
            raise
        self._drawn[run_id] = (platform.name, renderer)
        renderer.when_done(lambda: self._drawn.pop(run_id, None))
        await self._store.set_status_message(run_id, renderer.status_message_id)
        return handle, renderer

    async def _enqueue(self, request: ChatRequest, thread: ChatThread, platform: ChatPlatform,
                       queue: DurableQueue, source: str) -> None:
        """Record the run as a job (one transaction), draw its status message, then let any worker claim it: the
        claimer edits that message (and a Stop pressed on it reaches the run wherever it runs)."""
        self.check(request)
        request = await _masked_off_the_loop(request, self._redact)
        run_id = new_run_id()
        conversation = await self._store.conversation(request.platform, request.thread_key)
        queued = await queue.enqueue(run_id, conversation, request.text.strip(), request.user_id,
                                     [a.name for a in request.attachments], thread_json(request.thread),
                                     _job_json(request), source)
        if not queued.made:  # an event handled again after a crash, whose run exists already
            log.info("message %s has its run already; not started again", source)
            return
        renderer = RunRenderer(thread, platform, self._redact, self._languages)
        try:
            await renderer.open(run_id, queued.follows)
        except BaseException:
            await asyncio.shield(queue.request_stop(run_id, "its status message could not be posted"))
            raise
        await renderer.abandon()  # the claimer draws the rest, in this same message
        await queue.publish(run_id, renderer.status_message_id)

    async def _execute(self, claimed: Claimed) -> None:
        """Run a job this replica's worker claimed; one the store could not keep up with (the database away) goes
        back to the queue once it answers again, rather than ending with an error nobody could record."""
        try:
            await self._execute_claimed(claimed)
        except Silenced:
            pass
        except StoreError as error:
            log.warning("run %s: %s; it goes back to the queue", claimed.run_id, error)
            self._unrecorded.add(claimed.run_id)
        finally:
            if claimed.run_id in self._unrecorded:
                await self._hand_back_when_able(claimed.run_id)

    async def _execute_claimed(self, claimed: Claimed) -> None:
        """The job in its thread, editing the status message its receiver drew; a job taken over from a lost
        replica goes on from what that one saved (as a resumed run does)."""
        if self._queue is None:
            return
        platform = self._openers[claimed.platform][0]
        run_id = claimed.run_id
        silenced = lambda: run_id in self._lost or run_id in self._unrecorded  # noqa: E731
        for pause in (*THREAD_RETRIES_S, None):
            try:
                opened = await self._open_claimed(claimed, silenced)
                break
            except StoreError:
                raise
            except Exception as error:  # its thread deleted while it waited, the chat refusing its status message...
                if pause is None or silenced():
                    log.exception("run %s could not start in thread %s", run_id, claimed.thread_key)
                    await self._end_unstartable(claimed)
                    return
                # ...or the chat's API away for a moment (429, 503, a timeout): the job is not dropped for that
                log.warning("run %s: its thread %s could not be opened (%s); trying again in %gs", run_id,
                            claimed.thread_key, error, pause)
                await asyncio.sleep(pause)
        if opened is None:
            return
        thread, renderer, request = opened
        job = request
        if claimed.resumed:  # a job that resumed an interrupted run goes on resuming that one (its branch)
            job = dataclasses.replace(request, resumes=request.resumes or run_id)
            log.warning("run %s taken over from a lost replica (claim %d)", run_id, claimed.epoch)
        waiter = _Waiter(run_id, claimed.user_id, conversation_key(claimed.platform, claimed.thread_key))
        self._running.append(waiter)
        prior = self._queue.resume_work if claimed.resumed else None
        task = asyncio.create_task(self._run(job, run_id, claimed.conversation_id, waiter, renderer, renderer,
                                             resume_from=prior, durable=True), name=f"run-{run_id}")
        handle = self._handles[run_id] = RunHandle(run_id, task)
        self._drawn[run_id] = (platform.name, renderer)
        if self.ci is not None:  # the replica that ran the job follows its pull request's CI (polling, or nudged)
            self.ci.follow(_pushed(handle, renderer, request.link), self._fix_round(request, thread, platform),
                           self.nudges)
        await asyncio.sleep(0)  # its first step taken: a cancel now still ends it with its own final event
        if claimed.stop_reason:
            self.cancel(run_id, claimed.stop_reason)
        try:
            await asyncio.wait({task})
        finally:
            self._queue.let_go(run_id)  # ended here: its row is no longer this replica's to beat or fence
            self._handles.pop(run_id, None)
            self._drawn.pop(run_id, None)
            if silenced() or (task.done() and not task.cancelled() and isinstance(task.exception(), Silenced)):
                await renderer.abandon()  # whoever claims it next finishes it, in the same messages
            else:
                await renderer.done()
                await self._drawn_when_able(run_id)  # until now a replica dying leaves its end to another to draw
            self._lost.discard(run_id)

    async def _open_claimed(self, claimed: Claimed, silenced: Callable[[], bool]
                            ) -> tuple[ChatThread, RunRenderer, ChatRequest] | None:
        """The job's thread, its status message drawn there (the receiver's, else a new one) and its request; None
        when only its end was left to draw (its owner recorded it and died before showing it), drawn now."""
        platform, open_thread = self._openers[claimed.platform]
        run_id = claimed.run_id
        thread = FencedThread(await open_thread(claimed.thread_key), silenced)
        renderer = RunRenderer(thread, platform, self._redact, self._languages)
        record = await self._store.run(run_id)
        if claimed.ended:
            await self._draw_end(claimed, renderer)
            return None
        if claimed.status_message:
            earlier = [e for e in await self._store.timeline(run_id) if not isinstance(e, RunFinished | CheckedIn)]
            await renderer.reopen(run_id, claimed.status_message, earlier)  # its steps so far stay in it
        else:  # its receiver died before drawing it
            await renderer.open(run_id)
            await self._store.set_status_message(run_id, renderer.status_message_id)
        return thread, renderer, _job_request(claimed, record.thread if record else None)

    async def _end_unstartable(self, claimed: Claimed) -> None:
        """End, in the store only (its thread is what failed), a job whose run could not start here, rather than leave
        it claimed and beaten for ever: its slot of the limits and its conversation's turn go to the next job."""
        if self._queue is None:
            return
        try:
            if not claimed.ended:  # else its end is recorded already: only drawing it failed
                await self._store.record(RunFinished(claimed.run_id, status=RunStatus.ERROR, reason=UNSTARTABLE_REASON))
        except Silenced:
            return
        except StoreError as error:
            log.warning("run %s: %s; it goes back to the queue", claimed.run_id, error)
            self._unrecorded.add(claimed.run_id)
            return
        await self._drawn_when_able(claimed.run_id)  # nothing more of it to draw, here or elsewhere

    async def _draw_end(self, claimed: Claimed, renderer: RunRenderer) -> None:
        """The end of a run whose owner died between recording it and showing it, drawn from the store."""
        if self._queue is None:
            return
        events = await self._store.timeline(claimed.run_id)
        ending = [e for e in events if isinstance(e, RunFinished | CheckedIn)]
        await renderer.reopen(claimed.run_id, claimed.status_message, [e for e in events if e not in ending])
        for event in ending:
            await renderer(event)
        await renderer.done()
        self._queue.let_go(claimed.run_id)
        await self._drawn_when_able(claimed.run_id)
        log.warning("run %s: its end drawn here, its owner having died before drawing it", claimed.run_id)

    async def _drawn_when_able(self, run_id: str) -> None:
        """Note that the run's end is in its thread, trying every heartbeat until the database answers (meanwhile
        its heartbeat keeps others from drawing it a second time)."""
        while self._queue is not None:
            try:
                await self._queue.drawn(run_id)
                return
            except StoreError:
                await asyncio.sleep(self._worker.heartbeat_s if self._worker else 1.0)

    async def _hand_back_when_able(self, run_id: str) -> None:
        """Put a job whose write failed back in the queue, trying every heartbeat until the database answers
        (meanwhile its heartbeat says its owner lives, so nobody else takes it yet)."""
        self._unrecorded.discard(run_id)  # its task has ended: a claim of it here from now on starts afresh
        while self._queue is not None:
            try:
                await self._queue.release([run_id])
            except StoreError:
                await asyncio.sleep(self._worker.heartbeat_s if self._worker else 1.0)
                continue
            log.warning("run %s handed back to the queue: the database answers again", run_id)
            return

    def _recorder(self, run_id: str, durable: bool) -> EventSink:
        """The store's sink for a run; for a durable job, a write that fails hands the job back (``HandedBack``),
        and nothing more of it is written from here."""
        if not durable:
            return self._store.record

        async def record(event: Event) -> None:
            if run_id in self._unrecorded:
                raise HandedBack(f"run {run_id} goes back to the queue")
            try:
                await self._store.record(event)
            except Silenced:
                # Taken over, and told so by this refusal before the worker's next beat: from now on nothing of
                # the run reaches its thread from here, and its end is left to draw to the new owner.
                self._lost.add(run_id)
                raise
            except StoreError as error:
                self._unrecorded.add(run_id)
                raise HandedBack(f"{error}; run {run_id} goes back to the queue") from None
        return record

    def _drop(self, run_id: str, why: str) -> None:
        """The worker's word on a run under way here: stop it (``why``), or, with no reason, it was taken over
        by another replica: end it here without a further write or chat edit."""
        if not why:
            self._lost.add(run_id)
        self.cancel(run_id, why or "taken over by another replica")

    async def stop_all(self, platform: str, grace_s: float) -> None:
        """Stop every run drawn in ``platform``'s threads and give the threads ``grace_s`` to say so."""
        drawn = [(run_id, renderer) for run_id, (name, renderer) in self._drawn.items() if name == platform]
        for run_id, _ in drawn:
            self.cancel(run_id)
        if drawn:
            log.warning("%s: stopping %d run(s)", platform, len(drawn))
            await asyncio.wait([asyncio.ensure_future(renderer.done()) for _, renderer in drawn], timeout=grace_s)

    def cancel(self, run_id: str, reason: str = STOPPED_REASON) -> bool:
        """Stop a run (queued or running) with ``reason``. False when no such run is under way in this process."""
        handle = self._handles.get(run_id)
        if handle is None:
            return False
        for waiter in [*self._running, *self._waiting]:
            if waiter.run_id == run_id:
                waiter.stop_reason = reason
        handle.cancel()
        return True

    async def shutdown(self, reason: str, grace_s: float) -> None:
        """Take no more work, stop every run (queued or running) with ``reason``, and wait up to ``grace_s``
        for each to end: its final event recorded, its container removed, its thread told (the renderer
        says a run stopped this way can be continued by replying)."""
        self._closing = reason
        if self.ci is not None:
            await self.ci.close()  # before the runs: a chain must not start a fix round now
        if self._worker is not None and self._queue is not None:
            await self._worker.close()  # claims nothing more
            await self._hand_back(self._queue, self._worker.running)
        runs = list(self._handles.values())
        renderers = [renderer for _, renderer in self._drawn.values()]
        for handle in runs:
            self.cancel(handle.run_id, reason)
        if runs:
            log.warning("stopping %d run(s): %s", len(runs), reason)
            ending = [handle.task for handle in runs] + [asyncio.ensure_future(r.done()) for r in renderers]
            await asyncio.wait(ending, timeout=grace_s)

    # -- persist, then acknowledge (replicas on PostgreSQL) -----------------------------------

    @property
    def keeps_events(self) -> bool:
        """Whether an adapter should keep each event (``received``) before acknowledging it to its platform."""
        return self._queue is not None

    async def received(self, platform: str, key: str, payload: str) -> None:
        """Keep an event before its platform is told it arrived: a ``StoreError`` means do not acknowledge it (the
        platform sends it again). A replica that dies handling it leaves it to another (``unhandled``)."""
        if self._queue is not None:
            await self._queue.received(f"{platform}:{key}", platform, payload)

    async def handled(self, platform: str, key: str) -> None:
        if self._queue is not None:
            await self._queue.handled(f"{platform}:{key}")

    async def unhandled(self, platform: str, older_than_s: float) -> list[tuple[str, str]]:
        """Events received and never handled (their replica died meanwhile): (key, payload), to handle now with
        ``take(..., replayed=True)``."""
        if self._queue is None:
            return []
        prefix = f"{platform}:"
        return [(key.removeprefix(prefix), payload) for key, payload in await self._queue.unhandled(platform, older_than_s)]

    async def _hand_back(self, queue: DurableQueue, run_ids: list[str]) -> None:
        """Jobs under way here go back to the queue rather than end stopped: another replica resumes them from
        what they saved, in the same messages, while this one stops without a word in their threads."""
        if not run_ids:
            return
        self._lost.update(run_ids)
        try:
            await queue.release(run_ids, handed_over=True)
        except Exception:  # the database is down: they are taken over once their heartbeat is old
            log.exception("could not hand %d run(s) back to the queue", len(run_ids))
        log.warning("handed %d run(s) back to the queue for another replica: %s", len(run_ids), ", ".join(run_ids))

    async def online(self, platform: ChatPlatform, open_thread: ThreadOpener | None,
                     connected: Connected = lambda: True) -> None:
        """An adapter has connected. Its connection counts for readiness (``connected`` says whether it
        still is); each run an earlier process left unfinished in its threads is ended there as
        interrupted, with the Stop control gone and a line saying a reply continues it, and, with
        ``[runtime] resume_interrupted``, continued at once from its saved files. ``open_thread`` None: the
        platform draws its threads again from the store (the web chat), so there is nothing to tell."""
        if self.health is not None:
            self.health.connection(platform.name, connected)
        if self._worker is not None:  # a platform that draws from the store (the web chat) takes no jobs
            if open_thread is not None:
                self._openers[platform.name] = (platform, open_thread)
            self._worker.serve(platform.name if open_thread is not None else None)
        for run in await self._store.untold_interrupted(platform.name):
            if open_thread is None:  # the platform draws its threads again from the store, interruptions included
                await self._store.told_interrupted(run.id)
                continue
            try:
                thread = await open_thread(run.thread_key)
                await self._tell_interrupted(run, thread, platform)
            except Exception:  # the thread may be gone; the run stays interrupted in the store either way
                log.exception("could not tell thread %s that run %s was interrupted", run.thread_key, run.id)
                await self._store.told_interrupted(run.id)
                continue
            await self._store.told_interrupted(run.id)
            if self._config.runtime.resume_interrupted:
                await self._resume(run, thread, platform)

    async def _tell_interrupted(self, run: Interrupted, thread: ChatThread, platform: ChatPlatform) -> None:
        renderer = RunRenderer(thread, platform, self._redact, self._languages)
        earlier = [e for e in await self._store.timeline(run.id) if not isinstance(e, RunFinished | CheckedIn)]
        await renderer.reopen(run.id, run.status_message, earlier)  # its status message keeps the steps it showed
        await renderer(RunFinished(run.id, status=RunStatus.INTERRUPTED, reason=INTERRUPTED_REASON, usage=run.usage))
        await renderer.done()

    async def _resume(self, run: Interrupted, thread: ChatThread, platform: ChatPlatform) -> None:
        request = ChatRequest(platform.name, run.thread_key, run.user_id, run.task, resumes=run.id)
        try:
            await self._start(request, thread, platform)
        except UserInputError as error:
            log.warning("could not resume run %s: %s", run.id, error)
        else:
            log.warning("resumed interrupted run %s in %s", run.id, run.thread_key)

    def _refuse_while_closing(self) -> None:
        if self._closing:
            raise UserInputError("The bot is restarting and takes no new work right now; send this again in a minute.")

    async def stop(self, run_id: str, place: Place, platform: ChatPlatform) -> str | None:
        """Stop a run for the person who pressed its Stop control; None once it is stopping, else a
        sentence for them: no access here, someone else's run, or a run that has ended. A durable job under way
        on another replica (or waiting) is asked to stop through the queue: its owner stops it."""
        refused = refusal(platform.access, place)
        if refused:
            return refused
        starter = await self.starter_anywhere(run_id)
        if starter is not None and starter != place.user:
            return f"Only {platform.markup.mention(starter)} (who started this run) can stop it."
        if not self.cancel(run_id) and (self._queue is None or await self._queue.request_stop(run_id, STOPPED_REASON) is None):
            return f"Run `{run_id}` is not running any more."
        log.info("run %s stopped by %s", run_id, place.user)
        return None

    async def stop_in(self, thread_key: str, place: Place, platform: ChatPlatform) -> str | None:
        """Stop the run under way (or waiting) in a conversation, wherever it runs: this process's own, else the
        one the store has running there (a durable job on another replica, or still queued), through ``stop``.
        None once it is stopping, else a sentence for the person (``NOTHING_TO_STOP`` when there is no run).
        Several people's runs may be there, one at work and the others waiting: the person's own is the one
        stopped (under way before waiting); only with none of theirs is the first taken, whose refusal names
        who may stop it."""
        key = conversation_key(platform.name, thread_key)
        runs = [(w.run_id, w.user_id) for w in [*self._running, *self._waiting] if w.thread == key]
        stored = await self._store.conversation_runs(platform.name, thread_key)  # jobs of other replicas too
        here = {run_id for run_id, _ in runs}
        runs += [(run.id, run.user_id) for run in stored if run.status == RunStatus.RUNNING and run.id not in here]
        if not runs:
            return NOTHING_TO_STOP
        run_id = next((run_id for run_id, user in runs if user == place.user), runs[0][0])
        return await self.stop(run_id, place, platform)

    @property
    def history(self) -> History:
        """The stored conversations, read only, for a platform that shows earlier ones (the web chat)."""
        return self._store

    def starter(self, run_id: str) -> str | None:
        """Who started a run under way (or queued) in this process: only they may stop it."""
        return next((w.user_id for w in [*self._running, *self._waiting] if w.run_id == run_id), None)

    async def starter_anywhere(self, run_id: str) -> str | None:
        """Who started a run under way (or queued) here or, with a shared queue, on any replica; None when no run by
        that id is under way."""
        starter = self.starter(run_id)
        if starter is None and self._queue is not None:
            starter = await self._queue.starter(run_id)
        return starter

    def active_run(self, platform: str, thread_key: str) -> str | None:
        """The run under way (or queued) in a thread, if any."""
        key = conversation_key(platform, thread_key)
        for waiter in [*self._running, *self._waiting]:
            if waiter.thread == key:
                return waiter.run_id
        return None

    def _repository(self, request: ChatRequest, previous: str = "") -> RepoTarget | None:
        """The repository the request is for; ``UserInputError`` (before any model call) when not allowed."""
        if self._repos is None:
            if request.repo:
                raise UserInputError("Repository work is not set up in this bot.")
            return None
        return self._repos.target(request.text, request.repo, request.base, request.places or (request.platform,),
                                  request.user_id, previous, request.platform)

    async def _open_repository(self, request: ChatRequest, run_id: str, prior: PriorWork | None,
                               publisher: Publisher) -> tuple[OpenedRepo | None, Publisher, PriorWork | None]:
        """The run's repository fetched (``CodegenError`` with a sentence when it cannot be), the publisher
        that checks the run in there (masked like every other), and what earlier runs left that belongs here:
        the files of another repository (or of none) are not carried into this one."""
        target = self._repository(request, prior.repository if prior else "")
        if target is None or self._repos is None:
            return None, publisher, prior
        same = prior is not None and prior.repository == target.name.shown
        branch = prior.branch if same and prior else request.branch
        opened = await self._repos.open(target, run_id, request.text.strip(), branch, request.user_id,
                                        mask=self._redact, platform=request.platform,
                                        own_branch=await self._kept_branch(request.resumes, target.name.shown),
                                        restart_when_gone=not request.pull)
        await self._store.set_repository(run_id, target.name.shown, opened.workspace.branch)
        if prior is not None and not same:
            prior = PriorWork(tasks=prior.tasks)
        return opened, MaskingPublisher(self._repos.publisher(opened, publisher, request.link, request.pull),
                                        self._redact), prior

    async def _kept_branch(self, resumes: str, repository: str) -> str:
        """The branch the run a resumed one goes on from worked on in ``repository``, recorded as it opened it."""
        record = await self._store.run(resumes) if resumes else None
        return record.summary.branch if record and record.summary.repository == repository else ""

    # -- one run ------------------------------------------------------------------------------

    async def _run(self, request: ChatRequest, run_id: str, conversation: int, waiter: _Waiter,
                   sink: EventSink, fallback: Publisher, resume_from: ResumeFrom | None = None,
                   durable: bool = False) -> RunFinished:
        """One run; ``resume_from``: a durable job the queue admitted (no local queue), taken over, going on from
        what the conversation and the run itself saved; ``durable``: a job, handed back to the queue when the store fails."""
        sinks: Sequence[EventSink] = (self._recorder(run_id, durable), sink)
        tag_logs(run_id=run_id, platform=request.platform, thread=request.thread_key)  # this run's task only
        driving = False
        opened: OpenedRepo | None = None
        try:
            if waiter in self._waiting:  # a job was admitted by the queue's claim
                await self._admit(waiter, sinks)
            prior = await (resume_from or self._store.prior_work)(conversation, run_id)
            try:
                opened, publisher, prior = await self._open_repository(request, run_id, prior,
                                                                       self._publisher_for(fallback))
            except (UserInputError, CheckInError) as error:  # the repository cannot be used: said, no model call
                failed = RunFinished(run_id, status=RunStatus.ERROR, reason=str(error))
                await deliver(failed, sinks)
                return failed
            if opened and opened.said:
                await deliver(Notice(run_id, opened.said), sinks)
            manager = Manager(self._model, self._sandbox, publisher, self._prompts, team_settings(self._config))
            run_request = RunRequest(task=_team_task(request), asked=request.text.strip(), run_id=run_id,
                                     attachments=request.attachments,
                                     prior=prior, conversation_key=waiter.thread, thread=request.thread,
                                     workspace=opened.workspace if opened else None)
            driving = True
            return await drive(run_id, manager.run(run_request), sinks, RunUsage(self._config.prices),
                               stop_reason=lambda: waiter.stop_reason)
        except asyncio.CancelledError:
            if not driving:  # stopped while queued or starting: nobody else will say so
                await asyncio.shield(deliver(stopped(run_id, waiter.stop_reason), sinks))
            raise
        except Exception as error:  # before the team started (the store failing, say); drive() covers the rest
            if durable and isinstance(error, StoreError):
                self._unrecorded.add(run_id)  # the job goes back to the queue, unsaid
            log.exception("run %s could not start", run_id)
            failed = RunFinished(run_id, status=RunStatus.ERROR, reason=INTERNAL_ERROR_REASON)
            await deliver(failed, sinks)
            return failed
        finally:
            if opened is not None:
                await asyncio.shield(opened.close())
            self._release(waiter)

    async def _admit(self, waiter: _Waiter, sinks: Sequence[EventSink]) -> None:
        """Wait until the limits let this run start, telling its sink where it stands in the queue."""
        told = -1
        try:
            while True:
                waiter.ready.clear()  # before the check: a release during the notice below must not be lost
                if self._can_start(waiter):
                    break
                position = self._waiting.index(waiter)
                if position != told:
                    told = position
                    await deliver(Notice(waiter.run_id, _queue_text(position)), sinks)
                await waiter.ready.wait()
        finally:
            self._waiting.remove(waiter)
        self._running.append(waiter)

    def _can_start(self, waiter: _Waiter) -> bool:
        limits = self._config.limits
        if len(self._running) >= limits.max_concurrent_runs:
            return False
        if sum(w.user_id == waiter.user_id for w in self._running) >= limits.max_runs_per_user:
            return False
        if any(w.thread == waiter.thread for w in self._running):
            return False
        earlier = self._waiting[: self._waiting.index(waiter)]
        return not any(w.thread == waiter.thread for w in earlier)  # a thread's runs go in order

    def _release(self, waiter: _Waiter) -> None:
        if waiter in self._running:
            self._running.remove(waiter)
        for other in self._waiting:
            other.ready.set()


NOTHING_TO_STOP = "No run is under way here, so there is nothing to stop."
UNSTARTABLE_REASON = ("the run could not start: its thread could not be opened or written to (deleted, or the bot "
                      "removed from it); the bot's log says why")
NOT_READ = "earlier messages not read"  # the platform withheld them: the status message's line
READ_FAILED = ("The bot could not read the earlier messages here (something went wrong on its side; the details "
               "are in its log); it works from your request alone.")
RESUMED_PREFIX = "(Resumed after a restart, from the interrupted run's saved files.)"
ThreadOpener = Callable[[str], Awaitable[ChatThread]]  # a thread by its key, as a platform finds it again
ResumeFrom = Callable[[int, str], Awaitable[PriorWork | None]]  # (conversation, run) -> what it goes on from


def _team_task(request: ChatRequest) -> str:
    """The task as the team reads it: a resumed run's says so first."""
    return f"{RESUMED_PREFIX} {request.text.strip()}" if request.resumes else request.text.strip()


def _job_json(request: ChatRequest) -> str:
    """What a worker on any replica needs of a request, beside what the run's row keeps (task, user, thread)."""
    return json.dumps({"text": request.text, "attachments": [[a.name, a.content] for a in request.attachments],
                       "repo": request.repo, "base": request.base, "branch": request.branch,
                       "places": list(request.places), "link": request.link, "resumes": request.resumes})


def _job_request(claimed: Claimed, thread: ThreadContext | None) -> ChatRequest:
    job = json.loads(claimed.job)
    return ChatRequest(claimed.platform, claimed.thread_key, claimed.user_id, job["text"],
                       tuple(Attachment(name, content) for name, content in job["attachments"]), repo=job["repo"],
                       base=job["base"], branch=job.get("branch", ""), places=tuple(job["places"]), link=job["link"],
                       thread=thread, resumes=job.get("resumes", ""))


async def _pushed(handle: RunHandle, renderer: RunRenderer, link: str) -> Pushed:
    """The run, once it has ended, for the CI chain that follows it. A run stopped by its Stop control ends its
    task cancelled: its final event is the one its thread was given."""
    try:
        finished = await handle.wait()
    except asyncio.CancelledError:
        if not handle.task.cancelled():
            raise  # the chain itself is being stopped
        finished = await renderer.done() or stopped(handle.run_id)
    except Silenced:  # a durable job lost to another replica: that one follows its CI
        raise asyncio.CancelledError from None
    return Pushed(finished, renderer, link)


def _masked(request: ChatRequest, known: Redactor) -> ChatRequest:
    """The request with secrets in its text, attached files and thread masked, said among its thread's notes: the
    bot's own (``known``: a person may paste the bot's key or a webhook secret), those of a common format, and
    credentials written into a URL in the task or in ``--repo`` (the bot fetches with its own token). The task,
    the files and the thread reach prompts, the store, a Gist and the log."""
    text, repo, found = _masked_words(request, known)
    attachments: list[Attachment] = []
    for attachment in request.attachments:
        name, in_name = mask_secrets(attachment.name, known)  # a file may be named after the key it holds
        content, in_file = mask_secrets(attachment.content, known)
        attachments.append(Attachment(_unclaimed(name, {a.name for a in attachments}) if in_name else name, content))
        found += in_name + in_file
    thread, in_thread = _masked_thread(request.thread, known)
    if not (found or in_thread):
        return request
    thread = thread or ThreadContext()
    notes = [*thread.notes]
    if found:
        notes.append(f"{found} secret{'' if found == 1 else 's'} (tokens or keys) in the request "
                     f"{'was' if found == 1 else 'were'} masked before anything was sent on.")
    if in_thread:
        notes.append(f"{in_thread} more secret{'' if in_thread == 1 else 's'} (tokens or keys) in the thread "
                     f"{'was' if in_thread == 1 else 'were'} masked before anything was sent on.")
    return dataclasses.replace(request, text=text, repo=repo, attachments=tuple(attachments),
                               thread=dataclasses.replace(thread, notes=tuple(notes)))


def _unclaimed(name: str, taken: set[str]) -> str:
    """``name``, or ``name-2.ext`` and on when another file has it: two names masked alike stay two files."""
    stem, dot, extension = name.rpartition(".") if "." in name.rpartition("/")[2] else (name, "", "")
    number = 2
    while name in taken:
        name, number = f"{stem}-{number}{dot}{extension}", number + 1
    return name


MASK_ON_THE_LOOP_CHARS = 64 * 1024  # a request this small is masked in well under a millisecond


async def _masked_off_the_loop(request: ChatRequest, known: Redactor) -> ChatRequest:
    """``_masked``, in a worker thread for a large request: masking takes time in proportion to the text (about a
    second for ten files of 256 KB), which would hold every other run, chat event and health check meanwhile."""
    size = len(request.text) + sum(len(a.content) for a in request.attachments)
    if request.thread is not None:
        size += sum(len(m.text) for m in request.thread.messages) + sum(len(f.content) for f in request.thread.files)
    if size < MASK_ON_THE_LOOP_CHARS:
        return _masked(request, known)
    return await asyncio.to_thread(_masked, request, known)


def _masked_naming(request: ChatRequest, known: Redactor) -> ChatRequest:
    """The request with what names its repository masked (its text, ``--repo``), for a refusal that may quote
    them: its files and thread, the most of what is masked, are masked once, as the run starts (``_masked``)."""
    text, repo, _ = _masked_words(request, known)
    return dataclasses.replace(request, text=text, repo=repo)


def _masked_words(request: ChatRequest, known: Redactor) -> tuple[str, str, int]:
    """The request's text and ``--repo`` with secrets and URL credentials masked, and how many were."""
    text, in_urls = mask_url_credentials(request.text)
    repo, in_repo = mask_url_credentials(request.repo)
    text, found = mask_secrets(text, known)
    return text, repo, found + in_urls + in_repo


def _masked_thread(thread: ThreadContext | None, known: Redactor) -> tuple[ThreadContext | None, int]:
    """The thread an adapter read, with what its own reading could not know masked (the bot's own secrets)."""
    if thread is None:
        return None, 0
    found = 0

    def mask(text: str) -> str:
        nonlocal found
        text, n = mask_secrets(text, known)
        found += n
        return text

    messages = tuple(dataclasses.replace(m, author=mask(m.author), text=mask(m.text)) for m in thread.messages)
    files = tuple(Attachment(mask(f.name), mask(f.content)) for f in thread.files)
    return dataclasses.replace(thread, messages=messages, files=files), found


def _queue_text(position: int) -> str:
    if position == 0:
        return "Queued: next in line, waiting for a free slot."
    return f"Queued: {position} run{' is' if position == 1 else 's are'} ahead of this one."


def team_settings(config: Config) -> TeamSettings:
    """How the team works on every run this config serves (``codegen-chat eval`` lays its modes over it)."""
    return TeamSettings(budget=config.budget, publish_failed=config.checkin.publish_failed,
                        order=Order(config.team.order), fix_replies=FixReplies(config.team.fix_replies),
                        wait_notice_s=config.team.wait_notice_s, languages=registry(config.sandbox),
                        resample_temperature=config.team.resample_temperature if config.team.fresh_candidates else None)


def new_run_id() -> str:
    return random_tokens.token_hex(4)
