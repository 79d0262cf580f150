"""What a run has at any moment, as a few named values the Manager replaces (never edits) as the workflow moves.

- ``Work``: the files as they stand (the code, the team's tests, the user's tests);
- ``Standing``: what was last said about them (the latest review, test report and triage);
- ``Due``: who writes in the next round (the Programmer, the Tester, both);
- ``Spent``: the budget's counters (rounds, re-plans, tokens).

All are frozen: each transition is a method returning the next value, so what a role was shown is the value it was
given, however the run went on meanwhile (two steps at once).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from agents.replies import Action, Review, Triage
from agents.types import FileSet, TestReport, Usage


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

    def coded(self, written: FileSet) -> Work:
        """The Programmer's files kept: they are code now, whoever wrote those paths before."""
        return replace(self, files=self.files.merged(written), tests=self.tests.without(written))

    def tested_by(self, written: FileSet) -> Work:
        """The Tester's files kept: they are the team's tests now."""
        return replace(self, files=self.files.without(written), tests=self.tests.merged(written))


@dataclass(frozen=True)
class Standing:
    """What was last said about the work: the latest review, test report and triage (None: not yet)."""

    review: Review | None = None
    reviewed: FileSet | None = None  # the code as the Optimizer last saw it
    report: TestReport | None = None
    triage: Triage | None = None
    cannot_fail: str = ""  # why the tests that last passed could not have failed (agents.checkless), if so
    cannot_pass: str = ""  # why the tests that last failed could not have passed for any code (agents.checkless)
    no_tests: bool = False  # the Tester was asked for tests and none could be saved

    def failure(self) -> tuple[TestReport | None, str]:
        """The last test run when it failed, and the Manager's reading of it."""
        if self.report is None or self.report.ok:
            return None, ""
        return self.report, self.triage.reason if self.triage else ""

    def changes_asked(self) -> str:
        """What the latest review asks to change ('' when it approved, or there is none)."""
        return self.review.notes if self.review and not self.review.approved else ""

    def reviewing(self, code: FileSet) -> Standing:
        return replace(self, reviewed=code)

    def with_review(self, review: Review) -> Standing:
        return replace(self, review=review)

    def with_report(self, report: TestReport, cannot_fail: str = "", cannot_pass: str = "") -> Standing:
        return replace(self, report=report, cannot_fail=cannot_fail, cannot_pass=cannot_pass)

    def with_triage(self, triage: Triage) -> Standing:
        return replace(self, triage=triage)

    def tests_written(self, saved: bool) -> Standing:
        """The Tester was asked for tests; ``saved``: some could be kept."""
        return replace(self, no_tests=not saved)


@dataclass(frozen=True)
class Due:
    """Who writes in the next round: the Programmer (``code``), the Tester (``tests``), or both."""

    code: bool = True
    tests: bool = True

    def code_written(self) -> Due:
        return replace(self, code=False)

    def tests_written(self) -> Due:
        return replace(self, tests=False)

    def code_again(self) -> Due:
        """A review asked for changes, or the code failed its tests."""
        return replace(self, code=True)

    def after(self, action: Action) -> Due:
        """Who writes next after the triage of failing tests: a wrong test is the Tester's alone (the code stands),
        a new plan is everyone's (tests written for the abandoned plan must not decide), else the code changes."""
        if action is Action.FIX_TESTS:
            return Due(code=False, tests=True)
        if action is Action.REPLAN:
            return Due(code=True, tests=True)
        return self.code_again()


@dataclass(frozen=True)
class Spent:
    """The budget's counters: rounds begun, re-plans made, tokens used."""

    rounds: int = 0
    replans: int = 0
    usage: Usage = field(default_factory=Usage)

    def next_round(self) -> Spent:
        return replace(self, rounds=self.rounds + 1)

    def replanned(self) -> Spent:
        return replace(self, replans=self.replans + 1)

    def plus(self, usage: Usage) -> Spent:
        return replace(self, usage=self.usage + usage)
