"""One problem attempted in one mode, through the code paths a user's run takes.

``team`` modes run the Manager (the same prompts, model client, sandbox and budgets as a user's run,
driven by the runner with the same cost stamping), with check-in off and a publisher that refuses.
``single`` is one call to the Programmer with its own prompt template, read by the same reply parser.

What the endpoint or the sandbox did wrong is not the model's score: when a run ends in error because
the endpoint failed (after its retries) or the sandbox could not run the tests, the attempt raises
``EvalHalted`` instead of counting as failed, and the eval stops with that sentence (``--resume``
continues once it is fixed). A prompt too long for the model, an empty or cut reply and an unreadable
one are the model's own, and count.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from contextlib import aclosing
from dataclasses import dataclass

from agents.errors import (
    CheckInError,
    CodegenError,
    EmptyReply,
    ModelError,
    PromptTooLong,
    ReplyCut,
    SandboxError,
)
from agents.events import Event, TurnFinished
from agents.file_replies import without_open_block
from agents.language import Languages
from agents.manager import Manager, TeamSettings
from agents.prompt_contexts import for_programmer, for_reading_files
from agents.prompts import PromptBook
from agents.protocols import ChatModel, Sandbox
from agents.replies import ReplyFormatError, parse_files
from agents.run_request import RunRequest
from agents.run_state import Work
from agents.types import Attachment, CheckInResult, FileSet, Message, Publication, Role, RunStatus, TestJob, TestReport, Usage
from bot.config.sections import Price
from bot.eval.modes import Mode, Workflow
from bot.eval.problems import Problem
from bot.model.watched import WatchedModel
from bot.runs.runner import drive
from bot.runs.usage import RunUsage, priced

MODELS_OWN = (PromptTooLong, EmptyReply, ReplyCut)  # model errors that are the model's answer, not an outage
KILLED = 137  # a test run that ended by SIGKILL: its memory limit, or a busy host; scoring tries it once more
NO_PLAN = "There is no separate plan: write the code straight from the task."  # when no file holds it either


class EvalHalted(CodegenError):
    """The eval cannot measure anything right now (the endpoint or the sandbox failed); it stops, resumable."""


@dataclass(frozen=True)
class Parts:
    """What every attempt shares: the real model client and sandbox, the prompts, the config's team settings
    and prices."""

    model: ChatModel
    sandbox: Sandbox
    prompts: PromptBook
    settings: TeamSettings
    prices: Mapping[str, Price]
    clock: Callable[[], float] = time.monotonic


@dataclass(frozen=True)
class Attempt:
    files: FileSet  # the final code (test files left out: the hidden tests decide)
    status: str
    reason: str
    usage: Usage
    model_calls: int
    wall_s: float


@dataclass(frozen=True)
class Score:
    passed: bool
    summary: str
    output: str  # the end of the output, when the tests did not pass
    duration_s: float


async def attempt(problem: Problem, mode: Mode, parts: Parts, run_id: str) -> Attempt:
    if mode.workflow is Workflow.SINGLE:
        return await _single(problem, parts)
    return await _team(problem, mode, parts, run_id)


async def score(problem: Problem, files: FileSet, sandbox: Sandbox,
                clock: Callable[[], float] = time.monotonic) -> Score:
    """The code against the problem's hidden tests, in the sandbox, as tests nothing the code brings can
    reconfigure (``TestJob.authoritative``). A run killed from outside is run once more, so a test process
    a busy host killed does not count against the model; code that is killed again fails."""
    if not files:
        return Score(False, "no code to test", "", 0.0)
    job = TestJob(problem.language, files.merged(problem.hidden_tests), authoritative=tuple(problem.hidden_tests))
    started = clock()
    try:
        report = await sandbox.run(job)
        if report.exit_code == KILLED:  # once more: the same code killed again (its memory) is a failure
            report = await sandbox.run(job)
    except SandboxError as error:
        raise EvalHalted(f"the sandbox failed while scoring {problem.id} ({error})") from None
    return Score(report.ok, report.summary(), "" if report.ok else report.output(2000), clock() - started)


def code_of(files: FileSet, languages: Languages) -> FileSet:
    """The files a run produced, without test files: the team's own tests are not what is scored."""
    return FileSet({path: text for path, text in files.items() if not languages.looks_like_test(path)})


# -- team -----------------------------------------------------------------------------------------


async def _team(problem: Problem, mode: Mode, parts: Parts, run_id: str) -> Attempt:
    endpoint, sandbox = _Outage(), _WatchedSandbox(parts.sandbox)
    model = WatchedModel(parts.model, failed=endpoint.failed)
    manager = Manager(model, sandbox, _NothingPublished(), parts.prompts, mode.team_settings(parts.settings),
                      clock=parts.clock)
    starter = tuple(Attachment(path, text) for path, text in problem.starter.items())
    request = RunRequest(task=problem.task, run_id=run_id, attachments=starter, conversation_key=f"eval:{run_id}")
    calls = 0

    async def count(event: Event) -> None:
        nonlocal calls
        calls += isinstance(event, TurnFinished)

    started = parts.clock()
    finished = await drive(run_id, manager.run(request), [count], RunUsage(parts.prices))
    wall = parts.clock() - started
    outage = endpoint.failure or sandbox.failure
    if finished.status is RunStatus.ERROR and outage is not None:
        raise EvalHalted(f"{problem.id} ({mode.name}) could not be attempted: {outage}")
    return Attempt(code_of(finished.files, parts.settings.languages), str(finished.status), finished.reason,
                   finished.usage, calls, wall)


class _Outage:
    """The model endpoint failing, as opposed to answering badly: noted while the model is watched."""

    def __init__(self) -> None:
        self.failure: ModelError | None = None

    def failed(self, error: ModelError) -> None:
        if not isinstance(error, MODELS_OWN):
            self.failure = error


class _WatchedSandbox:
    """The sandbox, noting when it could not run the team's tests at all."""

    def __init__(self, sandbox: Sandbox) -> None:
        self._sandbox = sandbox
        self.failure: SandboxError | None = None

    async def run(self, job: TestJob) -> TestReport:
        try:
            return await self._sandbox.run(job)
        except SandboxError as error:
            self.failure = error
            raise


class _NothingPublished:
    """Eval runs publish nothing (check-in is off); should the Manager ever try, it is refused."""

    async def publish(self, publication: Publication) -> CheckInResult:
        raise CheckInError("nothing is published during an eval.")


# -- single ---------------------------------------------------------------------------------------


async def _single(problem: Problem, parts: Parts) -> Attempt:
    """One Programmer call with the task (and the starter files); its code is what is scored."""
    role = Role.PROGRAMMER
    known = parts.settings.languages
    code = code_of(problem.starter, known)
    tests = problem.starter.without(code)  # starter files named like tests: visible to the Programmer
    work = Work(files=code, user_tests=tests)
    plan = "" if code else NO_PLAN  # a file holding the functions to write is the plan, as for the team
    messages = parts.prompts.render(for_programmer(problem.task, work, plan=plan, language=problem.language))
    context = for_reading_files(work, problem.language, problem.task, plan, known)
    started = parts.clock()
    try:
        text, usage, trouble = await _reply(parts.model, role, messages)
    except ModelError as error:
        raise EvalHalted(f"{problem.id} (single) could not be attempted: {error}") from None
    wall = parts.clock() - started
    usage = priced(usage, parts.prices.get(parts.model.model_name(role)))
    if isinstance(trouble, (PromptTooLong, EmptyReply)):
        return Attempt(code, str(RunStatus.ERROR), str(trouble), usage, 1, wall)
    try:
        reply = parse_files(without_open_block(text) if trouble else text, context)
    except ReplyFormatError as error:
        return Attempt(code, "unreadable", f"the reply could not be read ({error})", usage, 1, wall)
    files = code.merged(code_of(reply.files.without(tests), known))
    return Attempt(files, "answered", str(trouble) if trouble else "", usage, 1, wall)


async def _reply(model: ChatModel, role: str, messages: list[Message]) -> tuple[str, Usage, ModelError | None]:
    """The whole reply and its usage; a prompt too long, an empty or a cut reply is returned as the trouble it
    is. Any other ``ModelError`` (an outage) is raised."""
    parts: list[str] = []
    usage = Usage()
    try:
        async with aclosing(model.stream(role, messages)) as stream:
            async for piece in stream:
                if isinstance(piece, Usage):
                    usage = piece
                else:
                    parts.append(piece)
    except ReplyCut as cut:
        return "".join(parts), cut.usage, cut
    except (PromptTooLong, EmptyReply) as trouble:
        return "".join(parts), Usage(), trouble
    return "".join(parts), usage, None
