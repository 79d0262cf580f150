"""Telling generated tests that could not run from tests that ran, on reports the real sandbox produced
(tests/agents/corpus/test_reports.json: each language's runner on broken tests, on no tests, and on
broken code under good tests)."""

import json
from pathlib import Path

import pytest

from agents.language import BUILT_IN
from agents.test_health import code_lacks, unrunnable_tests
from agents.types import TestReport, TestStatus

RECORDED = json.loads((Path(__file__).parent / "corpus" / "test_reports.json").read_text())
LANGUAGES = {"py": "python", "go": "go", "js": "javascript", "rust": "rust", "java": "java", "c": "c", "bash": "bash"}
TEAM_TESTS = {"py": ["test_calc.py"], "go": ["calc_test.go"], "js": ["calc.test.js"], "rust": ["tests/calc.rs"],
              "java": ["CalcTest.java"], "c": ["test_calc.c"], "bash": ["test_main.sh"]}


def recorded(name):
    case = RECORDED[name]
    stdout, _, stderr = case["out"].partition("\n--stderr--\n")
    return TestReport(TestStatus(case["status"]), case["exit"], 0.1, case["passed"], case["failed"], stdout, stderr)


def verdict(name, tests=None):
    prefix = name.split("-")[0]
    return unrunnable_tests(recorded(name), LANGUAGES[prefix], TEAM_TESTS[prefix] if tests is None else tests,
                            BUILT_IN)


@pytest.mark.parametrize("name", ["py-notests", "go-notests", "js-notests", "rust-notests", "java-notests",
                                  "bash-notests"])
def test_nothing_collected_is_named_with_how_that_runner_finds_tests(name):
    why = verdict(name)
    assert why.startswith("no test ran (") and "test" in why.split("(", 1)[1]


@pytest.mark.parametrize("name, place, words", [
    ("py-syntax", "test_calc.py", "SyntaxError"),
    ("py-importmissing", "test_calc.py", "No module named 'calculator'"),
    ("py-importname", "test_calc.py", "cannot import name 'check_add' from 'calc'"),
    ("go-testcompile", "calc_test.go", "undefined: x"),
    ("js-syntax", "calc.test.js", "SyntaxError"),
    ("js-requiremissing", "calc.test.js", "Cannot find module './calculator'"),
    ("rust-testcompile", "tests/calc.rs", "cannot find value `x`"),
    ("java-testcompile", "CalcTest.java", "')' expected"),
    ("c-testcompile", "test_calc.c", "expected ‘;’"),
    ("bash-syntax", "test_main.sh", "syntax error"),
])
def test_a_test_file_that_cannot_compile_or_load_is_named_with_its_error(name, place, words):
    why = verdict(name)
    assert why.startswith(f"{place} could not be compiled or loaded") and words in why


@pytest.mark.parametrize("name", ["py-code-syntax", "go-codecompile"])
def test_an_error_in_the_code_under_test_is_not_the_tests_fault(name):
    assert verdict(name) == ""


def test_the_users_tests_are_not_the_teams_to_fix():
    assert verdict("py-syntax", tests=["test_other.py"]) == ""
    assert verdict("py-notests", tests=[]) == ""


def test_tests_that_ran_are_healthy_whatever_their_outcome():
    failing = TestReport(TestStatus.FAILED, 1, 0.1, 1, 1, "FAILED test_calc.py::test_add - assert 2 == 3\n1 failed, 1 passed")
    passing = TestReport(TestStatus.PASSED, 0, 0.1, 3, 0, "3 passed in 0.01s")
    timeout = TestReport(TestStatus.TIMEOUT, None, 30.0)
    assert [unrunnable_tests(r, "python", ["test_calc.py"], BUILT_IN) for r in (failing, passing, timeout)] == ["", "", ""]


@pytest.mark.parametrize("why", [
    "the test command exited 0, but its runner showed no test that ran and passed",
    "the runner's report of the tests is missing or incomplete (it is missing): something ended the run",
])
def test_a_run_that_exited_0_without_a_test_seen_passing_goes_back_to_the_tester_with_why(why):
    report = TestReport(TestStatus.FAILED, 0, 0.1, 0, 0, "ok  \tsandbox\t0.01s\n", f"\n[sandbox] not a pass: {why}")
    said = unrunnable_tests(report, "go", ["calc_test.go"], BUILT_IN)
    assert said.startswith("no test ran (go test runs func TestXxx") and why in said


NOT_RUN = ("[sandbox] not a pass: one of the team's tests did not run: test_calc::test_sub (a skipped test proves "
           "nothing: remove the skip, or the test)")


@pytest.mark.parametrize(("failed", "sent_back"), [(0, True), (1, False)])
def test_team_tests_that_did_not_run_go_back_to_the_tester_unless_others_failed(failed, sent_back):
    """A failing test beside them may be the code's fault: then the failure is triaged as usual."""
    report = TestReport(TestStatus.FAILED, 0 if not failed else 1, 0.1, 1, failed, ".s\n", "\n" + NOT_RUN)
    why = unrunnable_tests(report, "python", ["test_calc.py"], BUILT_IN)
    assert (why == NOT_RUN.removeprefix("[sandbox] not a pass: ")) is sent_back, why



def test_a_team_pass_that_ran_no_test_beside_the_users_passing_tests_goes_back_to_the_tester():
    """The counts are the user's tests' alone ("3 passed, 0 failed"): only the sandbox's sentence says the team's
    file held no test, and a triage would have sent correct code back to the Programmer."""
    said = "[sandbox] not a pass: none of the team's tests ran: \"no tests ran\""
    report = TestReport(TestStatus.FAILED, 5, 0.1, 3, 0, "== the user's tests ==\n...\n3 passed in 0.1s\n", said)
    assert unrunnable_tests(report, "python", ["test_team.py"], BUILT_IN) == (
        "no test ran (pytest runs functions named test_* in files named test_*.py or *_test.py): \"no tests ran\"")
    assert unrunnable_tests(TestReport(TestStatus.FAILED, 1, 0.1, 3, 0, "", ""), "python", ["test_team.py"],
                            BUILT_IN) == ""  # no sentence: nothing to say of the team's tests

def import_failure(error):
    return TestReport(TestStatus.FAILED, 2, 0.1, 0, 1, f"test_parity.py:1: in <module>\nE   {error}\n1 error in 0.3s")


@pytest.mark.parametrize("error, named, certain", [
    ("ImportError: cannot import name 'is_even' from 'parity' (/work/parity.py)", "is_even(n) in parity.py", True),
    ("ImportError: cannot import name 'is_even' from 'parity' (/work/parity.py)", "tell even numbers", False),
    ("ModuleNotFoundError: No module named 'parity'", "Write is_even(n) in parity.py.", True),
])
def test_an_import_of_what_the_code_lacks_is_the_codes_to_fix(error, named, certain):
    code = ["even.py"] if "No module" in error else ["parity.py"]
    lacks = code_lacks(import_failure(error), code, named)
    assert lacks is not None and lacks.certain is certain and "parity" in lacks.reason


@pytest.mark.parametrize("error", ["ImportError: cannot import name 'mod2' from 'helpers' (/work/helpers.py)",
                                   "ModuleNotFoundError: No module named 'solution'"])
def test_an_import_of_what_nobody_named_is_the_tests_to_fix_until_a_rewrite_leaves_it_failing(error):
    report = import_failure(error)
    assert code_lacks(report, ["parity.py"], "Write is_even(n) in parity.py.") is None
    assert code_lacks(report, ["parity.py"], "", before=import_failure(error), tests_rewritten=False) is None
    again = code_lacks(report, ["parity.py"], "", before=import_failure(error), tests_rewritten=True)
    assert again is not None and not again.certain
