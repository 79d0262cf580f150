"""Tests the team wrote that never checked the code: skipped, expected to fail (xfail), left to do (todo), ignored.

Such a test is reported apart from passes and failures, so a run with one passing test and the rest skipped read
"1 passed, 0 failed" and passed. A test the team wrote proves something only when it ran: in a run of the team's
own tests (``reports.all_ran``), each one the runner says did not run is named, and the run is no pass. What the
runner says:

- pytest's JUnit XML report: ``<skipped>`` (``pytest.mark.skip``, ``pytest.skip()``, an ``async def`` test, which
  pytest skips without an async plugin, and none is loaded) and xfail (``type="pytest.xfail"``);
- ``go test -json``: a test's ``skip`` event (``t.Skip``);
- TAP (node's ``test.skip``/``test.todo``, a C test's own lines): a result line with a ``# SKIP`` or ``# TODO``
  directive;
- cargo: ``test x ... ignored`` (``#[ignore]``);
- JUnit 4, run by the sandbox's own runner (``agents.language.java``): a line for each test it ignored
  (``@Ignore``) or an assumption stopped (``assumeTrue``), which JUnit's "OK (3 tests)" leaves out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from agents.language.java import JUNIT_NOT_RUN
from bot.sandbox import junit
from bot.sandbox.results import json_lines

ASYNC, SKIP, XFAIL, TODO, ASSUMED = "async", "skip", "xfail", "todo", "assumed"
# What to do instead, said to the Tester once per kind of test that did not run.
ADVICE = {
    ASYNC: "async tests cannot run here (no async plugin is loaded): write them as plain functions that call "
           "asyncio.run(...)",
    SKIP: "a skipped test proves nothing: remove the skip, or the test",
    XFAIL: "a test marked xfail proves nothing: assert what the code must do",
    TODO: "a test marked todo proves nothing: write it, or remove it",
    ASSUMED: "a test an assumption stopped proves nothing: assert what the code must do, or remove the test",
}
_TAP_DIRECTIVE = re.compile(r"^\s*(?:not ok|ok) \d+ - (?P<name>.*?) # (?P<kind>SKIP|TODO)\b", re.M | re.I)
_CARGO_IGNORED = re.compile(r"^test (?P<name>\S+) \.\.\. ignored\b", re.M)
# JUnit's console listener prints "." or "I" per test with no line break: the runner's line may follow one.
_JUNIT_NOT_RUN = re.compile(re.escape(JUNIT_NOT_RUN) + r" (?P<kind>ignored|assumption) (?P<name>.+)$", re.M)
_PYTEST_ASYNC = "async def function"  # pytest's skip (or failure) message for a coroutine test: "async def functions..."


@dataclass(frozen=True)
class NotRun:
    """One test the runner says did not run, and which kind (``ASYNC``, ``SKIP``, ``XFAIL``, ``TODO``, ``ASSUMED``)."""

    name: str
    kind: str


def not_run(report_format: str, output: str, written: str | None) -> list[NotRun]:
    """The tests the runner's report (``written``, when the language keeps one) or output says did not run."""
    if written is not None:
        return _pytest(written) if report_format == "pytest" else []
    if report_format == "go":
        return [NotRun(str(event["Test"]), SKIP) for event in json_lines(output)
                if event.get("Action") == "skip" and event.get("Test")]
    if report_format == "tap":
        return [NotRun(m.group("name").strip(), m.group("kind").lower()) for m in _TAP_DIRECTIVE.finditer(output)]
    if report_format == "cargo":
        return [NotRun(m.group("name"), SKIP) for m in _CARGO_IGNORED.finditer(output)]
    if report_format == "junit":
        return [NotRun(m.group("name").strip(), SKIP if m.group("kind") == "ignored" else ASSUMED)
                for m in _JUNIT_NOT_RUN.finditer(output)]
    return []


def _pytest(written: str) -> list[NotRun]:
    try:
        cases = junit.testcases(written)
    except ValueError:
        return []  # no readable report is no pass already (``reports.single``)
    found = []
    for case in cases:
        kind, element = junit.outcome(case)
        if kind != "skipped" or element is None or not case.get("name"):
            continue
        name = f"{case.get('classname', '')}::{case.get('name')}"
        said = (element.get("message") or "") + (element.text or "")
        which = XFAIL if element.get("type") == "pytest.xfail" else ASYNC if _PYTEST_ASYNC in said else SKIP
        found.append(NotRun(name, which))
    return found


def sentence(tests: Sequence[NotRun], shown: int = 5) -> str:
    """"3 of the team's tests did not run: a, b (why); c (why)", each kind once with what to do instead."""
    parts = []
    for kind in ADVICE:
        names = [test.name for test in tests if test.kind == kind]
        if names:
            more = f" and {len(names) - shown} more" if len(names) > shown else ""
            parts.append(f"{', '.join(names[:shown])}{more} ({ADVICE[kind]})")
    count = f"{len(tests)} of the team's tests" if len(tests) > 1 else "one of the team's tests"
    return f"{count} did not run: " + "; ".join(parts)
