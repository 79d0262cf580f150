"""Versions of the code judged first by the tests no model wrote: the user's own tests and the examples the task
gives (``agents.task_examples``).

A small model's generated tests are often wrong; the user's are not. So each version of the code the Programmer
writes is a candidate, and the user's tests are its first check:

- a candidate that fails them is changed: no triage is asked (the user's tests are never the ones to fix) and no
  review is asked (the code changes whatever the Optimizer says), and the Programmer is shown the user's tests'
  own failure, without the noise of the team's tests around it. Where the task gave the functions to write, the
  next candidate is written afresh from those given files, sampled at a higher temperature so it can differ
  (``TeamSettings.resample_temperature``): a small model's fresh attempt passes far more often than its fix of
  a wrong one, and the sandbox that judges each attempt is cheap next to the model;
- a candidate that passes them is kept, so when the budget runs out the best attempt is a candidate the user's
  tests passed, not a later one that broke them: of several, the one the team's tests failed least, the first of
  equals (a small model's later versions, changed on the word of its own wrong tests, are often worse, and pass
  the task's examples all the same);
- only a candidate that passes them meets the rest of the team: the team's tests (their failure triaged as
  before) and the review.

When the whole test run fails and the team has tests of its own, the user's tests run once more alone (the
sandbox is cheap next to a model call), which tells whose tests failed in any language.

Without such tests the team's own tests are the only judge, and every tested version is a candidate all the same:
a version they passed is not lost when a later "fix" breaks it. Whatever ends a run without a pass (the budget, an
error, a stop), it ends with the best candidate (``best``), and says so when that is not the last version tested.
The team's tests can change between rounds (fixed by the Tester, or written again for a new plan), so two versions
are compared by them only when the same tests judged both.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from agents.run_state import Work
from agents.types import FileSet, TestJob, TestReport

FIX_REASON = ("The code fails the task's own tests (their output is above): change the code so it gives the "
              "answers they expect.")
KEPT_NOTICE = ("The last version of the code is not the best the team tested; it keeps the one that passed the "
               "task's own tests with the fewest of its own failing, the first of equals ({summary}).")
CLOSEST_NOTICE = ("No version of the code passed the task's own tests; the team keeps the one closest to passing "
                  "(the first of those that failed fewest of them: {summary}).")
BEST_NOTICE = ("The last version of the code is not the best the team tested; it keeps the one of round {round}, "
               "which did best on the team's tests ({summary}).")


@dataclass(frozen=True)
class Candidate:
    """A tested version of the code: the work as that test run saw it (the code and the tests that judged it), the
    report to show for it, and how far it was from passing."""

    work: Work
    report: TestReport
    misses: int = 0  # tests of the whole run it failed (1: they failed without any counted)
    users_misses: int = 0  # of those, the tests no model wrote (the user's, the task's examples): 0 when none failed
    round: int = 0  # the round it was tested in


def misses(report: TestReport) -> int:
    """How far a test run was from passing: its failed tests, or 1 for a run that failed without any counted."""
    return 0 if report.ok else max(report.failed or 0, 1)


def judged(work: Work, report: TestReport, users: TestReport | None, round_: int) -> Candidate:
    """The candidate a test run makes of ``work``: ``report`` is the whole run's, ``users`` the verdict of the tests
    no model wrote (None: the run has none). One that failed those is shown by their failure alone."""
    failed_users = users is not None and not users.ok
    shown = users if failed_users and users is not None else report
    return Candidate(work, shown, misses(report), misses(users) if users is not None else 0, round_)


def best(tried: Sequence[Candidate], first_of_equals: bool) -> Candidate | None:
    """The candidate a run that ends now hands back: the one that failed fewest of the tests no model wrote; of those,
    one the newest tests judged (the team replaced older ones as wrong, or for a new plan: versions are compared by
    the team's tests only when the same tests judged them); of those, the one that failed fewest. Of equals, the
    first when tests no model wrote judge the run (a later version was sampled to differ, or changed on the word
    of tests no one checked), else the latest (it took the review's and the triage's word as well)."""
    if not tried:
        return None
    newest = tried[-1].work.tests

    def rank(item: tuple[int, Candidate]) -> tuple[int, bool, int, int]:
        index, candidate = item
        return (candidate.users_misses, candidate.work.tests != newest, candidate.misses,
                index if first_of_equals else -index)

    return min(enumerate(tried), key=rank)[1]


def handed_back(reason: str, round_: int, report: TestReport) -> str:
    """``reason`` (why a run ended) saying which version it ended with: the one tested in ``round_``."""
    which = f"the files are the version of round {round_}, the best the tests judged ({report.summary()})"
    return f"{reason} {which[0].upper()}{which[1:]}." if reason.endswith(".") else f"{reason}; {which}"


def users_job(job: TestJob, team_tests: FileSet) -> TestJob:
    """``job`` without the team's tests: the user's tests alone over the code."""
    return dataclasses.replace(job, files=job.files.without(team_tests))


def users_alone_needed(report: TestReport, team_tests: FileSet) -> bool:
    """Whether a failed run needs the user's tests run alone to know whose tests failed (a passing run passed
    them, and a run without team tests is the user's tests' own)."""
    return not report.ok and bool(team_tests)


AGAIN_REASON = ("An earlier version of this code (not shown) failed the tests as above, and asked to fix it the "
                "Programmer wrote it again unchanged. Write the body again from the task, another way, so these "
                "tests pass.")
AGAIN_NOTICE = "The Programmer's fix was the code unchanged; it writes the functions again from the task instead."
RESAMPLE_REASON = ("An earlier version of this code (not shown) failed the task's own tests as above. Write the body "
                   "again from the task, another way, so these tests pass.")


def unchanged(written: FileSet, current: FileSet) -> bool:
    """Whether a reply that was to change the code wrote only what the files already hold."""
    return bool(written) and all(current.get(path) == text for path, text in written.items())


def fresh_start(current: FileSet, given: FileSet) -> FileSet:
    """The files a new candidate starts from: the given files the code was completed from (their functions still
    to write), in place of the versions written since."""
    return current.merged({path: text for path, text in given.items() if path in current})
