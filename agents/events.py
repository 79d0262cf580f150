"""A run is an async stream of these events. Adapters render them; the store records them."""

from __future__ import annotations

from dataclasses import dataclass, field

from agents.replies import Action
from agents.types import CheckInResult, FileSet, RunStatus, TestReport, Usage


@dataclass(frozen=True)
class Event:
    run_id: str


@dataclass(frozen=True)
class RunStarted(Event):
    task: str
    follow_up: int = 0  # how many requests came before this one in its conversation (0: the first)
    context: str = ""  # what was read of the thread it was asked in ("read 14 earlier messages, 2 files")


@dataclass(frozen=True)
class TurnStarted(Event):
    agent: str
    round: int
    model: str = ""
    prompt_tokens: int = 0  # the prompt's size, estimated from its characters: what a turn stopped midway still cost


@dataclass(frozen=True)
class TextDelta(Event):
    agent: str
    text: str


@dataclass(frozen=True)
class Waiting(Event):
    """The model has sent nothing for a while during a turn (a busy or slow server): how long, in seconds.
    Repeats while the silence lasts; renderers show it so a person knows the bot is waiting, not stuck."""

    agent: str
    seconds: float


# What a finished turn decided, as the workflow read it: display code shows these and never reads a reply again.


@dataclass(frozen=True)
class Planned:
    """The Planner's plan: the language it named ('' when none) and the plan without that line, for people."""

    language: str
    prose: str


@dataclass(frozen=True)
class Reviewed:
    """The Optimizer's verdict; ``notes`` are its review, the changes it asks for when it does not approve."""

    approved: bool
    notes: str


@dataclass(frozen=True)
class Decided:
    """The Manager's triage of failing tests: who acts on them, and why."""

    action: Action
    reason: str


@dataclass(frozen=True)
class ReadmeWritten:
    """The Check-In's README, as the publisher got it."""

    readme: str


TurnMeaning = Planned | Reviewed | Decided | ReadmeWritten


@dataclass(frozen=True)
class TurnFinished(Event):
    agent: str
    round: int
    text: str
    files: FileSet = field(default_factory=FileSet)  # the files the turn wrote, as they were saved
    usage: Usage = field(default_factory=Usage)
    duration_s: float = 0.0
    model: str = ""
    meaning: TurnMeaning | None = None  # None: the reply could not be read (or was stopped), shown as written
    cut_short: bool = False  # the run's end (a Stop, a shutdown, another step failing) cut the reply short


@dataclass(frozen=True)
class TestReported(Event):
    __test__ = False

    round: int
    language: str
    report: TestReport


@dataclass(frozen=True)
class WorkSaved(Event):
    """The files as they stand after a step that changed them, so a run that is stopped or dies
    mid-way still leaves its latest work for a follow-up. Renderers may ignore it."""

    files: FileSet
    tests: FileSet  # every test: the team's and the user's
    user_tests: FileSet


@dataclass(frozen=True)
class BestVersion(Event):
    """The version a run that ends now would leave: the best the tests judged so far (``agents.candidates``), with
    its test run and the round it was tested in. Told whenever that changes, so a run stopped from outside (which
    the team never sees end) still ends with it rather than with later, untested or worse files."""

    files: FileSet
    tests: FileSet  # every test that judged it: the team's and the user's
    user_tests: FileSet
    report: TestReport
    round: int


@dataclass(frozen=True)
class CheckedIn(Event):
    result: CheckInResult


@dataclass(frozen=True)
class CiChecked(Event):
    """The CI of the commit a run pushed, as its pull request's checks say: ``state`` is "pending", "passed",
    "failed" or "ended" (followed no further: no CI, or too long), with a short ``detail`` and a ``url``.
    It comes after the run's ``RunFinished``: CI runs once the work is pushed."""

    state: str
    detail: str = ""
    url: str = ""


@dataclass(frozen=True)
class Notice(Event):
    """Something worth telling the user that is no agent's turn (queued, retrying, check-in fallback)."""

    text: str


@dataclass(frozen=True)
class RunFinished(Event):
    status: RunStatus
    reason: str
    files: FileSet = field(default_factory=FileSet)
    tests: FileSet = field(default_factory=FileSet)  # every test that ran: the team's and the user's
    user_tests: FileSet = field(default_factory=FileSet)  # which of them the user supplied
    report: TestReport | None = None
    usage: Usage = field(default_factory=Usage)
    checkin: CheckInResult | None = None
    language: str = ""
    plan: str = ""
