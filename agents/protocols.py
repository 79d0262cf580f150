"""The narrow protocols the team needs from the outside world. ``bot/`` implements them."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterable, Sequence
from typing import Protocol

from agents.types import CheckInResult, FileSet, Message, Publication, RepoTests, TestJob, TestReport, Usage


class ChatModel(Protocol):
    """A chat model that streams its reply.

    ``stream`` yields text deltas (``str``) and, last, one ``Usage``. The agent's role names
    which per-agent settings (model, temperature, max tokens) apply; ``temperature``, when given, is this call's
    instead of the role's (a candidate sampled to differ from the last). Closing the iterator early
    (``aclose``) must close the underlying connection.
    """

    def stream(self, role: str, messages: Sequence[Message],
               temperature: float | None = None) -> AsyncGenerator[str | Usage, None]: ...

    def model_name(self, role: str) -> str: ...


class Sandbox(Protocol):
    """Runs a language's test command over files, isolated from the host."""

    async def run(self, job: TestJob) -> TestReport: ...


class PreparedSandbox(Sandbox, Protocol):
    """A sandbox that gets ready while the team's models write (optional: the Manager uses what a sandbox has).

    ``ready`` checks the sandbox can run tests at all (raising ``SandboxError`` with one sentence when not); the
    Manager awaits it beside the Planner's turn, so a run ends before its next model call when it cannot test.
    ``prepare`` says a test run in ``language`` comes soon; it returns at once and never raises: it is a hint."""

    async def ready(self) -> None: ...

    def prepare(self, language: str) -> None: ...


class Publisher(Protocol):
    """Checks the finished work in somewhere a person can reach it."""

    async def publish(self, publication: Publication) -> CheckInResult: ...


class Workspace(Protocol):
    """A repository the team works in for one run: it reads the map and the files it needs, its changes are
    committed to the run's own branch, and the repository's own tests judge them.

    ``paths`` are every file of the tree the team may read; ``existing_tests`` those of them that are the
    repository's tests (authoritative: the team adds tests, it does not edit these). ``unwritable`` says, of some
    paths, which no file may be written at there and why (a folder of the tree, a path through a file or a link of
    it...). ``commit`` records the files that differ from the tree as one commit and returns its id (None when
    nothing differs)."""

    name: str  # "acme/billing@main", for people

    def map(self) -> str: ...

    def paths(self) -> frozenset[str]: ...

    def existing_tests(self) -> frozenset[str]: ...

    def tests(self) -> RepoTests: ...

    def unwritable(self, paths: Iterable[str]) -> dict[str, str]: ...

    async def read(self, paths: Iterable[str]) -> FileSet: ...

    async def everything(self) -> FileSet: ...

    async def commit(self, files: FileSet, message: str) -> str | None: ...
