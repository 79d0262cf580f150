"""How each test runner's output reads, by report format: the lines naming a failing test, the lines worth
showing first, the lines that only say a test passed, and the runner's words for "no test ran".

A language names its format (``TestRun.report_format``); a language the config adds picks one of these and
its output is read like a built-in one's. The counts come from ``bot.sandbox.results``, keyed by the same
names. Whatever the format, every pattern here is tried: a run's output can mix runners (a build tool's
lines above the tests'), and a pattern of one runner never matches another's ordinary lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class ReportFormat:
    name: str
    failed_names: tuple[str, ...] = ()  # a failing test's name, group "name" (beyond pytest's own sections)
    failure_lines: tuple[str, ...] = ()  # lines an excerpt shows first: failures and their assertions
    name_lines: tuple[str, ...] = ()  # among those, the ones that name a failing test (kept first of all)
    passing_lines: tuple[str, ...] = ()  # lines that only say a test passed or is running
    nothing_ran: tuple[str, ...] = ()  # the runner saying it found no test


PYTEST = ReportFormat(
    "pytest",
    failure_lines=(r"^(?:FAILED |ERROR )",  # the short summary
                   r"^E\s{2,}\S",  # assertion detail
                   r"^_{3,} \S.* _{3,}$",  # the header of one failing test
                   r"^>\s{3,}\S",  # the failing line of the test's source
                   r"^\S+\.py:\d+: in \S"),  # --tb=short: where it failed
    name_lines=(r"^(?:FAILED |ERROR )", r"^_{3,} \S.* _{3,}$"),
    passing_lines=(r"\sPASSED(?:\s+\[\s*\d+%\])?$",  # -v
                   r"^[\w/.-]+ \.+\s*(?:\[\s*\d+%\])?$"),  # progress, every test passing
    nothing_ran=(r"^no tests ran\b", r"^collected 0 items"),
)
GO = ReportFormat(
    "go",
    failed_names=(r"^\s*--- FAIL: (?P<name>\S+)",),
    failure_lines=(r"^\s*--- FAIL: ", r"^\s*\S+_test\.go:\d+: "),  # the test, and its t.Errorf lines
    name_lines=(r"^\s*--- FAIL: ",),
    passing_lines=(r"^\s*--- PASS: |^=== (?:RUN|PAUSE|CONT|NAME)\s|^ok\s+\S+\s+(?:\(cached\)|[\d.]+s)$",),
    nothing_ran=(r"\[no test files\]", r"testing: warning: no tests to run"),
)
TAP = ReportFormat(  # node --test, and the C, C++ and Bash runners here
    "tap",
    failed_names=(r"^\s*not ok \d+ - (?P<name>.+?)(?: #.*)?$",),
    failure_lines=(r"^\s*not ok \d+", r"^\s*(?:error|expected|actual|operator):\s"),  # and its diagnostics
    name_lines=(r"^\s*not ok \d+",),
    passing_lines=(r"^\s*ok \d+ ",
                   r"✔\s*(?:\[?\d+(?:\.\d+)? ?m?s\]?|\(\d+(?:\.\d+)? ?m?s\))?$"),  # node's spec reporter
    nothing_ran=(r"^# tests 0$", r"^1\.\.0$", r"^no test_\S+ or \S+ files found"),
)
CARGO = ReportFormat(
    "cargo",
    failed_names=(r"^test (?P<name>\S+) \.\.\. FAILED$",),
    failure_lines=(r"^test \S+ \.\.\. FAILED",
                   r"panicked at|assertion `?\w* ?`?(?:failed|left == right)|^\s*(?:left|right): "),  # assertions
    name_lines=(r"^test \S+ \.\.\. FAILED",),
    passing_lines=(r"^test \S+ \.\.\. ok$",),
)
JUNIT = ReportFormat(
    "junit",
    failure_lines=(r"^\d+\) \w|^\s*(?:java\.lang\.)?AssertionError|expected:<",),
    name_lines=(r"^\d+\) \w",),
    passing_lines=(r"✔\s*(?:\[?\d+(?:\.\d+)? ?m?s\]?|\(\d+(?:\.\d+)? ?m?s\))?$",),  # the console launcher
    nothing_ran=(r"^no test classes\b",),
)
EXIT_CODE = ReportFormat("exit-code")  # only the exit code says anything

REPORT_FORMATS = {f.name: f for f in (PYTEST, GO, TAP, CARGO, JUNIT, EXIT_CODE)}
_ANY_RUNNER = ReportFormat("any", failure_lines=(r"AssertionError|Assertion failed",), nothing_ran=(r"^No tests found",))


def _joined(field: str) -> re.Pattern[str]:
    parts = [part for fmt in (*REPORT_FORMATS.values(), _ANY_RUNNER) for part in getattr(fmt, field)]
    return re.compile("|".join(parts), re.M)


FAILURE_LINE = _joined("failure_lines")
FAILURE_NAME_LINE = _joined("name_lines")
PASSING_LINE = _joined("passing_lines")
NOTHING_RAN = _joined("nothing_ran")
FAILED_NAMES = tuple(re.compile(p, re.M) for fmt in REPORT_FORMATS.values() for p in fmt.failed_names)
