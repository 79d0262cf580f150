"""Whether the team's own tests could run at all, read from a test report, per language.

A generated test that cannot run says nothing about the code: nothing was collected (pytest's exit 5,
"no tests ran", a Go package with no test files, ``# tests 0``, ``running 0 tests``), or a test file
does not compile or import (a syntax error in it, a module or a name it imports that does not exist), or some of
its tests were skipped, marked xfail or todo (the sandbox names them). Such a
report goes straight back to the Tester with the error; no model is asked to triage it.

An error in the code under test is not the tests' fault: only errors whose every location is one of the
team's test files count. Nor is a test that imports what the code lacks (``code_lacks``), although the
traceback names only the test file: a name the task or plan gives (``is_even`` where the code wrote ``iseven``),
or a module it names that no code file is, is the Programmer's to write; a name the tests take from a code
file of the team, or an import still failing the same way after the Tester rewrote the tests, is for the
triage to decide.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from agents.language import Languages
from agents.language.reports import NOTHING_RAN
from agents.types import TestReport, TestStatus

# The sandbox's sentence when a run exited 0 without a test seen to pass (skipped, exited early...).
_SANDBOX_VERDICT = re.compile(r"^\[sandbox\] not a pass: .*$", re.M)
_RUST_ZERO = re.compile(r"^running (\d+) tests?$", re.M)
# The sandbox's sentence when tests the team wrote were skipped, xfailed or left todo (``bot.sandbox.skips``).
# and when pytest never ran a test file of theirs (``bot.sandbox.junit.unreported``), or go a test
# (``bot.sandbox.authority.go.unrun``), or node a test file of another language's (``bot.sandbox.reports``).
_NOT_RUN = re.compile(r"^\[sandbox\] not a pass: ((?:one|\d+) of the team's tests did not run: .*"
                      r"|pytest never ran the tests in .*|go test never ran .*|node --test never ran .*)$", re.M)
# The sandbox's sentence when the team's pass beside the user's tests ran none (``bot.sandbox.reports``): the
# counts, the user's tests' alone, do not show it.
_TEAMS_RAN_NONE = "none of the team's tests ran: "
_NONE_OF_THE_TEAMS = re.compile(rf"^\[sandbox\] not a pass: ({_TEAMS_RAN_NONE}.*)$", re.M)


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
    described = languages.get(language)
    found = described.tests_are_found() if described else ""
    how = f" ({found})" if found else ""
    if teams := teams_ran_none(report):  # the user's tests ran; the team's none
        return f"no test ran{how}: {teams.removeprefix(_TEAMS_RAN_NONE)}"
    if report.passed or report.failed or report.status is TestStatus.TIMEOUT:
        return ""
    counted_zero = report.passed == 0 and report.failed == 0
    rust = _RUST_ZERO.findall(output)
    if not (NOTHING_RAN.search(output) or (counted_zero and (not rust or all(n == "0" for n in rust)))):
        return ""
    evidence = _evidence(output, NOTHING_RAN) or _evidence(output, _SANDBOX_VERDICT)
    return f"no test ran{how}{evidence}"


def teams_ran_none(report: TestReport) -> str:
    """The sandbox's sentence when the team's tests, run beside the user's, ran none ("none of the team's tests ran:
    <the runner's words>"), or ""."""
    found = _NONE_OF_THE_TEAMS.search(report.stderr)
    return found.group(1) if found else ""


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


_MISSING_NAME = re.compile(r"ImportError: cannot import name '(?P<name>[\w.]+)' from '(?P<module>[\w.]+)'")
_MISSING_MODULE = re.compile(r"ModuleNotFoundError: No module named '(?P<module>[\w.]+)'")


@dataclass(frozen=True)
class CodeLacks:
    """Tests that could not load because they import what the code lacks: why, and whether it is certain the
    code is at fault (the task or plan names what is missing: no triage needed)."""

    reason: str
    certain: bool


def code_lacks(report: TestReport, code: Iterable[str], named: str, before: TestReport | None = None,
               tests_rewritten: bool = False) -> CodeLacks | None:
    """Whether the team's tests, which could not load (``unrunnable_tests``), import from the code a name or a
    module it lacks that the task or plan (``named``) names, or a name from a code file the team has (``code``):
    Python's ``ImportError`` and ``ModuleNotFoundError``. ``before``, the run before, with ``tests_rewritten``: the
    Tester rewrote the tests and the same imports still fail, which is for the triage too. None when the tests are
    the ones to fix."""
    output = report.stdout + "\n" + report.stderr
    files = {_relative(p) for p in code}
    for match in _MISSING_NAME.finditer(output):
        name, module = match["name"], match["module"]
        path = _module_file(module, files)
        if path and _says(named, name):
            return CodeLacks(f"the tests import {name} from {path}, as the task or plan names it, and {path} does not "
                             f"define it", certain=True)
        if path:
            return CodeLacks(f"the tests import {name} from {path}, which does not define it", certain=False)
    for match in _MISSING_MODULE.finditer(output):
        module = match["module"]
        wanted = module.replace(".", "/") + ".py"
        if not _module_file(module, files) and re.search(rf"(?<![\w/]){re.escape(wanted)}\b", named):
            return CodeLacks(f"the tests import {module}, and the task or plan names {wanted}, which the code does not "
                             f"have", certain=True)
    failing = _import_errors(output)
    if tests_rewritten and before is not None and failing and failing == _import_errors(before.stdout + "\n" + before.stderr):
        return CodeLacks(f"the tests were rewritten and still fail to import the same way ({'; '.join(sorted(failing))})",
                         certain=False)
    return None


def _module_file(module: str, files: set[str]) -> str:
    """The team's code file a dotted module name imports ("" when none)."""
    stem = module.replace(".", "/")
    return next((path for path in sorted(files) for wanted in (f"{stem}.py", f"{stem}/__init__.py")
                 if path == wanted or path.endswith("/" + wanted)), "")


def _says(text: str, name: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is not None


def _import_errors(output: str) -> set[str]:
    """The import errors a test run shows, without the paths that vary between runs."""
    return {match.group() for pattern in (_MISSING_NAME, _MISSING_MODULE) for match in pattern.finditer(output)}
