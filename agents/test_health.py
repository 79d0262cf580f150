"""Whether the team's own tests could run at all, read from a test report, per language.

A generated test that cannot run says nothing about the code: nothing was collected (pytest's exit 5,
"no tests ran", a Go package with no test files, ``# tests 0``, ``running 0 tests``), or a test file
does not compile or import (a syntax error in it, a module or a name it imports that does not exist), or some of
its tests were skipped, marked xfail or todo (the sandbox names them). Such a
report goes straight back to the Tester with the error; no model is asked to triage it.

An error in the code under test is not the tests' fault: only errors whose every location is one of the
team's test files count.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from agents.language import Languages
from agents.language.reports import NOTHING_RAN
from agents.types import TestReport, TestStatus

# The sandbox's sentence when a run exited 0 without a test seen to pass (skipped, exited early...).
_SANDBOX_VERDICT = re.compile(r"^\[sandbox\] not a pass: .*$", re.M)
_RUST_ZERO = re.compile(r"^running (\d+) tests?$", re.M)
# The sandbox's sentence when tests the team wrote were skipped, xfailed or left todo (``bot.sandbox.skips``).
# and when pytest never ran a test file of theirs (``bot.sandbox.junit.unreported``).
_NOT_RUN = re.compile(r"^\[sandbox\] not a pass: ((?:one|\d+) of the team's tests did not run: .*"
                      r"|pytest never ran the tests in .*)$", re.M)


def unrunnable_tests(report: TestReport, language: str, team_tests: Iterable[str], languages: Languages) -> str:
    """Why the team's tests could not run, with the runner's own words; "" when they ran (or the fault
    is elsewhere: the code, the user's tests, the sandbox). Where an error happened is read the way each
    language's tools print it (``Language.error_at``), whichever language the run is in."""
    tests = {_relative(p) for p in team_tests}
    if not tests or report.status is TestStatus.TIMEOUT:
        return ""
    output = report.stdout + "\n" + report.stderr
    # Tests that did not run are the Tester's to fix, unless others failed: then the code may be wrong too.
    if not report.failed and (skipped := _NOT_RUN.search(report.stderr)):
        return skipped.group(1)
    if why := nothing_ran(report, language, languages):
        return why
    if report.ok:
        return ""
    patterns = {pattern for described in languages for pattern in described.error_at}
    places = {_relative(m.group("path")) for pattern in patterns for m in pattern.finditer(output)}
    if places and places <= tests:
        return f"{', '.join(sorted(places))} could not be compiled or loaded" + _evidence_lines(output, places)
    return ""


def nothing_ran(report: TestReport, language: str, languages: Languages) -> str:
    """"no test ran (how that language's runner finds tests): <its words>", or "" when some test ran."""
    output = report.stdout + "\n" + report.stderr
    if report.passed or report.failed or report.status is TestStatus.TIMEOUT:
        return ""
    counted_zero = report.passed == 0 and report.failed == 0
    rust = _RUST_ZERO.findall(output)
    if not (NOTHING_RAN.search(output) or (counted_zero and (not rust or all(n == "0" for n in rust)))):
        return ""
    described = languages.get(language)
    how = described.tests_are_found() if described else ""
    evidence = _evidence(output, NOTHING_RAN) or _evidence(output, _SANDBOX_VERDICT)
    return "no test ran" + (f" ({how})" if how else "") + evidence


def _relative(path: str) -> str:
    path = path.strip()
    for prefix in ("/work/", "./"):
        if path.startswith(prefix):
            path = path[len(prefix):]
    return path


def _evidence(output: str, pattern: re.Pattern[str]) -> str:
    match = pattern.search(output)
    return f': "{match.group().strip()}"' if match else ""


_ERROR_LINE = re.compile(r"^\s*E\s|error|Error|undefined|expected|syntax", re.I)


def _evidence_lines(output: str, places: set[str], limit: int = 12) -> str:
    """The output's lines that name a failing file or say what the error is."""
    keep = [line for line in output.splitlines()
            if (any(place in line for place in places) or _ERROR_LINE.search(line)) and "site-packages" not in line
            and "dist-packages" not in line and "node:internal" not in line]
    return (":\n" + "\n".join(keep[:limit])) if keep else ""
