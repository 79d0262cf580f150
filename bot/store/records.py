"""What the store keeps, as the rest of the bot reads it back: runs, conversations, turns, and the runs a
stopped or crashed process left unfinished. Plain values, the same for every store backend."""

from __future__ import annotations

from dataclasses import dataclass, field

from agents.types import CheckInResult, FileSet, TestReport, ThreadContext, Usage

INTERRUPTED_REASON = "the bot stopped while this run was under way"


@dataclass(frozen=True)
class RunSummary:
    id: str
    task: str
    status: str
    reason: str
    created_at: float
    finished_at: float | None
    usage: Usage
    cost_usd: float
    platform: str
    thread_key: str
    checkin: CheckInResult | None
    user_id: str = ""  # who asked for the run, in the platform's ids
    attachments: tuple[str, ...] = ()  # the names of the files given with the task
    repository: str = ""  # where the run worked, if in a repository: its name, branch, pull request, head commit
    branch: str = ""
    pr_url: str = ""
    head_commit: str = ""
    context: str = ""  # what was read of the thread the request was made in ("read 14 earlier messages, ...")
    owner: str = ""  # the process that runs or ran it (``bot.store.owners``)


@dataclass(frozen=True)
class ConversationSummary:
    """One conversation as a list of them shows it: its first task, and how its latest run stands."""

    thread_key: str
    title: str  # the first run's task
    status: str  # the latest run's
    created_at: float
    updated_at: float  # when the latest run started
    runs: int


@dataclass(frozen=True)
class Interrupted:
    """A run a stopped or crashed process left unfinished, whose thread has not been told yet."""

    id: str
    thread_key: str
    user_id: str
    task: str
    status_message: str
    usage: Usage


@dataclass(frozen=True)
class TurnRecord:
    agent: str
    round: int
    text: str
    files: FileSet
    started_at: float
    finished_at: float
    model: str
    usage: Usage


@dataclass(frozen=True)
class RunRecord:
    summary: RunSummary
    turns: list[TurnRecord]
    notes: list[tuple[str, str]]
    files: FileSet
    tests: FileSet
    report: TestReport | None
    plan: str
    language: str
    user_tests: FileSet = field(default_factory=FileSet)  # which of ``tests`` the user supplied
    thread: ThreadContext | None = None  # what was read of the chat thread the request was made in


def conversation_key(platform: str, thread_key: str) -> str:
    return f"{platform}:{thread_key}"
