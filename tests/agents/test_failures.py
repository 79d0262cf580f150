"""Failing output told in few characters: cut by failures, never losing the first one's assertion or the count."""

import pytest

from agents.failures import digest, failing_source, failing_tests
from agents.types import TestReport, TestStatus


def pytest_output(cases: list[tuple[str, str]], summary_noise: bool = True) -> str:
    """Output in pytest's --tb=short shape, one failure section per (function, case)."""
    sections = "".join(
        f"{'_' * 20} {test}[{case}] {'_' * 20}\ntest_calc.py:10: in {test}\n    assert parse(text) == seconds\n"
        f"E   AssertionError: assert {case!r} == 0\nE    +  where {case!r} = parse('{case}')\n"
        for test, case in cases)
    summary = "".join(f"FAILED test_calc.py::{test}[{case}] - AssertionError: asse...\n" for test, case in cases)
    return (".F" * 20 + "\n" + "=" * 30 + " FAILURES " + "=" * 30 + "\n" + sections
            + "=" * 10 + " short test summary info " + "=" * 10 + "\n" + (summary if summary_noise else "")
            + f"{len(cases)} failed, 20 passed in 0.50s\n")


def failed(output: str) -> TestReport:
    return TestReport(TestStatus.FAILED, 1, 0.5, 20, 1, output)


@pytest.mark.parametrize("count", [1, 8, 300, 5000])
def test_the_first_failure_is_whole_and_the_rest_counted_by_name_within_the_limit(count):
    cases = [(f"test_unit_{i % 7}", f"case{i}") for i in range(count)]
    told = digest(failed(pytest_output(cases)), 450)
    assert len(told) <= 450 + 80  # one line of names may run over by its last name
    first = told.splitlines()
    assert first[:3] == ["test_unit_0[case0]:", "E   AssertionError: assert 'case0' == 0",
                         "E    +  where 'case0' = parse('case0')"]  # the assertion before the traceback
    if count > 1:
        one_liners = sum(line.startswith("test_unit_") and "]: " in line for line in first)
        untold = count - 1 - one_liners
        assert f"{untold} more failed:" in told if untold else "more failed" not in told


def test_other_tests_come_before_more_cases_of_one_already_shown():
    cases = [("test_a", str(i)) for i in range(6)] + [("test_b", "x"), ("test_c", "y")]
    told = digest(failed(pytest_output(cases)), 450)
    assert "test_b[x]: AssertionError: assert 'x' == 0" in told and "test_c[y]: AssertionError" in told
    assert "test_a[5]: AssertionError" not in told and "more failed: test_a (" in told


@pytest.mark.parametrize("output, first, end", [
    ("=== RUN   TestParse\n--- FAIL: TestParse (0.00s)\n" + "    calc_test.go:9: got 1\n" * 900 + "FAIL\tcalc\t0.01s\n",
     "--- FAIL: TestParse", "FAIL\tcalc\t0.01s"),
    ("TAP version 13\n# Subtest: parses\nnot ok 1 - parses\n" + "  ---\n  error: 'x'\n" * 900 + "# tests 3\n# fail 1\n",
     "not ok 1 - parses", "# fail 1"),
    ("running 3 tests\ntest parses ... FAILED\n" + "thread panicked at src/lib.rs:3\n" * 900
     + "test result: FAILED. 2 passed; 1 failed\n",
     "test parses ... FAILED", "test result: FAILED. 2 passed; 1 failed"),
])
def test_other_runners_long_output_keeps_the_first_failure_and_the_counts(output, first, end):
    told = digest(failed(output), 450)
    assert first in told and end in told and "characters of output not shown" in told
    assert len(told) <= 450 + 60


def test_short_output_of_other_runners_is_shown_whole():
    output = "--- FAIL: TestParse (0.00s)\n    calc_test.go:9: got 1, want 2\nFAIL\n"
    assert digest(failed(output), 450) == output


@pytest.mark.parametrize("output, names", [
    (pytest_output([("test_a", "1"), ("test_b", "2")]), ["test_a[1]", "test_b[2]"]),
    ("FAILED test_x.py::TestCalc::test_add - assert 1 == 2\nFAILED test_x.py::test_sub\n", ["TestCalc::test_add", "test_sub"]),
    ("--- FAIL: TestParse (0.00s)\n    --- FAIL: TestParse/empty (0.00s)\n", ["TestParse", "TestParse/empty"]),
    ("not ok 1 - parses hours\nok 2 - formats\nnot ok 3 - rejects # TODO\n", ["parses hours", "rejects"]),
    ("test tests::parses ... FAILED\ntest tests::formats ... ok\n", ["tests::parses"]),
])
def test_failing_tests_are_named_as_each_runner_prints_them(output, names):
    assert failing_tests(failed(output)) == names


TESTS = '''import pytest

from calc import add


@pytest.mark.parametrize("a, b", [(1, 2)])
def test_add(a, b):
    assert add(a, b) == a + b


def test_passing():  \t
    assert True


class TestMore:
    def test_zero(self):
        assert add(0, 0) == 0
'''


def test_the_failing_tests_source_is_cut_from_the_file_exactly():
    source = failing_source({"test_calc.py": TESTS}, ["test_add[1-2]", "TestMore.test_zero"])
    assert source == {"test_calc.py": TESTS[TESTS.index("@pytest"):TESTS.index("\n\n\ndef test_passing")] + "\n\n"
                      + TESTS[TESTS.index("class TestMore"):].rstrip("\n") + "\n"}
    assert "test_passing" not in source["test_calc.py"]


@pytest.mark.parametrize("tests, names", [
    ({"test_calc.py": TESTS}, ["test_missing"]),  # a name no function carries
    ({"calc_test.go": "func TestAdd(t *testing.T) {}\n"}, ["TestAdd"]),  # another language
    ({"test_calc.py": "def test_add(:\n"}, ["test_add"]),  # a file that does not parse
    ({"test_calc.py": TESTS}, []),
])
def test_the_whole_files_are_shown_when_a_failing_test_cannot_be_found(tests, names):
    assert failing_source(tests, names) is None


def test_the_users_failing_tests_are_not_looked_for_in_the_teams():
    users = {"test_user.py": "def test_theirs():\n    assert False\n"}
    source = failing_source({"test_calc.py": TESTS}, ["test_add[1-2]", "test_theirs"], users)
    assert source is not None and "def test_add" in source["test_calc.py"]
