"""The run's named values and their transitions: who writes next, whose file is whose, what was last said."""

import pytest

from agents.replies import Action, Review, Triage
from agents.run_state import Due, Spent, Standing, Work
from agents.types import FileSet, TestReport, TestStatus, Usage

FAILED = TestReport(TestStatus.FAILED, 1, 0.1, 0, 1, "1 failed")
PASSED = TestReport(TestStatus.PASSED, 0, 0.1, 1, 0, "1 passed")


def test_a_new_run_has_both_the_programmer_and_the_tester_write():
    assert Due() == Due(code=True, tests=True)
    assert Due().code_written().tests_written() == Due(code=False, tests=False)


@pytest.mark.parametrize("action, due", [
    (Action.FIX_TESTS, Due(code=False, tests=True)),  # the code stands; only the test is rewritten
    (Action.REPLAN, Due(code=True, tests=True)),  # tests written for the abandoned plan must not decide
    (Action.FIX_CODE, Due(code=True, tests=False)),
])
def test_after_a_triage_the_decision_says_who_writes_next(action, due):
    assert Due(code=False, tests=False).after(action) == due


def test_fixing_the_code_keeps_a_test_rewrite_already_due():
    assert Due(code=False, tests=True).after(Action.FIX_CODE) == Due(code=True, tests=True)


def test_a_file_the_programmer_writes_is_code_and_one_the_tester_writes_is_a_test():
    work = Work(files=FileSet({"a.py": "1"}), tests=FileSet({"helper.py": "h"}), user_tests=FileSet({"test_u.py": "u"}))
    coded = work.coded(FileSet({"helper.py": "code now"}))
    assert dict(coded.files) == {"a.py": "1", "helper.py": "code now"} and not coded.tests
    tested = coded.tested_by(FileSet({"a.py": "a test now"}))
    assert dict(tested.files) == {"helper.py": "code now"} and dict(tested.tests) == {"a.py": "a test now"}
    assert tested.user_tests == work.user_tests and set(tested.everything()) == {"helper.py", "a.py", "test_u.py"}
    assert dict(work.files) == {"a.py": "1"}  # each transition is a new value: the old one is what it was


def test_the_failure_shown_is_the_last_failing_report_with_the_managers_reading():
    standing = Standing().with_report(FAILED).with_triage(Triage(Action.FIX_CODE, "off by one"))
    assert standing.failure() == (FAILED, "off by one")
    assert Standing().with_report(PASSED).failure() == (None, "")
    assert Standing().failure() == (None, "")


def test_only_a_review_asking_for_changes_is_shown_as_changes_asked():
    assert Standing().with_review(Review(False, "fix x")).changes_asked() == "fix x"
    assert Standing().with_review(Review(True, "fine")).changes_asked() == ""
    assert Standing().tests_written(saved=False).no_tests and not Standing().tests_written(saved=True).no_tests


def test_the_budget_counters_only_grow():
    spent = Spent().next_round().next_round().replanned().plus(Usage(10, 5)).plus(Usage(1, 1))
    assert (spent.rounds, spent.replans, spent.usage.total_tokens) == (2, 1, 17)
