"""Reading runners' output into counts and a status (no Docker needed)."""

from __future__ import annotations

import pytest

from agents.types import TestStatus
from bot.sandbox.results import Counts, parse, status_of

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
