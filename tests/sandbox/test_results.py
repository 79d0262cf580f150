"""Reading runners' output into counts and a status (no Docker needed)."""

from __future__ import annotations

import pytest

from agents.types import TestReport, TestStatus
from bot.config.sections import LanguageConfig
from bot.sandbox.reports import StepResult, none_said_failed, single
from bot.sandbox.results import Counts, parse, status_of
from tests.docker_support import TEST_CONFIG

PYTEST_FAIL = """.F.
=================================== FAILURES ===================================
FAILED test_calc.py::test_sub - assert 8 == 2
1 failed, 2 passed in 0.03s
"""
PYTEST_VERBOSE = "========== 1 failed, 4 passed, 2 errors, 1 skipped in 1.20s ==========\n"
NODE_TAP = "TAP version 13\nok 1 - a\nnot ok 2 - b\n  ---\n  ...\nok 3 - c\n1..3\n# tests 3\n# pass 2\n# fail 1\n"
PLAIN_TAP = "ok 1 - add\nnot ok 2 - sub\nok 3 - mul # SKIP not today\n    ok 1 - nested\n1..3\n"
GO_V = """=== RUN   TestAdd
--- PASS: TestAdd (0.00s)
=== RUN   TestSub
=== RUN   TestSub/negative
    --- FAIL: TestSub/negative (0.00s)
--- FAIL: TestSub (0.00s)
FAIL
"""
CARGO = """test tests::test_add ... ok
test tests::test_sub ... FAILED
test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out
test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out
"""
JUNIT_FAIL = "JUnit version 4.13.2\n..E\nThere was 1 failure:\n1) testSub(CalcTest)\nFAILURES!!!\nTests run: 3,  Failures: 1\n"


@pytest.mark.parametrize(("fmt", "text", "expected"), [
    ("pytest", PYTEST_FAIL, Counts(2, 1)),
    ("pytest", PYTEST_VERBOSE, Counts(4, 3)),
    ("pytest", "no tests ran in 0.01s\n", Counts(None, None)),
    ("tap", NODE_TAP, Counts(2, 1)),
    ("tap", PLAIN_TAP, Counts(1, 1)),
    ("go", GO_V, Counts(1, 1)),
    ("cargo", CARGO, Counts(4, 1)),
    ("junit", JUNIT_FAIL, Counts(2, 1)),
    ("junit", "JUnit version 4.13.2\n...\nOK (3 tests)\n", Counts(3, 0)),
    ("junit", "ok 1 - CalcTest\nnot ok 2 - OtherTest\n1..2\n", Counts(1, 1)),
    ("exit-code", PYTEST_FAIL, Counts(None, None)),
    ("no-such-format", PYTEST_FAIL, Counts(None, None)),
])
def test_counts_read_from_runner_output(fmt, text, expected):
    assert parse(fmt, text, "") == expected


def test_counts_are_read_from_stderr_too():
    assert parse("cargo", "", CARGO) == Counts(4, 1)


@pytest.mark.parametrize(("exit_code", "counts", "status"), [
    (0, Counts(3, 0), TestStatus.PASSED),
    (0, Counts(None, None), TestStatus.PASSED),
    (0, Counts(2, 1), TestStatus.FAILED),  # a reported failure wins over a careless exit 0
    (1, Counts(3, 0), TestStatus.FAILED),  # so does a non-zero exit over counts that look fine
    (5, Counts(None, None), TestStatus.FAILED),
    (None, Counts(None, None), TestStatus.ERROR),
])
def test_status_from_exit_code_and_counts(exit_code, counts, status):
    assert status_of(exit_code, counts) is status


NODE_FILE_ALONE = ("TAP version 13\n# Subtest: add\nok 1 - add\n# \\# pass 5\n# Subtest: /work/b.test.js\n"
                   "ok 2 - /work/b.test.js\n1..2\n# tests 2\n# pass 2\n# fail 0\n")


def test_a_node_test_file_that_reported_no_test_of_its_own_is_a_failure():
    assert parse("tap", NODE_FILE_ALONE, "") == Counts(1, 1)
    assert parse("tap", "ok 1 - /tmp/ts-out/calc.test.js\n1..1\n# pass 1\n# fail 0\n", "") == Counts(0, 1)


def step(exit_code: int | None, stdout: str = "", timed_out: bool = False) -> StepResult:
    return StepResult(exit_code, timed_out, 0.5, stdout, "", False)


JUNIT_TWO = ('<?xml version="1.0"?><testsuites><testsuite><testcase classname="t" name="a"/>'
             '<testcase classname="t" name="b"/><testcase classname="t" name="c"><skipped/></testcase>'
             '</testsuite></testsuites>')


@pytest.mark.parametrize(("fmt", "stdout"), [
    ("tap", ""),  # a C test binary that printed nothing
    ("tap", "1..0\n"),
    ("tap", "OK\nOk, saved\n"),  # what a C test or the code printed: TAP's words are lower case
    ("go", "PASS\nok  \tsandbox\t0.01s\n"),  # a TestMain that never ran the tests
    ("pytest", "5 skipped in 0.01s\n"),
    ("cargo", "test result: ok. 0 passed; 0 failed; 0 ignored\n"),
])
def test_an_exit_code_of_0_with_no_test_seen_passing_is_not_a_pass(fmt, stdout):
    language = LanguageConfig(image="x", test_command="t", report_format=fmt)
    report = single(step(0, stdout), language, TEST_CONFIG)
    assert (report.status, report.passed) == (TestStatus.FAILED, 0)
    assert "[sandbox] not a pass: the test command exited 0" in report.stderr


def test_a_language_judged_by_exit_code_alone_still_passes_on_0():
    language = LanguageConfig(image="x", test_command="t", report_format="exit-code")
    assert single(step(0), language, TEST_CONFIG).status is TestStatus.PASSED


def test_with_a_report_file_the_counts_come_from_it_not_from_what_was_printed():
    language = LanguageConfig(image="x", test_command="t", report_format="pytest", report_file="/tmp/r.xml")
    fake = "========== 9 passed in 0.01s ==========\n"
    report = single(step(0, fake), language, TEST_CONFIG, JUNIT_TWO)
    assert (report.status, report.passed, report.failed) == (TestStatus.PASSED, 2, 0)
    stopped = JUNIT_TWO.replace("</testsuite>", '<testcase time="0.000" /></testsuite>')  # pytest.exit(returncode=0)
    for written in ("", "<testsuites", '<!DOCTYPE x [<!ENTITY a "b">]><testsuites/>', stopped):
        missing = single(step(0, fake), language, TEST_CONFIG, written)
        assert (missing.status, missing.passed) == (TestStatus.FAILED, 0)
        assert "report of the tests is missing or incomplete" in missing.stderr, written


def test_junit_counts_come_from_its_last_summary():
    """JUnit prints its summary after every test: a line like it printed by a test comes first."""
    printed = "..\nOK (9 tests)\n.E\nThere was 1 failure:\n\nFAILURES!!!\nTests run: 3,  Failures: 1\n\n"
    assert parse("junit", printed, "") == Counts(2, 1)
    assert parse("junit", "Tests run: 9,  Failures: 9\n...\nOK (3 tests)\n", "") == Counts(3, 0)


@pytest.mark.parametrize(("printed", "said_failed"), [
    ("PASS: add\nFAIL: sub gave 8\n", True), ("# FAIL: sub\n", True), ("[FAILED] sub\n", True),
    ("Test failed: sub\n", True), ("test sub failed\n", True),
    ("Passed: 3\nFAILED: 0\n", False), ("Failed to open config.txt\n", False), ("ok 1 - ./test_fail.sh\n", False),
    ("# fail 0\n", False), ("# FAIL\n", False), ("FAIL - sub\n", True),
    ("FAILED: none\n", False), ("FAILURE: none\n", False), ("FAIL count: 0\n", False), ("FAILED TESTS: 0\n", False),
    ("Test cases failed: 0\n", False), ("Test runs failed: 0\n", False), ("Tests passed: 3, failed: 0\n", False),
])
def test_a_team_test_that_printed_a_failed_check_is_no_pass(printed, said_failed):
    passed = TestReport(status=TestStatus.PASSED, exit_code=0, passed=1, failed=0)
    tap = LanguageConfig(image="x", test_command="t", report_format="tap")
    judged = none_said_failed(passed, tap, printed, "")
    assert (judged.status is TestStatus.FAILED) is said_failed, judged.stderr
    # stderr is the code's own too: a checker under test complaining there ("FAILED: host down") fails nothing
    assert none_said_failed(passed, tap, "", printed).status is TestStatus.PASSED
    pytest_format = LanguageConfig(image="x", test_command="t", report_format="pytest")
    assert none_said_failed(passed, pytest_format, printed, "").status is TestStatus.PASSED
