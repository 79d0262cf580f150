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
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from agents.run_state import Work
from agents.types import FileSet, TestJob, TestReport

FIX_REASON = ("The code fails the task's own tests (their output is above): change the code so it gives the "
              "answers they expect.")
KEPT_NOTICE = ("The last version of the code is not the best the team tested; it keeps the one that passed the "
               "task's own tests with the fewest of its own failing, the first of equals ({summary}).")
CLOSEST_NOTICE = ("No version of the code passed the task's own tests; the team keeps the one closest to passing "
                  "(the first of those that failed fewest of them: {summary}).")


@dataclass(frozen=True)
class Candidate:
    """A tested version of the code: the work as that test run saw it, and its report."""

    work: Work
    report: TestReport
    misses: int = 0  # tests it failed: the user's, for one that failed them; else the team's (1: they did not run)


def misses(report: TestReport) -> int:
    """How far a test run was from passing: its failed tests, or 1 for a run that failed without any counted."""
    return 0 if report.ok else max(report.failed or 0, 1)


def better(candidate: Candidate, best: Candidate | None) -> Candidate:
    """The candidate to keep of two alike (both passed the user's tests, or both failed them): the one that missed
    fewer, the earlier of equals (a later one was sampled to differ, or changed on the word of tests no one
    checked; the first was written as the agent writes)."""
    return candidate if best is None or candidate.misses < best.misses else best


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
