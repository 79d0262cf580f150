"""Reading a test runner's output into counts, and deciding the run's status.

Each format reads the runner's own summary where it prints one; the exit code always has the last
word on pass/fail, so a runner we cannot read still gives an honest status.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from agents.types import TestStatus


@dataclass(frozen=True)
class Counts:
    passed: int | None = None
    failed: int | None = None


NONE = Counts()

_PYTEST_PART = re.compile(r"(\d+) (passed|failed|errors?|xpassed)\b")
_PYTEST_LINE = re.compile(r"^=*\s*(?:\d+ \w+(?:, )?)+.* in [\d.]+s", re.M)
# TAP's result words are lower case: "OK" or "Ok, saved" is a line a program printed, not a test's result.
_TAP_LINE = re.compile(r"^(not ok|ok)\b(?!.*#\s*(?i:skip|todo)\b)", re.M)
_TAP_SUMMARY = re.compile(r"^# (pass|fail) (\d+)$", re.M)
_NODE_FILE_OK = re.compile(r"^ok \d+ - /\S+\.(?:[cm]?js|tsx?)$", re.M)
_GO_LINE = re.compile(r"^--- (PASS|FAIL): ", re.M)
_CARGO_LINE = re.compile(r"^test result: \w+\. (\d+) passed; (\d+) failed", re.M)
_JUNIT_OK = re.compile(r"^OK \((\d+) tests?\)", re.M)
_JUNIT_FAIL = re.compile(r"^Tests run: (\d+),\s+Failures: (\d+)", re.M)


def parse_pytest(text: str) -> Counts:
    """The last summary line: "== 3 passed, 1 failed, 1 error in 0.12s ==" (errors count as failed)."""
    lines = _PYTEST_LINE.findall(text)
    if not lines:
        return NONE
    found = {"passed": 0, "failed": 0}
    for number, word in _PYTEST_PART.findall(lines[-1]):
        key = "passed" if word in ("passed", "xpassed") else "failed"
        found[key] += int(number)
    return Counts(found["passed"], found["failed"])


def parse_tap(text: str) -> Counts:
    """node's "# pass N" / "# fail N" when present, else the top-level ``ok`` / ``not ok`` lines.

    A test file that reported no test of its own counts as a failure, not a pass (see ``node_files_alone``)."""
    summary = dict(_TAP_SUMMARY.findall(text))
    if summary:
        alone = node_files_alone(text)
        return Counts(max(int(summary.get("pass", 0)) - alone, 0), int(summary.get("fail", 0)) + alone)
    results = _TAP_LINE.findall(text)
    if not results:
        return NONE
    return Counts(results.count("ok"), results.count("not ok"))


def node_files_alone(text: str) -> int:
    """How many test files node reported as a whole, with no test of their own: it counts a file that calls
    no ``test()``, or that exited (``process.exit(0)``) before its tests reported, as one passing test named by
    its absolute path ("ok 2 - /work/calc.test.js"). Such a file tested nothing, or hid the tests after the exit."""
    return len(_NODE_FILE_OK.findall(text))


def parse_go(text: str) -> Counts:
    """``go test -json``'s events for top-level tests (the built-in command); a configured ``go test -v``'s
    unindented "--- PASS: TestX" / "--- FAIL: TestX" lines when there are no events."""
    events = json_lines(text)
    actions = [event.get("Action") for event in events
               if event.get("Test") and "/" not in str(event["Test"]) and event.get("Action") in ("pass", "fail")]
    if events:
        return Counts(actions.count("pass"), actions.count("fail")) if actions else NONE
    results = _GO_LINE.findall(text)
    if not results:
        return NONE
    return Counts(results.count("PASS"), results.count("FAIL"))


def json_lines(text: str) -> list[dict[str, object]]:
    """Every line of ``text`` that is a JSON object (go test -json's events), in order."""
    events = []
    for line in text.splitlines():
        if line.startswith("{"):
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict):
                events.append(event)
    return events


def parse_cargo(text: str) -> Counts:
    """The sum of every "test result: ok. 2 passed; 1 failed" line (unit, integration and doc tests)."""
    lines = _CARGO_LINE.findall(text)
    if not lines:
        return NONE
    return Counts(sum(int(p) for p, _ in lines), sum(int(f) for _, f in lines))


def parse_junit(text: str) -> Counts:
    """JUnit 4's console summary ("OK (3 tests)" / "Tests run: 3,  Failures: 1"), else TAP lines. The last one:
    JUnit prints its summary after every test, so a line like it that a test printed comes before."""
    found = [*_JUNIT_OK.finditer(text), *_JUNIT_FAIL.finditer(text)]
    if not found:
        return parse_tap(text)
    last = max(found, key=lambda match: match.start())
    if last.re is _JUNIT_OK:
        return Counts(int(last.group(1)), 0)
    run, failures = int(last.group(1)), int(last.group(2))
    return Counts(run - failures, failures)


PARSERS: dict[str, Callable[[str], Counts]] = {
    "pytest": parse_pytest, "tap": parse_tap, "go": parse_go, "cargo": parse_cargo, "junit": parse_junit,
    "exit-code": lambda _text: NONE,
}


def parse(report_format: str, stdout: str, stderr: str) -> Counts:
    parser = PARSERS.get(report_format, PARSERS["exit-code"])
    return parser(stdout + "\n" + stderr)


def status_of(exit_code: int | None, counts: Counts) -> TestStatus:
    """Passed only when the runner exited 0 and no test failed; a reported failure wins over exit 0."""
    if exit_code is None:
        return TestStatus.ERROR
    if exit_code == 0 and not counts.failed:
        return TestStatus.PASSED
    return TestStatus.FAILED
