"""Whether the team's own tests could run at all, read from a test report, per language.

A generated test that cannot run says nothing about the code: nothing was collected (pytest's exit 5,
"no tests ran", a Go package with no test files, ``# tests 0``, ``running 0 tests``), or a test file
does not compile or import (a syntax error in it, a module or a name it imports that does not exist). Such a
report goes straight back to the Tester with the error; no model is asked to triage it.

An error in the code under test is not the tests' fault: only errors whose every location is one of the
team's test files count.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from agents.types import TestReport, TestStatus

_NOTHING_RAN = re.compile(
    r"^no tests ran\b|^collected 0 items|\[no test files\]|testing: warning: no tests to run|^# tests 0$|^1\.\.0$"
    r"|^no test classes\b|^no test_\S+ or \S+ files found|^No tests found", re.M)
# The sandbox's sentence when a run exited 0 without a test seen to pass (skipped, exited early...).
_SANDBOX_VERDICT = re.compile(r"^\[sandbox\] not a pass: .*$", re.M)
_RUST_ZERO = re.compile(r"^running (\d+) tests?$", re.M)

# Where an error happened, as each tool prints it: the path is group "path".
_ERROR_AT = [
    # Python: a syntax error while importing a file, or an import failing in a test module.
    re.compile(r'^E?\s*File "(?:/work/)?(?P<path>[^"]+)", line \d+\n(?:E.*\n){0,3}E\s+(?:SyntaxError|IndentationError|TabError)',
               re.M),
    re.compile(r"^(?P<path>[\w./-]+\.py):\d+: in <module>\n(?:.*\n){0,3}?E\s+(?:ModuleNotFoundError|ImportError|SyntaxError)", re.M),
    # Go, C, C++, Java: "./x_test.go:3:57: undefined: x", "./test_calc.c:3:39: error: ...", "./XTest.java:3: error: ...".
    re.compile(r"^(?:\./)?(?P<path>[\w./-]+\.(?:go|c|h|cc|cpp|hpp|java|kt)):\d+(?::\d+)?: (?!warning|note)", re.M),
    # Rust: "error[E0425]: ..." then " --> tests/calc.rs:3:30".
    re.compile(r"^error(?:\[E\d+\])?:.*\n\s+--> (?P<path>[\w./-]+\.rs):\d+", re.M),
    # Node: "# /work/calc.test.js:2" above a SyntaxError, or the module that required a missing one.
    re.compile(r"^#? ?(?:/work/)?(?P<path>[\w./-]+\.[cm]?[jt]s):\d+\n(?:#.*\n){0,3}#?\s*SyntaxError", re.M),
    re.compile(r"Cannot find module .*\n#?\s*Require stack:\n#?\s*- (?:/work/)?(?P<path>[\w./-]+)", re.M),
    # TypeScript: "calc.test.ts(3,5): error TS2304: ..."
    re.compile(r"^(?:\./)?(?P<path>[\w./-]+\.tsx?)\(\d+,\d+\): error TS", re.M),
    # Bash: "./test_main.sh: line 3: syntax error ..."
    re.compile(r"^(?:\./)?(?P<path>[\w./-]+\.(?:sh|bash)): line \d+: syntax error", re.M),
]

HOW_TESTS_ARE_FOUND = {
    "python": "pytest runs functions named test_* in files named test_*.py or *_test.py",
    "go": "go test runs func TestXxx(t *testing.T) in files ending in _test.go, in the package under test",
    "javascript": "node --test runs files named *.test.js (or test_*.js) that call test() from node:test",
    "typescript": "node --test runs files named *.test.ts that call test() from node:test",
    "rust": "cargo test runs #[test] functions in tests/*.rs or in a #[cfg(test)] module",
    "java": "classes whose names end in Test, with @Test methods (JUnit 4) or a main() that asserts",
    "c": "a test_*.c file whose main() runs the checks, prints 'ok N - name' lines and returns non-zero on failure",
    "cpp": "a test_*.cpp file whose main() runs the checks, prints 'ok N - name' lines and returns non-zero on failure",
    "bash": "files named test_*.sh or *_test.sh, each exiting non-zero on failure",
}


def unrunnable_tests(report: TestReport, language: str, team_tests: Iterable[str]) -> str:
    """Why the team's tests could not run, with the runner's own words; "" when they ran (or the fault
    is elsewhere: the code, the user's tests, the sandbox)."""
    tests = {_relative(p) for p in team_tests}
    if not tests or report.status is TestStatus.TIMEOUT:
        return ""
    output = report.stdout + "\n" + report.stderr
    if why := nothing_ran(report, language):
        return why
    if report.ok:
        return ""
    places = {_relative(m.group("path")) for pattern in _ERROR_AT for m in pattern.finditer(output)}
    if places and places <= tests:
        return f"{', '.join(sorted(places))} could not be compiled or loaded" + _evidence_lines(output, places)
    return ""


def nothing_ran(report: TestReport, language: str) -> str:
    """"no test ran (how that language's runner finds tests): <its words>", or "" when some test ran."""
    output = report.stdout + "\n" + report.stderr
    if report.passed or report.failed or report.status is TestStatus.TIMEOUT:
        return ""
    counted_zero = report.passed == 0 and report.failed == 0
    rust = _RUST_ZERO.findall(output)
    if not (_NOTHING_RAN.search(output) or (counted_zero and (not rust or all(n == "0" for n in rust)))):
        return ""
    how = HOW_TESTS_ARE_FOUND.get(language, "")
    evidence = _evidence(output, _NOTHING_RAN) or _evidence(output, _SANDBOX_VERDICT)
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
