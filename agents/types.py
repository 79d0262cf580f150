"""Value objects that flow between the roles, the Manager and the outside world."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

MessageRole = Literal["system", "user", "assistant"]


class Role(StrEnum):
    """The agents of the team, in the order the workflow meets them."""

    MANAGER = "manager"
    PLANNER = "planner"
    PROGRAMMER = "programmer"
    OPTIMIZER = "optimizer"
    TESTER = "tester"
    CHECKIN = "checkin"


class RunStatus(StrEnum):
    """How a run ended. ``running`` only while it is under way."""

    RUNNING = "running"
    PASSED = "passed"
    FAILED = "failed"
    STOPPED = "stopped"
    ERROR = "error"
    INTERRUPTED = "interrupted"


@dataclass(frozen=True)
class Message:
    role: MessageRole
    content: str


@dataclass(frozen=True)
class Usage:
    """Tokens a model call (or a run) consumed, and what they cost in US dollars once priced."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0  # 0 until priced (``bot.runs.usage``), or when no price is configured
    estimated: bool = False  # counted from characters: the server reported no usage (for any part of a sum)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cost_usd + other.cost_usd,
            (self.estimated and self.total_tokens > 0) or (other.estimated and other.total_tokens > 0),
        )

    def tokens_text(self) -> str:
        """"1,200 in / 340 out", or "~1,200 in / ~340 out (estimated)" when a server gave no counts."""
        mark = "~" if self.estimated else ""
        text = f"{mark}{self.prompt_tokens:,} in / {mark}{self.completion_tokens:,} out"
        return f"{text} (estimated)" if self.estimated else text


@dataclass(frozen=True)
class SourceFile:
    path: str
    content: str


class FileSet(Mapping[str, str]):
    """An immutable, ordered set of files keyed by relative path."""

    def __init__(self, files: Iterable[SourceFile] | Mapping[str, str] = ()) -> None:
        items = files.items() if isinstance(files, Mapping) else ((f.path, f.content) for f in files)
        self._files: dict[str, str] = dict(items)

    def __getitem__(self, path: str) -> str:
        return self._files[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)

    def __repr__(self) -> str:
        return f"FileSet({sorted(self._files)})"

    def merged(self, newer: Mapping[str, str]) -> FileSet:
        """These files with ``newer`` laid on top (same path: newer wins)."""
        return FileSet({**self._files, **newer})

    def without(self, paths: Iterable[str]) -> FileSet:
        drop = set(paths)
        return FileSet({p: c for p, c in self._files.items() if p not in drop})

    def as_dict(self) -> dict[str, str]:
        return dict(self._files)


class TestStatus(StrEnum):
    __test__ = False  # not a pytest class

    PASSED = "passed"
    FAILED = "failed"
    TIMEOUT = "timeout"
    ERROR = "error"


@dataclass(frozen=True)
class TestReport:
    """What one sandboxed test run saw."""

    __test__ = False

    status: TestStatus
    exit_code: int | None = None
    duration_s: float = 0.0
    passed: int | None = None
    failed: int | None = None
    stdout: str = ""
    stderr: str = ""
    truncated: bool = False
    already_failing: tuple[str, ...] = ()  # a repository's tests that failed before the team changed anything
    ran: tuple[str, ...] = ()  # every test the runner's own report lists, where it keeps one (JUnit): not stored
    skipped: int | None = None  # tests the runner reported as not run (skipped, xfail, todo), where it says

    @property
    def ok(self) -> bool:
        return self.status is TestStatus.PASSED

    def summary(self) -> str:
        """One line a person reads: "12 passed, 1 failed" or the status."""
        if self.already_failing:
            return f"{self._summary()} ({len(self.already_failing)} already failing before the change)"
        return self._summary()

    def _summary(self) -> str:
        if self.passed is not None or self.failed is not None:
            counts = f"{self.passed or 0} passed, {self.failed or 0} failed" + (
                f", {self.skipped} skipped" if self.skipped else "")
            return counts if self.status in (TestStatus.PASSED, TestStatus.FAILED) else f"{self.status}: {counts}"
        return {
            TestStatus.PASSED: "tests passed",
            TestStatus.FAILED: f"tests failed (exit code {self.exit_code})",
            TestStatus.TIMEOUT: f"tests timed out after {self.duration_s:.0f}s",
            TestStatus.ERROR: "the test run could not start",
        }[self.status]

    def output(self, limit: int = 4000) -> str:
        """Combined output, the tail kept when long (failures are usually at the end)."""
        text = self.stdout + (("\n" + self.stderr) if self.stderr else "")
        return text if len(text) <= limit else "[... earlier output cut ...]\n" + text[-limit:]


@dataclass(frozen=True)
class TestJob:
    """Files to test and the language whose sandbox runs them.

    ``authoritative`` names the user's test files among ``files``: the sandbox runs them so that no file
    the team wrote can reconfigure them, and passes the job only when each of them really passed.
    """

    __test__ = False

    language: str
    files: FileSet
    timeout_s: float | None = None
    authoritative: tuple[str, ...] = ()
    # A repository's own tests: its test command (run instead of the language's) and how its output reads;
    # ``team_files`` names the files the team wrote, the only ones checked for switches that hollow tests out.
    command: str = ""
    report_format: str = ""
    team_files: tuple[str, ...] = ()


@dataclass(frozen=True)
class Attachment:
    """A text file the user gave with the task."""

    name: str
    content: str


@dataclass(frozen=True)
class ThreadMessage:
    """A message someone wrote in the thread before the request: who (their display name) and what."""

    author: str
    text: str


@dataclass(frozen=True)
class ThreadContext:
    """What the bot read of the thread it was called into, secrets already masked: the earlier messages in
    order, the files they hold (shared files, named code blocks, linked pull requests), and what was read
    and left out, in words (``summary``: "read 14 earlier messages, 2 files, 3 code blocks")."""

    messages: tuple[ThreadMessage, ...] = ()
    files: tuple[Attachment, ...] = ()
    summary: str = ""
    notes: tuple[str, ...] = ()  # one line each: the cut, masked secrets, files not read, a missing scope

    def __bool__(self) -> bool:
        return bool(self.messages or self.files)

    def transcript(self) -> str:
        """The messages as one quoted text, oldest first, each under its author's name."""
        return "\n\n".join(f"{m.author}:\n{m.text}" for m in self.messages)


@dataclass(frozen=True)
class PriorWork:
    """What earlier runs of the same conversation left behind, for a follow-up."""

    tasks: tuple[str, ...] = ()
    plan: str = ""
    files: FileSet = field(default_factory=FileSet)
    tests: FileSet = field(default_factory=FileSet)  # the team's own tests
    user_tests: FileSet = field(default_factory=FileSet)  # the user's tests: authoritative in every follow-up
    language: str = ""
    repository: str = ""  # the repository the conversation works in, if any
    branch: str = ""  # the bot's branch there, once pushed: a follow-up continues on it
    thread: ThreadContext | None = None  # what the conversation's first run read of its thread


@dataclass(frozen=True)
class RepoTests:
    """How a repository's own tests run: the sandbox's language, the command, how its output is read."""

    __test__ = False

    language: str
    command: str
    report_format: str = ""
    shown: str = ""  # the command as a person would type it ("pytest"), when ``command`` spells out more


@dataclass(frozen=True)
class Publication:
    """What the Check-In hands to a publisher."""

    run_id: str
    conversation_key: str
    task: str
    status: RunStatus
    files: FileSet
    readme: str
    report: TestReport | None
    earlier_tasks: tuple[str, ...] = ()  # the conversation's requests before this one, oldest first
    plan: str = ""
    changed: tuple[str, ...] = ()  # in a repository: the files the team added or changed
    review: str = ""  # the Optimizer's latest review of the work (its notes, without the verdict line); '' for none


@dataclass(frozen=True)
class CheckInResult:
    """Where the work was checked in: ``location`` is a link or a local path."""

    location: str
    kind: str  # "gist", "folder", "attachments", "pull_request", "branch", ...
    note: str = ""
    repository: str = ""  # "acme/billing" when the work went to a repository
    branch: str = ""
    head: str = ""  # the commit the branch points at
