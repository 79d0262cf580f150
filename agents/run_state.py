"""What a run has at any moment, as a few named values the Manager replaces (never edits) as the workflow moves.

``Work`` is the files as they stand: the code, the team's tests, the user's tests. ``Standing`` is what was last
said about them: the latest review, test report and triage. Both are frozen: a step returns the next value, so
what a role was shown is the value it was given, however the run went on meanwhile (two steps at once).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from agents.replies import Review, Triage
from agents.types import FileSet, TestReport


@dataclass(frozen=True)
class Work:
    """The files as they stand: the code, the tests the team wrote (it may fix them) and the user's tests
    (authoritative, never edited)."""

    files: FileSet = field(default_factory=FileSet)
    tests: FileSet = field(default_factory=FileSet)
    user_tests: FileSet = field(default_factory=FileSet)

    def all_tests(self) -> FileSet:
        return self.tests.merged(self.user_tests)

    def everything(self) -> FileSet:
        """Every file: what a test run is given and what is checked in."""
        return self.files.merged(self.all_tests())

    def with_files(self, files: FileSet) -> Work:
        return replace(self, files=files)

    def with_tests(self, tests: FileSet) -> Work:
        return replace(self, tests=tests)


@dataclass(frozen=True)
class Standing:
    """What was last said about the work: the latest review, test report and triage (None: not yet)."""

    review: Review | None = None
    report: TestReport | None = None
    triage: Triage | None = None

    def failure(self) -> tuple[TestReport | None, str]:
        """The last test run when it failed, and the Manager's reading of it."""
        if self.report is None or self.report.ok:
            return None, ""
        return self.report, self.triage.reason if self.triage else ""

    def changes_asked(self) -> str:
        """What the latest review asks to change ('' when it approved, or there is none)."""
        return self.review.notes if self.review and not self.review.approved else ""
