"""The Manager: the team's workflow, in code.

    Plan -> Code -> Review --(changes)--> Code ...
                      \\--(approve)--> Test --(pass)--> Check-In -> finished (passed)
                                           \\--(fail)--> triage -> Code | fix tests -> Test | re-plan -> ...
    budget exhausted -> best attempt checked in -> finished (failed or stopped, saying why)
    any ending without a pass (budget, error, stop) -> the best version tested (agents.candidates)

That is the meaning of a run, and ``order = "sequential"`` runs it exactly so, one agent at a time. The
default, ``"overlapped"``, lets agents whose work does not depend on each other write at the same time,
which shortens what a person waits for:

    Plan -> Code + Tests (the Tester writes from the plan)  -> Review + (Test -> triage) -> ...

the review and the test run (and its triage) go on together, and both must approve for the run to pass;
the sandbox starts the round's container while the models write; and no triage is asked for when its
outcome is forced (only the user's tests exist and no re-plan is left): the code is what must change.

Each role sees only what it needs to decide, and nothing twice: the task, the plan while it has not been
coded yet, the latest files, the latest review or test report (``agents.prompt_contexts`` builds each role's
context, ``prompts/`` holds its template). The prompt stays the same size however many rounds the run takes.
What the workflow decides on is a few named values (``agents.run_state``: the work, what was last said about
it, who writes next, what was spent), each replaced whole by the step that moves it. Models decide where
judgement is needed (review verdict, triage); this code enforces the allowed transitions and the budgets.

How events reach the consumer: each step is a plain coroutine that awaits the run's sink
(``run.emit``) for every event it has to tell, and returns what it produced (a plan, files, a
review, a report, a decision). ``Manager.run`` hands that sink's events to its caller as an async
iterator (``agents.handoff``). A sink rather than steps that are generators: an async generator
cannot return a value, so every step's result would have to travel through a side channel, and
every caller would have to relay its events by hand. Steps that work at the same time tell their
events through lanes (``agents.lanes``), so a consumer still sees one turn after another.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TypeVar

from agents import candidates, file_names, python_files
from agents import prompt_contexts as contexts
from agents.candidates import Candidate
from agents.checkless import cannot_pass_tests, checkless_tests
from agents.errors import (
    AgentReplyError,
    BudgetExhausted,
    CheckInError,
    EmptyReply,
    ModelError,
    PromptTooLong,
    ReplyCut,
    ReplyDropped,
    RunFailed,
    SandboxError,
)
from agents.events import (
    BestVersion,
    CheckedIn,
    Decided,
    Event,
    Notice,
    Planned,
    ReadmeWritten,
    Reviewed,
    RunFinished,
    RunStarted,
    TestReported,
    TextDelta,
    TurnFinished,
    TurnMeaning,
    TurnStarted,
    Waiting,
    WorkSaved,
)
from agents.file_replies import diff_unapplied, without_open_block
from agents.handoff import Emit, events_of
from agents.lanes import at_once, lane_or
from agents.language import BUILT_IN, DEFAULT, Languages
from agents.prompt_contexts import PromptContext
from agents.prompts import PromptBook
from agents.protocols import ChatModel, Publisher, Sandbox, Workspace
from agents.replies import (
    Action,
    FileReply,
    ReplyFormatError,
    Review,
    Triage,
    parse_files,
    parse_plan,
    parse_readme,
    parse_review,
    parse_triage,
    without_language_line,
)
from agents.repository import baseline_failures, baseline_ran, files_holding_tests, judged, named_files, without_protected
from agents.run_request import RunRequest
from agents.run_state import Due, Spent, Standing, Work
from agents.task_examples import example_tests
from agents.test_health import CodeLacks, code_lacks, nothing_ran, teams_ran_none, unrunnable_tests
from agents.trimming import trimmed
from agents.types import CheckInResult, FileSet, Message, Publication, Role, RunStatus, TestJob, TestReport, Usage

T = TypeVar("T")
log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 4  # to count a reply's tokens as they arrive (servers report usage only at the end)
PROMPT_CHARS_PER_TOKEN = 3  # a cautious size of a prompt, when trimming it for a model's context


def estimated_tokens(messages: Sequence[Message]) -> int:
    """A prompt's tokens, counted from its characters, for what a reply the server never finished cost."""
    return sum(len(m.content) for m in messages) // CHARS_PER_TOKEN
CUT_NOTE = ("Your previous answer to this was cut off because it was too long. Answer again, shorter: "
            "no explanations, and only what is asked for, complete.")
INTERNAL_ERROR = "an internal error ended the run; the details are in the bot's log"
WHOLE_FROM_NOW = ("The Programmer's reply to a request for a diff held no diff that applies; it writes its fixes as "
                  "whole files for the rest of this run.")
# Files this large (in all) or larger have a fix asked for as a diff under ``fix_replies = "auto"``: below it the
# whole file is about as short as a diff with its context lines and its headers, and any model writes it.
DIFF_WORTH_CHARS = 1200


@dataclass(frozen=True)
class Budget:
    max_rounds: int = 6
    max_tokens: int = 400_000
    max_wall_s: float = 1200.0
    max_replans: int = 1


class Order(StrEnum):
    """How the team's steps follow each other (the module docstring draws both)."""

    OVERLAPPED = "overlapped"  # independent steps at the same time: a shorter wait, the same checks
    SEQUENTIAL = "sequential"  # one agent at a time, each seeing the step before it


class FixReplies(StrEnum):
    """How the Programmer is asked to reply when it changes code it wrote."""

    AUTO = "auto"  # diffs for fixes of larger files until an answer holds no usable diff, then whole files for the run
    WHOLE = "whole"  # every changed file whole: any model manages it
    DIFF = "diff"  # a unified diff of each changed file: a far shorter reply, but a diff can fail to apply


@dataclass(frozen=True)
class TeamSettings:
    budget: Budget = field(default_factory=Budget)
    order: Order = Order.OVERLAPPED
    fix_replies: FixReplies = FixReplies.AUTO
    publish_failed: bool = True  # check in the best attempt of a run whose tests failed
    review: bool = True  # the Optimizer reviews each version of the code before it is tested
    check_in: bool = True  # the Check-In writes a README and publishes the outcome (off: nothing is published)
    wait_notice_s: float = 5.0  # silence from the model before the run says it is waiting
    wait_repeat_s: float = 10.0  # and how often it says so again while the silence lasts
    languages: Languages = BUILT_IN  # the languages the team knows (the config adds its own)
    task_examples: bool = True  # the examples in the given files' docstrings run as tests no one may edit
    plan_stubs: bool = False  # plan even when the given files already hold the functions to write
    # A candidate that failed the task's own tests is followed by one written afresh from the given files, sampled
    # at this temperature so it can differ (agents.candidates); None: the failing one is fixed instead.
    resample_temperature: float | None = 0.8


@dataclass
class _Run:
    """Everything the workflow knows about the run under way; the roles get slices of it. What the workflow
    decides on is a few named values (``agents.run_state``), each replaced whole by the step that moves it."""

    request: RunRequest
    started: float
    sink: Emit  # where the run's events go (see the module docstring); steps use ``emit``
    plan: str = ""
    plan_seen: frozenset[str] = frozenset()  # roles that have worked from the current plan
    language: str = ""
    work: Work = field(default_factory=Work)  # the files as they stand
    standing: Standing = field(default_factory=Standing)  # the latest review, test report and triage
    due: Due = field(default_factory=Due)  # who writes in the next round
    spent: Spent = field(default_factory=Spent)  # rounds, re-plans and tokens so far
    tested: Work | None = None  # the work as the last test run saw it
    checkin: CheckInResult | None = None
    unbudgeted: bool = False  # set while the best attempt is checked in after the budget ran out
    reply_notes: dict[str, tuple[str, ...]] = field(default_factory=dict)  # per role: what its last reply lost
    written: dict[str, int] = field(default_factory=dict)  # path -> when last written (a counter): newest is highest
    answered: asyncio.Event = field(default_factory=asyncio.Event)  # the model has begun its first reply
    workspace: Workspace | None = None  # the repository the run works in, if any
    already_failing: tuple[str, ...] = ()  # its tests that failed before any change (the baseline run)
    ran_before: tuple[str, ...] = ()  # its tests that ran before any change: each must run after it too
    tested_before: frozenset[str] = frozenset()  # the files those tests lie in, by the runner's report: never written
    tried: tuple[Candidate, ...] = ()  # every tested version, in order: a run ends with the best (agents.candidates)
    reviews: tuple[tuple[FileSet, Review], ...] = ()  # each review, with the code it judged
    given: FileSet = field(default_factory=FileSet)  # the code as the user gave it (a fresh candidate starts there)
    start_again: str = ""  # why the next candidate starts from ``given`` (agents.candidates); "": it does not
    diffs_apply: bool = True  # False once an answer to a request for a diff held none that applies (``FixReplies.AUTO``)

    @property
    def round(self) -> int:
        return self.spent.rounds

    def take(self, usage: Usage) -> None:
        self.spent = self.spent.plus(usage)

    async def emit(self, event: Event) -> None:
        await lane_or(self.sink)(event)


class Manager:
    """Runs the team on requests and yields each run's events as they happen. One Manager can serve
    any number of runs, one after another or at once: everything about a run lives in its ``_Run``."""

    def __init__(
        self,
        model: ChatModel,
        sandbox: Sandbox,
        publisher: Publisher,
        prompts: PromptBook | None = None,
        settings: TeamSettings | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._model, self._sandbox, self._publisher = model, sandbox, publisher
        self._settings = settings or TeamSettings()
        self._languages = self._settings.languages
        self._prompts = prompts or PromptBook(languages=self._languages)
        self._clock = clock

    def run(self, request: RunRequest) -> AsyncIterator[Event]:
        """The run's events, ending with exactly one ``RunFinished``."""
        return events_of(lambda emit: self._execute(request, emit))

    async def _execute(self, request: RunRequest, emit: Emit) -> None:
        run = self._start(request, emit)
        read = request.thread.summary if request.thread is not None else ""  # a follow-up's thread was read by the first run
        await emit(RunStarted(request.run_id, task=request.task, follow_up=len(request.prior.tasks) if request.prior else 0,
                              context=read))
        for note in request.thread.notes if request.thread is not None else ():  # the cut, masked secrets, what was not read
            await emit(Notice(request.run_id, note))
        try:
            await self._enter_workspace(run)
            finished = await self._work(run)
        except BudgetExhausted as why:
            finished = await self._finish_unproven(run, str(why))
        except RunFailed as error:
            finished = await self._finish_broken(run, str(error))
        except Exception:  # a bug or an unexpected library error: end honestly and keep the best files
            log.exception("run %s broke unexpectedly", request.run_id)
            finished = await self._finish_broken(run, INTERNAL_ERROR)
        await emit(finished)

    # -- the workflow ---------------------------------------------------------------------------

    async def _work(self, run: _Run) -> RunFinished:
        await self._first_plan(run)
        overlapped = self._settings.order is Order.OVERLAPPED
        while not await (self._overlapped_round(run) if overlapped else self._sequential_round(run)):
            pass
        run.checkin = await self._check_in(run, RunStatus.PASSED)
        return self._finished(run, RunStatus.PASSED, "tests passed and the review approved" if self._settings.review
                              else "tests passed (no review)")

    async def _sequential_round(self, run: _Run) -> bool:
        """One agent at a time: code, review (changes go straight back), tests, triage. True once passed. With
        user tests, the tests come before the review: code that fails them is changed unreviewed."""
        self._next_round(run)
        coding, users_first = run.due.code, self._users_judge(run)
        if coding:
            await self._code_step(run)
            if self._settings.review and not users_first:
                review = await self._review(run, run.standing)
                run.standing = run.standing.with_review(review)
                if not review.approved:
                    run.due = run.due.code_again()
                    return False
        if run.due.tests:
            await self._tests_step(run)
        if not (coding and self._settings.review and users_first):
            return await self._act_on(run, await self._test_and_triage(run, forced_triage=True))
        report = await self._test(run)
        if (users := await self._users_failure(run, report)) is not None:
            return await self._act_on(run, users)
        review = await self._review(run, run.standing)
        run.standing = run.standing.with_review(review)
        if not review.approved:
            run.due = run.due.code_again()
            return False
        return await self._act_on(run, await self._decide(run, report, forced_triage=True, users_checked=True))

    async def _overlapped_round(self, run: _Run) -> bool:
        """The Programmer and the Tester write at the same time, then the review runs while the tests run and
        a failure is triaged. The same checks as a sequential round: it passes only when the tests pass and
        the review approves (with review on). True once passed."""
        self._next_round(run)
        self._prepare_sandbox(run)
        coding = run.due.code
        await at_once(run.sink, *([self._code_step(run)] if coding else []),
                      *([self._tests_step(run)] if run.due.tests else []))
        if not coding or not self._settings.review:  # the code stands as reviewed (or unreviewed)
            return await self._act_on(run, await self._test_and_triage(run, forced_triage=False))
        if self._users_judge(run):  # the user's tests first: code that fails them is changed, not reviewed
            report = await self._test(run)
            if (users := await self._users_failure(run, report)) is not None:
                return await self._act_on(run, users)
            review, decision = await at_once(run.sink, self._review(run, run.standing),
                                             self._decide(run, report, forced_triage=False, users_checked=True))
        else:
            review, decision = await at_once(run.sink, self._review(run, run.standing),
                                             self._test_and_triage(run, forced_triage=False))
        run.standing = run.standing.with_review(review)
        passed = await self._act_on(run, decision)
        if not review.approved:
            run.due = run.due.code_again()
        return passed and review.approved

    async def _test_and_triage(self, run: _Run, forced_triage: bool) -> Triage | None:
        """Run the tests; None when they passed, else who acts on the failure (a test that could not run goes
        back to the Tester without triage; ``forced_triage`` asks the Manager even when only one answer is
        allowed). No triage is asked for a round that cannot happen."""
        return await self._decide(run, await self._test(run), forced_triage)

    async def _decide(self, run: _Run, report: TestReport, forced_triage: bool,
                      users_checked: bool = False) -> Triage | None:
        """Who acts on the test run just made (``_test_and_triage``); code failing the user's tests is changed at
        once (unless ``users_checked``: they passed)."""
        if not users_checked and (users := await self._users_failure(run, report)) is not None:
            return users
        tests = run.work.tests
        unrunnable = (unrunnable_tests(report, run.language, tests, self._languages) if tests
                      else nothing_ran(report, run.language, self._languages) if run.standing.no_tests else "")
        # Passing tests that cannot fail prove nothing, and failing tests that cannot pass (an example's placeholders
        # kept) ask for no change of the code: both are the Tester's to fix, as tests that cannot run.
        code = [*run.work.files, *(run.workspace.paths() if run.workspace else ())]
        cannot_fail = checkless_tests(tests.as_dict(), self._languages, code) if report.ok and not unrunnable else ""
        cannot_pass = cannot_pass_tests(tests.as_dict(), self._languages, code) if not report.ok and not unrunnable else ""
        earlier, run.standing = run.standing, run.standing.with_report(report, cannot_fail, cannot_pass)
        if report.ok and not unrunnable and not cannot_fail:
            return None
        if run.round >= self._settings.budget.max_rounds:
            return Triage(Action.FIX_CODE, "")  # _act_on ends the run: the rounds are used up
        if cannot_fail:
            triage = await self._send_back_to_tester(run, cannot_fail, ran=True)
        elif cannot_pass:
            triage = await self._send_back_to_tester(run, cannot_pass, ran=True, passed=False)
        elif unrunnable and (lacks := code_lacks(report, run.work.files, f"{run.request.task}\n{run.plan}",
                                                 earlier.report, bool(earlier.triage and earlier.triage.action
                                                                      is Action.FIX_TESTS))):
            triage = await self._code_lacks(run, lacks)
        else:
            triage = await self._send_back_to_tester(run, unrunnable) if unrunnable else await self._triage(
                run, forced_triage)
        run.standing = run.standing.with_triage(triage)
        return triage

    def _users_judge(self, run: _Run) -> bool:
        """Whether the user's own tests are the first check of each version of the code (``agents.candidates``)."""
        return bool(run.work.user_tests) and run.workspace is None

    async def _users_failure(self, run: _Run, report: TestReport) -> Triage | None:
        """After a test run (``report``), which makes the tested work a candidate (``agents.candidates``): when the
        code failed the user's tests, the decision to change it (the Programmer then sees their failure alone)."""
        tested = run.tested
        if tested is None or run.workspace is not None:
            return None
        users: TestReport | None = None
        if self._users_judge(run):
            users = report
            if candidates.users_alone_needed(report, tested.tests):
                users = await self._sandbox.run(candidates.users_job(self._job(run, tested), tested.tests))
        await self._try(run, candidates.judged(tested, report, users, run.round))
        if users is None or users.ok:
            return None
        if self._settings.resample_temperature is not None and run.given and not run.start_again:
            run.start_again = candidates.RESAMPLE_REASON  # a small model's fresh attempt beats its fix of this one
        await run.emit(Notice(run.request.run_id, f"The task's own tests failed ({users.summary()}); the Programmer "
                                                  f"{'writes the code afresh' if run.start_again else 'changes the code'}."))
        triage = Triage(Action.FIX_CODE, candidates.FIX_REASON)
        run.standing = run.standing.with_report(users).with_triage(triage)
        return triage

    async def _try(self, run: _Run, candidate: Candidate) -> None:
        """Count a tested version among the run's candidates, telling the best one whenever it changes."""
        was = self._best(run)
        run.tried = (*run.tried, candidate)
        if (now := self._best(run)) is not None and now is not was:
            work = now.work
            await run.emit(BestVersion(run.request.run_id, files=work.files, tests=work.all_tests(),
                                       user_tests=work.user_tests, report=now.report, round=now.round))

    def _best(self, run: _Run) -> Candidate | None:
        return candidates.best(run.tried, first_of_equals=self._users_judge(run))

    async def _act_on(self, run: _Run, decision: Triage | None) -> bool:
        """Set the next round's work after the tests; True when they passed."""
        if decision is None:
            return True
        self._ensure_round_left(run)
        run.due = run.due.after(decision.action)
        if decision.action is Action.REPLAN:
            run.spent = run.spent.replanned()
            await self._plan(run)
        return False

    async def _code_step(self, run: _Run) -> None:
        """The Programmer's turn, its files kept (and saved for a follow-up) as soon as it ends. A test file is the
        Tester's and a code file the Programmer's, whichever of them wrote it and whoever finished first. A fix
        that comes back unchanged has the next candidate written afresh from the given files (``agents.candidates``)."""
        fixing, again = run.standing.failure()[0] is not None, bool(run.start_again)
        written = await self._guarded(run, await self._code(run))
        written = written.without(p for p in written if p in run.work.tests and self._languages.looks_like_test(p))
        unchanged = fixing and not again and bool(run.given) and candidates.unchanged(written, run.work.files)
        run.start_again = candidates.AGAIN_REASON if unchanged else ""
        if unchanged:
            await run.emit(Notice(run.request.run_id, candidates.AGAIN_NOTICE))
        run.work = run.work.coded(self._stamped(run, written))
        run.language = self._languages.detect(run.work.files, run.language)
        run.due = run.due.code_written()
        await run.emit(self._saved(run))

    async def _tests_step(self, run: _Run) -> None:
        """The Tester's turn, its files kept (and saved) as soon as it ends (whose file is whose: ``_code_step``)."""
        written = await self._guarded(run, await self._write_tests(run))
        written = written.without(p for p in written if p in run.work.files and not self._languages.looks_like_test(p))
        run.work = run.work.tested_by(self._stamped(run, written))
        run.due = run.due.tests_written()
        run.standing = run.standing.tests_written(saved=bool(run.work.tests))
        await run.emit(self._saved(run))

    async def _guarded(self, run: _Run, written: FileSet) -> FileSet:
        """In a repository, its existing tests are authoritative, its CI configuration is off limits and no file
        is rewritten unread: such a write is dropped, and said (an unread file is read for the next round)."""
        if run.workspace is None:
            return written
        kept, tests, ci = without_protected(written, _existing_tests(run))
        if tests:
            await run.emit(Notice(run.request.run_id, f"Not saved: {', '.join(tests)} (the repository's own tests "
                                                      "are authoritative, and so is what configures how they run; the "
                                                      "team adds tests, it does not edit them)."))
        if ci:
            await run.emit(Notice(run.request.run_id, f"Not saved: {', '.join(ci)} (CI configuration runs with the "
                                                      "repository's secrets; the team does not write it)."))
        if refused := run.workspace.unwritable(kept):
            await run.emit(Notice(run.request.run_id, "Not saved: " + "; ".join(f"{p} ({why})" for p, why in
                                                                                refused.items()) + "."))
            kept = kept.without(refused)
        unread = sorted(p for p in kept if p in run.workspace.paths() and p not in run.work.files
                        and p not in run.work.tests)
        if unread:  # a whole file written without its current text would throw the rest of it away
            run.work = run.work.with_files(run.work.files.merged(await run.workspace.read(unread)))
            await run.emit(Notice(run.request.run_id, f"Not saved: {', '.join(unread)} (written without being read; "
                                                      "the team now has the file as it is and can change it)."))
        return kept.without(unread)

    async def _first_plan(self, run: _Run) -> None:
        """The plan, while the sandbox checks that it can run tests. A run that cannot test ends then, before
        any other model call, and says so whatever else went wrong meanwhile (the model's endpoint, say).
        Files that already hold the functions to write (their signatures and docstrings) are the plan: the
        Programmer writes first, from the task and those files."""
        if not self._settings.plan_stubs and not run.request.prior and _stubs_given(run.work.files):
            run.answered.set()
            run.language = self._languages.detect(run.work.files, run.language) or DEFAULT
            await self._start_sandbox(run)
            return
        try:
            await at_once(run.sink, self._plan(run), self._start_sandbox(run), *(
                [self._baseline(run)] if run.workspace else []))
        except RunFailed as error:
            ready = getattr(self._sandbox, "ready", None)
            if ready is not None and not isinstance(error, SandboxError):
                await ready()  # its SandboxError, when it cannot test, is the reason the run gives
            raise

    async def _enter_workspace(self, run: _Run) -> None:
        """A repository run starts from the files its task names, read whole, and tests in its language."""
        workspace = run.workspace
        if workspace is None:
            return
        # Files given with the request or read from its thread never stand in for the repository's own tests,
        # their configuration or its CI files: the same rule as for what the team writes.
        given = run.work.files.merged(run.work.user_tests)
        _, tests, ci = without_protected(given, workspace.existing_tests())
        if dropped := [*tests, *ci]:
            run.work = Work(run.work.files.without(dropped), run.work.tests, run.work.user_tests.without(dropped))
            await run.emit(Notice(run.request.run_id, f"Not used: {', '.join(dropped)} from the request or its "
                                                      "thread (the repository's own tests and CI files stay as "
                                                      "they are)."))
        await workspace.read([p for p in given if p in workspace.paths()])  # fetched: ``unwritable`` knows them then
        if refused := workspace.unwritable(run.work.files.merged(run.work.user_tests)):
            run.work = Work(run.work.files.without(refused), run.work.tests, run.work.user_tests.without(refused))
            await run.emit(Notice(run.request.run_id, "Not used, from the request or its thread: " + "; ".join(
                f"{p} ({why})" for p, why in refused.items()) + "."))
        named = named_files(run.request.task, workspace.paths())
        run.work = run.work.with_files((await workspace.read(named)).merged(run.work.files))
        run.language = workspace.tests().language
        await run.emit(Notice(run.request.run_id, f"Working in {workspace.name}: {len(workspace.paths()):,} files; "
                                                  f"read whole: {', '.join(run.work.files) or 'none yet'}."))

    async def _baseline(self, run: _Run) -> None:
        """The repository's tests before any change, so the ones already failing are never blamed on it."""
        report = await self._sandbox.run(await self._repo_job(run, FileSet(), FileSet()))
        run.already_failing = baseline_failures(report)
        run.ran_before = baseline_ran(report)
        run.tested_before = files_holding_tests(report.ran, run.workspace.paths()) if run.workspace else frozenset()
        failing = ", ".join(run.already_failing[:10]) or "none"
        if not report.ok and not run.already_failing:
            failing = "none that can be named (the tests do not pass as the repository stands)"
        await run.emit(Notice(run.request.run_id, f"Before any change, the repository's tests: {report.summary()}; "
                                                  f"already failing: {failing}."))

    async def _repo_job(self, run: _Run, files: FileSet, tests: FileSet) -> TestJob:
        """The repository's own tests over its whole tree, with the team's files laid over it."""
        assert run.workspace is not None
        repo_tests = run.workspace.tests()
        changed = files.merged(tests)
        tree = await run.workspace.everything()  # the rest of the tree arrives while the Planner writes
        return TestJob(language=repo_tests.language, files=tree.merged(changed), timeout_s=self._time_left(run),
                       command=repo_tests.command, report_format=repo_tests.report_format, team_files=tuple(changed))

    async def _read_named(self, run: _Run, text: str) -> None:
        """Files of the repository the plan names, read whole when the team does not have them yet."""
        if run.workspace is None:
            return
        wanted = [p for p in named_files(text, run.workspace.paths()) if p not in run.work.files]
        if wanted:
            run.work = run.work.with_files(run.work.files.merged(await run.workspace.read(wanted)))

    async def _start_sandbox(self, run: _Run) -> None:
        """Have the sandbox check it can run tests (its engine, its images) while the Planner writes: once the
        model has begun to answer, so the first request does not wait for it (a sandbox with ``ready``)."""
        ready = getattr(self._sandbox, "ready", None)
        if ready is not None:
            await run.answered.wait()
            await ready()

    def _prepare_sandbox(self, run: _Run) -> None:
        """Have the sandbox start this round's container while the models write (when it can)."""
        prepare = getattr(self._sandbox, "prepare", None)
        if prepare is not None and run.language:
            try:
                prepare(run.language)
            except Exception:  # a hint; the test run starts its own container and reports any trouble
                log.warning("the sandbox could not prepare a %s container", run.language, exc_info=True)

    async def _plan(self, run: _Run) -> None:
        """Ask the Planner for a (new) plan; the run takes its plan and language."""
        previous, run.plan = run.plan, ""
        triage = run.standing.triage
        prompt = contexts.for_planner(run.request, run.work, previous, triage.reason if triage else "", run.workspace)
        try:
            run.plan, hint = await self._turn(run, prompt, parse_plan,
                                              meant=lambda plan: Planned(plan[1], without_language_line(plan[0])))
        finally:
            run.answered.set()
        await self._read_named(run, run.plan)
        run.plan_seen = frozenset()
        if run.workspace is not None:
            return  # the repository's tests decide the language
        if hint and not self._languages.known(hint, run.request.task):
            hint = ""  # "LANGUAGE: English" from a small model is no language to test in
        run.language = (self._languages.detect(run.work.files, hint or run.language)
                        or self._languages.named_in(run.request.task) or DEFAULT)

    def _plan_for(self, run: _Run, role: Role) -> str:
        """The plan, for a role that has not worked from it yet (afterwards the files carry it)."""
        if role in run.plan_seen:
            return ""
        run.plan_seen = run.plan_seen | {role}
        return run.plan

    async def _code(self, run: _Run) -> FileSet:
        """The files the Programmer wrote (never a test file). It sees the user's tests (they say what the code
        must do) and, for the team's, what failed: the team's tests are written apart from the code."""
        work, standing = run.work, run.standing
        if run.start_again:  # a fresh candidate: the given stub, and why (agents.candidates)
            work = work.with_files(candidates.fresh_start(work.files, run.given))
            standing = standing.with_triage(Triage(Action.FIX_CODE, run.start_again))
        fixing = standing.failure()[0] is not None or bool(standing.changes_asked())
        as_diff = not run.start_again and self._as_diffs(run, fixing, work.files)
        # Read against the files the Programmer was shown: for a fresh candidate, the given stub.
        context = contexts.for_reading_files(work, run.language, run.request.task, run.plan, self._languages)
        sampled = self._settings.resample_temperature if run.start_again else None  # so it can differ
        unapplied: list[bool] = []  # whether a reply of this turn held a diff that did not apply

        def read(text: str) -> FileReply:
            try:
                reply = parse_files(text, context)
            except ReplyFormatError as error:
                unapplied.append(any(map(diff_unapplied, (str(error), *error.notices))))
                raise
            unapplied.append(any(map(diff_unapplied, reply.notices)))
            return reply

        def asked(as_diff: bool) -> PromptContext:
            return contexts.for_programmer(
                run.request.task, work, standing, self._plan_for(run, Role.PROGRAMMER), run.language, as_diff,
                run.reply_notes.get(Role.PROGRAMMER, ()), run.workspace)

        reply = await self._turn(run, asked(as_diff), read, _nothing_saved, temperature=sampled)
        auto = self._settings.fix_replies is FixReplies.AUTO
        if as_diff and auto and (any(unapplied) or not reply.files):  # no usable diff: whole files from now on
            run.diffs_apply = False
            await run.emit(Notice(run.request.run_id, WHOLE_FROM_NOW))
            if not reply.files:  # nothing came of the request for a diff: the same fix, asked whole, this round
                reply = await self._turn(run, asked(False), read, _nothing_saved, temperature=sampled)
        await self._note(run, Role.PROGRAMMER, reply.notices)
        return reply.files.without(run.work.user_tests)  # and ``_code_step`` keeps the team's tests the Tester's

    def _as_diffs(self, run: _Run, fixing: bool, files: FileSet) -> bool:
        """Whether the Programmer is asked for diffs of the files it has: always with ``diff``, never with
        ``whole``. With ``auto``, for a fix (of failing tests or a review) of files large enough for a diff to save
        much (``DIFF_WORTH_CHARS``), until the model's answer to a request for a diff was no usable diff: a first
        version is always asked whole, and a model that cannot write diffs pays for one call per run."""
        how = self._settings.fix_replies
        large = sum(map(len, files.values())) >= DIFF_WORTH_CHARS
        return how is FixReplies.DIFF or (how is FixReplies.AUTO and fixing and large and run.diffs_apply)

    async def _review(self, run: _Run, standing: Standing) -> Review:
        """The Optimizer's review of the code, told the latest verdicts as they stood when it was asked
        (``standing``: the tests of this round may be running beside it)."""
        prompt = contexts.for_optimizer(run.request.task, run.work, standing)
        code = run.work.files
        run.standing = run.standing.reviewing(code)
        last = standing.review
        again = bool(last and not last.approved and last.notice)
        review = await self._turn(run, prompt, lambda text: parse_review(text, again),
                                  meant=lambda review: Reviewed(review.approved, review.notes))
        run.reviews = (*run.reviews, (code, review))
        await self._note(run, Role.OPTIMIZER, (review.notice,) if review.notice else ())
        return review

    async def _write_tests(self, run: _Run) -> FileSet:
        """The test files the Tester wrote (never the code or the user's tests)."""
        prompt = contexts.for_tester(run.request.task, run.work, run.standing, self._plan_for(run, Role.TESTER),
                                     run.language, run.reply_notes.get(Role.TESTER, ()), self._runner_note(run.language),
                                     example="" if run.work.tests else self._test_skeleton(run))
        context = contexts.for_reading_files(run.work, run.language, run.request.task, run.plan, self._languages,
                                             writes_tests=True)
        reply = await self._turn(run, prompt, lambda text: parse_files(text, context), _nothing_saved)
        await self._note(run, Role.TESTER, reply.notices)
        return reply.files.without(run.work.user_tests)  # and ``_tests_step`` keeps the code the Programmer's

    def _runner_note(self, language: str) -> str:
        """How a language the config added finds its tests, for the Tester (the template names the built-in
        languages' runners itself)."""
        described = self._languages.get(language)
        return described.tests_are_found() if described and language not in BUILT_IN else ""

    def _job(self, run: _Run, tested: Work) -> TestJob:
        """The test run of ``tested`` outside a repository, with every test."""
        return TestJob(
            language=run.language or self._languages.detect([*tested.files, *tested.tests]),
            files=tested.everything(),
            timeout_s=self._time_left(run),  # the sandbox's own limit applies too, whichever is shorter
            authoritative=tuple(tested.user_tests),
        )

    async def _test(self, run: _Run) -> TestReport:
        self._check_budget(run)
        tested = run.work
        job = self._job(run, tested) if run.workspace is None else await self._repo_job(run, tested.files,
                                                                                       tested.all_tests())
        report = judged(await self._sandbox.run(job), run.already_failing, run.ran_before)
        run.tested = tested  # with its report: a run stopped meanwhile keeps the work it last had
        await self._commit_round(run, report)
        await run.emit(TestReported(run.request.run_id, round=run.round, language=job.language, report=report))
        return report

    async def _commit_round(self, run: _Run, report: TestReport) -> None:
        """In a repository, each round that changed files is one commit on the run's branch."""
        if run.workspace is None:
            return
        try:
            await run.workspace.commit(run.work.everything(),
                                       f"Round {run.round}: {run.request.as_asked.splitlines()[0][:60]} ({report.summary()})")
        except CheckInError as error:
            await run.emit(Notice(run.request.run_id, f"Round {run.round} could not be committed: {error}"))

    async def _triage(self, run: _Run, forced_too: bool) -> Triage:
        """Who acts on failing tests: the decision the model made, as far as the workflow allows it. When only
        one answer is allowed (no test of the team's to fix, no re-plan left) the Manager is asked only if
        ``forced_too``; otherwise the code is what must change, and the failing output says how."""
        can_fix_tests = bool(run.work.tests)
        can_replan = run.spent.replans < self._settings.budget.max_replans
        if not (can_fix_tests or can_replan or forced_too):
            return Triage(Action.FIX_CODE, "")
        prompt = contexts.for_triage(run.request.task, run.work, run.standing, can_fix_tests, can_replan)
        triage = await self._turn(run, prompt, parse_triage,
                                  meant=lambda triage: Decided(triage.action, triage.reason))
        await self._note(run, Role.MANAGER, (triage.notice,) if triage.notice else ())
        return self._allowed(triage, can_fix_tests, can_replan)

    async def _code_lacks(self, run: _Run, lacks: CodeLacks) -> Triage:
        """Tests that could not load because they import what the code lacks: the Programmer writes what the task
        or plan names; anything less certain is the Manager's to decide."""
        who = "the Programmer changes the code" if lacks.certain else "the Manager decides who acts"
        await run.emit(Notice(run.request.run_id, f"The generated tests could not run ({lacks.reason}); {who}."))
        if not lacks.certain:
            return await self._triage(run, forced_too=True)
        return Triage(Action.FIX_CODE, f"The tests could not load: {lacks.reason}. Write the code under the names "
                                       "the task or plan gives.")

    async def _send_back_to_tester(self, run: _Run, why: str, ran: bool = False, passed: bool = True) -> Triage:
        """Tests that could not run (or that ran but cannot fail, or failed but cannot pass) say nothing about the
        code: the Tester fixes them, no triage needed."""
        if ran and passed:
            await run.emit(Notice(run.request.run_id, f"The generated tests passed but cannot fail ({why}); "
                                                      "the Tester fixes them."))
            return Triage(Action.FIX_TESTS, f"The tests cannot fail: {why}")
        if ran:
            await run.emit(Notice(run.request.run_id, f"The generated tests failed but cannot pass ({why}); "
                                                      "the Tester fixes them."))
            return Triage(Action.FIX_TESTS, f"The tests cannot pass: {why}")
        await run.emit(Notice(run.request.run_id, f"The generated tests could not run "
                                                  f"({why.splitlines()[0].rstrip(':')}); the Tester fixes them."))
        example = ""
        if why.startswith("no test ran") and (skeleton := self._test_skeleton(run)):
            example = (f"\n\nA test file the runner finds starts like this (each `...` stands for real arguments or "
                       f"the result the task expects: write those, not the dots):\n\n{skeleton}")
        return Triage(Action.FIX_TESTS, f"The tests could not run: {why}{example}")

    def _test_skeleton(self, run: _Run) -> str:
        """The first lines of a test file for the run's code, in the form its runner finds ("" when none)."""
        known, files = self._languages, run.work.files
        module = next((p for p in files if known.of_path(p) == run.language and not known.looks_like_test(p)), "")
        mentioned = file_names.mentioned_files(f"{run.request.task}\n{run.plan}", known)
        return file_names.test_skeleton(run.language, module, files.get(module, ""), mentioned, known)

    @staticmethod
    def _allowed(triage: Triage, can_fix_tests: bool, can_replan: bool) -> Triage:
        """The decision, or fix_code where the decision is not allowed (user tests are authoritative)."""
        if (triage.action is Action.FIX_TESTS and not can_fix_tests) or (
            triage.action is Action.REPLAN and not can_replan
        ):
            return replace(triage, action=Action.FIX_CODE)
        return triage

    async def _check_in(self, run: _Run, status: RunStatus) -> CheckInResult | None:
        """Publish the outcome; where it went, or None when publishing failed or check-in is off. Owed once the outcome is
        known, so no budget stops it, and a Check-In agent that fails costs only its README (the
        publisher then writes a plain one)."""
        if not self._settings.check_in:
            return None
        run.unbudgeted = True
        prompt = contexts.for_check_in(run.request.task, run.language, run.work, status, run.standing.report)
        readme = ""
        try:
            readme = await self._turn(run, prompt, parse_readme, meant=ReadmeWritten)
        except RunFailed as error:
            await run.emit(Notice(run.request.run_id, f"The Check-In agent failed ({error}); publishing with a plain README."))
        publication = Publication(
            run_id=run.request.run_id, conversation_key=run.request.conversation_key,
            task=run.request.as_asked, status=status, files=run.work.everything(),
            readme=readme, report=run.standing.report, earlier_tasks=run.request.prior.tasks if run.request.prior else (),
            plan=run.plan, review=run.standing.review.notes if run.standing.review else "",
        )
        try:
            result = await self._publisher.publish(publication)
        except CheckInError as error:
            await run.emit(Notice(run.request.run_id, f"Check-in failed: {error} The files are kept with the run."))
            return None
        await run.emit(CheckedIn(run.request.run_id, result=result))
        return result

    async def _finish_unproven(self, run: _Run, why: str) -> RunFinished:
        """Budget ran out: the best attempt is the best version tested (``agents.candidates``); publish it and say
        plainly why. Tests that passed while the review asked for changes, or before it answered, make no pass, and
        no failure either: stopped; so do tests that failed but could not have passed for any code."""
        if run.standing.report is None or run.tested is None:
            return self._finished(run, RunStatus.STOPPED, f"{why}; no tested code yet")
        best = await self._keep_best(run)
        report, cannot_fail, review = run.standing.report, run.standing.cannot_fail, run.standing.review
        published = self._settings.publish_failed and self._settings.check_in
        version = "" if best is None or best is run.tried[-1] else (
            f"the version {'published' if published else 'kept'} (round {best.round})")
        status, result = RunStatus.FAILED, f"the test run of {version}: {report.summary()}" if version else (
            f"the last test run: {report.summary()}")
        tests = f"the tests of {version}" if version else "the tests"
        if report.ok and cannot_fail:
            status, result = RunStatus.STOPPED, f"{tests} passed but cannot fail ({cannot_fail})"
        elif run.standing.cannot_pass:  # the failure is the tests', whatever the code does: the team's no verdict
            judged = "; the task's own tests passed" if self._users_judge(run) else ", so the code was not judged"
            status, result = RunStatus.STOPPED, f"{tests} failed but cannot pass ({run.standing.cannot_pass}){judged}"
        elif report.ok:
            status, result = RunStatus.STOPPED, f"{tests} passed ({report.summary()})"
            if self._settings.review and review is None:
                result += " but the review did not finish"
            elif review is not None and not review.approved:
                result += " but the review still asks for changes"
        if self._settings.publish_failed:
            run.checkin = await self._check_in(run, status)
        return self._finished(run, status, f"{why}; {result}")

    async def _finish_broken(self, run: _Run, reason: str) -> RunFinished:
        """An error ended the run: it ends with the best version tested, saying so when that is not the files as they
        stood (later files, untested or worse)."""
        standing = run.work
        best = await self._keep_best(run)
        if best is not None and best.work != standing:
            reason = candidates.handed_back(reason, best.round, best.report)
        return self._finished(run, RunStatus.ERROR, reason)

    async def _keep_best(self, run: _Run) -> Candidate | None:
        """The run's files become the best version tested, and what was said of that version the run's standing
        (said in a notice when it is not the last version tested). In a repository, whose rounds are commits on the
        run's branch, the last version tested. None: no candidate (nothing tested, or a repository)."""
        best = self._best(run)  # never in a repository: its versions are not candidates (``_users_failure``)
        if best is None:
            if run.tested is not None:
                run.work = run.tested  # later, untested edits would not match the report
            run.standing = replace(run.standing, review=self._review_of(run, run.work.files))
            return None
        run.work = best.work
        report = best.report
        tests, code = best.work.tests.as_dict(), list(best.work.files)
        cannot_fail = checkless_tests(tests, self._languages, code) if report.ok and tests else ""
        # Tests of the team's that cannot pass (or of which none ran) say nothing of code the user's own tests failed:
        # those judged it.
        cannot_pass = "" if report.ok or best.users_misses else (
            cannot_pass_tests(tests, self._languages, code) or teams_ran_none(report))
        run.standing = replace(run.standing.with_report(report, cannot_fail, cannot_pass),
                               review=self._review_of(run, best.work.files))
        if best is not run.tried[-1]:
            notice = (candidates.BEST_NOTICE if not self._users_judge(run) else candidates.CLOSEST_NOTICE
                      if best.users_misses else candidates.KEPT_NOTICE)
            await run.emit(Notice(run.request.run_id, notice.format(summary=report.summary(), round=best.round)))
        return best

    @staticmethod
    def _review_of(run: _Run, code: FileSet) -> Review | None:
        """The latest review of exactly this code (None: none was given, or it did not finish)."""
        return next((review for reviewed, review in reversed(run.reviews) if reviewed == code), None)

    # -- one agent's turn ---------------------------------------------------------------------

    async def _turn(self, run: _Run, prompt: PromptContext, parse: Callable[[str], T],
                    unreadable: Callable[[ReplyFormatError], T] | None = None,
                    meant: Callable[[T], TurnMeaning | None] = lambda _: None, temperature: float | None = None) -> T:
        """Stream one reply and return what ``parse`` reads in it (its ``TurnFinished`` carries what that
        ``meant``, so nothing downstream reads the reply again). One more try is allowed: after an
        unreadable reply, with a reminder showing the model its own reply in the expected form; after a
        prompt too long for the model, an empty reply or a cut one, with the prompt trimmed (a reply of files cut
        at its length limit after whole files is used as it is). Then the run fails, except that a reply still
        unreadable (or cut again before any whole file) becomes ``unreadable(error)`` where the workflow can go
        on without it (files: the tests then show what is missing). ``temperature``: this call's own, when given."""
        role = prompt.role
        messages = self._prompts.render(prompt)
        for attempt in (1, 2):
            last = attempt == 2
            self._check_budget(run)
            await run.emit(TurnStarted(run.request.run_id, agent=role, round=run.round,
                                       model=self._model.model_name(role), prompt_tokens=estimated_tokens(messages)))
            started = self._clock()
            text, usage, trouble = await self._reply(run, role, messages, temperature)
            run.take(usage)
            value, failure = self._read(text, trouble, parse)
            if isinstance(trouble, ReplyCut) and not last and not _whole_files_before_cut(value, failure):
                value, failure = None, None  # nothing whole arrived: asked again, shorter
            read = failure is None and value is not None
            await run.emit(TurnFinished(
                run.request.run_id, agent=role, round=run.round, text=text, usage=usage,
                files=value.files if read and isinstance(value, FileReply) else FileSet(),
                duration_s=self._clock() - started, model=self._model.model_name(role),
                meaning=meant(value) if read else None,  # type: ignore[arg-type]  # read: parsed
            ))
            usable_cut = isinstance(trouble, ReplyCut) and (value is not None or (last and unreadable is not None))
            if trouble is not None and not usable_cut:
                if isinstance(trouble, ReplyDropped):  # nothing wrong with the prompt: the same again
                    if last:
                        raise ModelError(f"{trouble} Asking again did not help.")
                    await run.emit(Notice(run.request.run_id, f"{trouble} Asking again."))
                    continue
                if last:
                    raise ModelError(f"{trouble} Trimming the prompt and trying once more did not help.")
                await run.emit(Notice(run.request.run_id, f"{trouble} Trimming the prompt and trying once more."))
                messages = self._shorter(run, prompt, messages, trouble)
                continue
            if trouble is not None:
                await run.emit(Notice(run.request.run_id, f"{trouble} The team goes on with what arrived."))
            if failure is None:
                return value  # type: ignore[return-value]  # parsed whenever there was no failure
            if last and unreadable is not None:
                await run.emit(Notice(run.request.run_id, f"The {role}'s reply could not be read again ({failure}); "
                                                          "the team goes on without it and the tests will show it."))
                return unreadable(failure)
            if last:
                raise AgentReplyError(f"The {role} replied twice in a form the team cannot read ({failure}).")
            await run.emit(Notice(run.request.run_id, f"The {role}'s reply could not be read ({failure}); asking again."))
            messages = [*messages, Message("assistant", text), Message("user", _reminder(failure))]
        raise AssertionError("unreachable")

    async def _reply(self, run: _Run, role: Role, messages: list[Message],
                     temperature: float | None = None) -> tuple[str, Usage, ModelError | None]:
        """The model's reply streamed to the run's sink: its text, its usage, and what went wrong with it
        when it was no whole reply (too long a prompt, nothing at all, cut short). The token budget is
        checked as tokens arrive, so a reply that would spend more than is left is stopped."""
        parts: list[str] = []
        written = 0  # characters so far, counted as they come (a sum over the parts at every piece grew as their square)
        usage = Usage()
        prompt_tokens = estimated_tokens(messages)
        try:
            async with aclosing(self._model.stream(role, messages, temperature)) as stream:
                while (piece := await self._next_piece(run, role, stream)) is not None:
                    if isinstance(piece, Usage):
                        usage = piece
                        continue
                    parts.append(piece)
                    written += len(piece)
                    run.answered.set()
                    await run.emit(TextDelta(run.request.run_id, agent=role, text=piece))
                    self._check_tokens(run, role, prompt_tokens, written)
        except (PromptTooLong, EmptyReply) as trouble:
            return "".join(parts), Usage(), trouble
        except (ReplyCut, ReplyDropped) as cut:
            return "".join(parts), cut.usage, cut
        except BudgetExhausted:
            spent = Usage(prompt_tokens, written // CHARS_PER_TOKEN, estimated=True)
            run.take(spent)
            await run.emit(TurnFinished(run.request.run_id, agent=role, round=run.round, text="".join(parts),
                                        usage=spent, model=self._model.model_name(role)))
            raise
        except asyncio.CancelledError:  # stopped beside a step that failed, or with the run: what it spent counts
            run.take(Usage(prompt_tokens, written // CHARS_PER_TOKEN, estimated=True))
            raise
        return "".join(parts), usage, None

    @staticmethod
    def _read(text: str, trouble: ModelError | None,
              parse: Callable[[str], T]) -> tuple[T | None, ReplyFormatError | None]:
        """What ``parse`` reads in a reply that is worth reading: a whole one, or a cut one (without the code block
        the cut left open)."""
        if trouble is not None and not isinstance(trouble, ReplyCut):
            return None, None
        try:
            return parse(without_open_block(text) if trouble else text), None
        except ReplyFormatError as error:
            return None, error

    def _shorter(self, run: _Run, prompt: PromptContext, messages: list[Message], trouble: ModelError) -> list[Message]:
        """The prompt again, trimmed to about half of what the model holds (or half its size when unknown)."""
        size = sum(len(m.content) for m in messages)
        window = getattr(trouble, "context", None)
        budget = int(window * PROMPT_CHARS_PER_TOKEN * 0.5) if window else size // 2
        shorter = self._prompts.render(trimmed(prompt, run.written, budget))
        if isinstance(trouble, ReplyCut):
            system, user = shorter
            shorter = [system, Message("user", user.content + "\n\n" + CUT_NOTE)]
        return shorter

    async def _note(self, run: _Run, role: Role, notices: tuple[str, ...]) -> None:
        """Tell the user how a reply was read, and keep it for the role's next prompt."""
        run.reply_notes[role] = notices
        for notice in notices:
            await run.emit(Notice(run.request.run_id, f"{role.capitalize()}: {notice}"))

    # -- budgets and bookkeeping --------------------------------------------------------------

    def _start(self, request: RunRequest, emit: Emit) -> _Run:
        run = _Run(request=request, started=self._clock(), sink=emit, workspace=request.workspace)
        prior = request.prior
        # A follow-up starts from what the conversation left; its Programmer and Tester both write (``Due()``):
        # a follow-up changes what the code does, so its tests change too.
        files, user_tests = (prior.files, prior.user_tests) if prior else (FileSet(), FileSet())
        if prior:
            run.plan, run.language = prior.plan, prior.language
        # The thread's files first, so a file the person attached to the request itself wins over them.
        for attachment in [*(request.thread.files if request.thread else ()), *request.attachments]:
            given = {attachment.name: attachment.content}
            if self._languages.looks_like_test(attachment.name):
                user_tests = user_tests.merged(given)
            else:
                files = files.merged(given)
        if self._settings.task_examples and not prior:
            user_tests = example_tests(files).merged(user_tests)
        run.work = Work(files, prior.tests if prior else FileSet(), user_tests)
        if not prior and _stubs_given(files):
            run.given = files
        run.language = self._languages.detect([*files, *user_tests], run.language)
        return run

    async def _next_piece(self, run: _Run, role: Role, stream: AsyncIterator[str | Usage]) -> str | Usage | None:
        """The stream's next piece within the time budget, telling the run's sink while the model is
        silent. The deadline covers only this wait: a timeout scope around a ``yield`` would also cut
        whatever the consumer does with the event."""
        loop = asyncio.get_running_loop()
        began = loop.time()
        left = self._time_left(run)
        deadline = None if left is None else began + left
        notice_at = began + self._settings.wait_notice_s
        pending = asyncio.ensure_future(anext(stream))
        try:
            while True:
                until = notice_at if deadline is None else min(notice_at, deadline)
                done, _ = await asyncio.wait({pending}, timeout=max(0.0, until - loop.time()))
                if done:
                    return pending.result()
                now = loop.time()
                if deadline is not None and now >= deadline:
                    raise BudgetExhausted(f"the time budget ran out during the {role}'s turn")
                if now >= notice_at:
                    await run.emit(Waiting(run.request.run_id, agent=role, seconds=round(now - began)))
                    notice_at = now + self._settings.wait_repeat_s
        except StopAsyncIteration:
            return None
        finally:
            if not pending.done():
                pending.cancel()
                await asyncio.wait({pending})
            if not pending.cancelled():  # a piece or the stream's end that came as this wait was left (a stop, say)
                pending.exception()  # is taken, not logged later as "never retrieved"

    def _check_tokens(self, run: _Run, role: Role, prompt_tokens: int, reply_chars: int) -> None:
        """Stop a reply as soon as the run's tokens, this reply's included, reach the budget."""
        budget = self._settings.budget.max_tokens
        spent = run.spent.usage.total_tokens + prompt_tokens + reply_chars // CHARS_PER_TOKEN
        if not run.unbudgeted and spent >= budget:
            raise BudgetExhausted(f"the token budget ran out during the {role}'s reply (about {spent:,} of {budget:,})")

    def _time_left(self, run: _Run) -> float | None:
        if run.unbudgeted:
            return None
        return max(0.0, self._settings.budget.max_wall_s - (self._clock() - run.started))

    def _next_round(self, run: _Run) -> None:
        self._ensure_round_left(run)
        run.spent = run.spent.next_round()

    def _ensure_round_left(self, run: _Run) -> None:
        if run.round >= self._settings.budget.max_rounds:
            raise BudgetExhausted(f"the team used all {self._settings.budget.max_rounds} rounds")

    def _check_budget(self, run: _Run) -> None:
        budget = self._settings.budget
        if run.unbudgeted:
            return
        used = run.spent.usage.total_tokens
        if used >= budget.max_tokens:
            raise BudgetExhausted(f"the token budget ran out ({used:,} of {budget.max_tokens:,})")
        if self._clock() - run.started >= budget.max_wall_s:
            raise BudgetExhausted(f"the time budget ran out ({budget.max_wall_s:.0f}s)")

    @staticmethod
    def _stamped(run: _Run, written: FileSet) -> FileSet:
        """``written``, noting that these files are now the newest (trimming keeps the newest whole)."""
        newest = max(run.written.values(), default=0)
        for path in written:
            newest += 1
            run.written[path] = newest
        return written

    def _saved(self, run: _Run) -> WorkSaved:
        work = run.work
        return WorkSaved(run.request.run_id, files=work.files, tests=work.all_tests(), user_tests=work.user_tests)

    def _finished(self, run: _Run, status: RunStatus, reason: str) -> RunFinished:
        return RunFinished(
            run.request.run_id, status=status, reason=reason, files=run.work.files, tests=run.work.all_tests(),
            user_tests=run.work.user_tests, report=run.standing.report, usage=run.spent.usage, checkin=run.checkin,
            language=run.language, plan=run.plan,
        )


def _existing_tests(run: _Run) -> frozenset[str]:
    """A repository's tests: the files named as tests, and those its tests ran from before any change."""
    assert run.workspace is not None
    return run.workspace.existing_tests() | run.tested_before


def _stubs_given(files: FileSet) -> bool:
    """Whether the given files hold Python functions still to be written (a signature and a docstring)."""
    return any(python_files.stubs(code) for path, code in files.items() if path.endswith(".py"))


def _whole_files_before_cut(value: object, failure: ReplyFormatError | None) -> bool:
    """Whether a reply cut at its length limit brought whole files before the cut (those are used as they are)."""
    return failure is None and isinstance(value, FileReply) and bool(value.files)


def _nothing_saved(failure: ReplyFormatError) -> FileReply:
    return FileReply(FileSet(), (f"Nothing was saved from your last reply: {failure}.",))


def _reminder(failure: ReplyFormatError) -> str:
    """What the model is told after an unreadable reply: the problem, and its own reply put right."""
    if not failure.example:
        return f"Your reply could not be used: {failure}. Reply again in the format the instructions describe."
    return (
        f"Your reply could not be used: {failure}. This is how the team reads a file: the language and the path "
        f"on the opening fence line, then the whole file. Your code, written that way, starts like this:\n\n"
        f"{failure.example}\n\nReply again with every file written like that, each one complete."
    )
