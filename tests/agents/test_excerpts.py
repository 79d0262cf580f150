"""The failing output a thread shows: failures first, whole lines only, and how much was left out."""

from __future__ import annotations

import re

import pytest

from agents.excerpts import failure_excerpt
from agents.types import TestReport, TestStatus

NOISE = [f"collecting module_{i}.py ........................................ ok" for i in range(300)]

RUNNERS = {
    "pytest": ["_____________ test_lists _____________", "    def test_lists():", ">       assert find_intf(x) == [1]",
               "E       assert [] == [1]", "E         Right contains one more item: 1",
               "FAILED test_intf.py::test_lists - assert [] == [1]", "1 failed, 1 passed in 0.05s"],
    "go": ["=== RUN   TestLists", "    intf_test.go:12: got [] want [1]", "--- FAIL: TestLists (0.00s)", "FAIL",
           "FAIL\texample.com/intf\t0.003s"],
    "tap": ["# Subtest: lists", "not ok 2 - lists", "  ---", "  error: 'Expected values to be strictly equal'",
            "  expected: [1]", "  actual: []", "# fail 1"],
    "cargo": ["test tests::lists ... FAILED", "thread 'tests::lists' panicked at src/lib.rs:9:5:",
              "assertion `left == right` failed", "  left: []", " right: [1]", "test result: FAILED. 1 passed; 1 failed"],
    "junit": ["There was 1 failure:", "1) testLists(IntfTest)", "java.lang.AssertionError: expected:<[1]> but was:<[]>",
              "FAILURES!!!", "Tests run: 2,  Failures: 1"],
}
KEYS = {"pytest": ["FAILED test_intf.py::test_lists", "E       assert [] == [1]"], "go": ["--- FAIL: TestLists"],
        "tap": ["not ok 2 - lists"], "cargo": ["test tests::lists ... FAILED", "panicked at"],
        "junit": ["1) testLists(IntfTest)", "AssertionError: expected:<[1]>"]}


def report(lines: list[str]) -> TestReport:
    return TestReport(TestStatus.FAILED, 1, 0.1, 1, 1, "\n".join(lines))


@pytest.mark.parametrize("runner", sorted(RUNNERS))
@pytest.mark.parametrize("limit", [400, 1500])
def test_the_failures_come_first_whole_lines_only_and_the_gap_is_counted(runner, limit):
    lines = NOISE[:150] + RUNNERS[runner][:-1] + NOISE[150:] + RUNNERS[runner][-1:]
    excerpt = failure_excerpt(report(lines), limit)
    assert len(excerpt) <= limit
    shown = excerpt.splitlines()
    marker = next(line for line in shown if line.startswith("[…"))
    assert all(line in lines for line in shown if line is not marker)  # whole lines, never a piece of one
    assert shown[-1] == lines[-1]  # the end of the output (the summary) is there
    for key in KEYS[runner]:
        assert any(key in line for line in shown[: shown.index(marker)]), key  # named before the rest
    hidden = int(re.search(r"\[… ([\d,]+) more", marker).group(1).replace(",", ""))
    assert hidden == len(lines) - (len(shown) - 1)


def test_output_that_fits_is_shown_whole():
    lines = RUNNERS["pytest"]
    assert failure_excerpt(report(lines), 5000) == "\n".join(lines)


def test_a_huge_line_shows_its_start_and_nothing_is_over_the_limit():
    excerpt = failure_excerpt(report(["E   " + "x" * 10_000, *NOISE]), 800)
    assert len(excerpt) <= 800 and excerpt.splitlines()[0].endswith("…") and len(excerpt.splitlines()[0]) <= 240


def test_stderr_is_part_of_the_output():
    failing = TestReport(TestStatus.FAILED, 1, 0.1, stdout="\n".join(NOISE), stderr="Traceback ...\nAssertionError: boom")
    assert failure_excerpt(failing, 600).splitlines()[0] == "AssertionError: boom"


PASSING = {  # what each runner prints for a test that passed
    "pytest": [f"tests/test_intf.py::test_case_{i} PASSED          [{i % 100:3d}%]" for i in range(200)],
    "pytest-progress": [f"tests/test_part_{i}.py ........................................ [{i % 100:3d}%]"
                        for i in range(200)],
    "go": [line for i in range(100) for line in (f"=== RUN   TestCase{i}", f"--- PASS: TestCase{i} (0.00s)")],
    "tap": [f"ok {i} - case {i}" for i in range(200)],
    "cargo": [f"test tests::case_{i} ... ok" for i in range(200)],
    "junit": [f"│  ├─ testCase{i}() ✔" for i in range(200)],
}


@pytest.mark.parametrize("runner", sorted(PASSING))
def test_lines_that_only_say_a_test_passed_are_left_out_of_the_end_and_counted(runner):
    failing = RUNNERS["go" if runner == "go" else "pytest"]
    passing = PASSING[runner]
    lines = passing[:100] + failing[:-1] + passing[100:] + failing[-1:]
    shown = failure_excerpt(report(lines), 1500).splitlines()
    marker = next(line for line in shown if line.startswith("[…"))
    assert not set(shown) & set(passing)  # nothing but the failures, the context and the summary
    assert shown[-1] == lines[-1]
    progress = int(re.search(r"\(([\d,]+) of them only progress or passing tests\)", marker).group(1).replace(",", ""))
    assert len(passing) <= progress <= len(passing) + 1  # go's "=== RUN" of the failing test is progress too
    hidden = int(re.search(r"\[… ([\d,]+) more", marker).group(1).replace(",", ""))
    assert hidden == len(lines) - (len(shown) - 1)


def test_pytest_shows_the_failing_source_line_and_where_it_failed_first():
    lines = [*NOISE, "____ test_lists ____", "test_intf.py:4: in test_lists", "    assert find_intf(x) == [1]",
             ">       assert find_intf(x) == [1]", "E   assert [] == [1]", *NOISE[:50], "1 failed in 0.05s"]
    shown = failure_excerpt(report(lines), 1500).splitlines()
    assert shown[:4] == ["____ test_lists ____", "test_intf.py:4: in test_lists", ">       assert find_intf(x) == [1]",
                         "E   assert [] == [1]"]
