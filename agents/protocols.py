"""The narrow protocols the team needs from the outside world. ``bot/`` implements them."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from typing import Protocol

from agents.types import CheckInResult, Message, Publication, TestJob, TestReport, Usage


class ChatModel(Protocol):
    """A chat model that streams its reply.

    ``stream`` yields text deltas (``str``) and, last, one ``Usage``. The agent's role names
    which per-agent settings (model, temperature, max tokens) apply. Closing the iterator early
    (``aclose``) must close the underlying connection.
    """

    def stream(self, role: str, messages: Sequence[Message]) -> AsyncGenerator[str | Usage, None]: ...

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
