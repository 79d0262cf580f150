"""A problem of an eval suite, and the error for a suite or an eval that cannot be used."""

from __future__ import annotations

from dataclasses import dataclass, field

from agents.errors import UserInputError
from agents.types import FileSet


class EvalError(UserInputError):
    """The eval cannot start or go on as asked: a missing suite, a malformed task, an unknown mode..."""


@dataclass(frozen=True)
class Problem:
    """One task of a suite. The team sees ``task`` and ``starter``; ``hidden_tests`` only score the result."""

    id: str
    language: str
    task: str
    hidden_tests: FileSet
    starter: FileSet = field(default_factory=FileSet)


@dataclass(frozen=True)
class Suite:
    name: str  # as the user named it: "humaneval", or the JSONL file's path
    problems: tuple[Problem, ...]

    def limited(self, limit: int | None) -> Suite:
        return Suite(self.name, self.problems[:limit] if limit else self.problems)

    @property
    def languages(self) -> set[str]:
        return {problem.language for problem in self.problems}
