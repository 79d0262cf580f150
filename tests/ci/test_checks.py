"""Which checks count and what they add up to: required ones when known, never the bot's own status."""

from bot.ci.checks import OWN_CONTEXT, Check, CheckState, judge, run_state, status_state

PASS, FAIL, WAIT = CheckState.PASSED, CheckState.FAILED, CheckState.PENDING


def test_every_check_counts_without_required_ones_and_one_pending_keeps_it_pending():
    checks = [Check("tests", PASS), Check("lint", WAIT)]
    assert judge(checks, None).state is WAIT
    assert judge(checks, None).detail() == "1 of 2 checks done"
    assert judge([Check("tests", PASS), Check("lint", PASS)], None).detail() == "2 checks passed"


def test_a_failure_is_the_verdict_once_every_counted_check_is_done():
    verdict = judge([Check("tests", FAIL, conclusion="failure"), Check("lint", PASS)], None)
    assert verdict.state is FAIL and [c.name for c in verdict.failed] == ["tests"]
    assert verdict.detail() == "failed: tests"


def test_only_required_checks_count_and_a_missing_one_is_waited_for():
    checks = [Check("tests", PASS), Check("flaky-optional", FAIL, conclusion="failure")]
    assert judge(checks, frozenset({"tests"})).state is PASS
    verdict = judge(checks, frozenset({"tests", "build"}))
    assert verdict.state is WAIT and verdict.missing == ("build",)


def test_the_bots_own_status_never_counts_even_when_required():
    mine = Check(OWN_CONTEXT, FAIL, "status", conclusion="failure")
    assert judge([mine, Check("tests", PASS)], frozenset({OWN_CONTEXT, "tests"})).state is PASS
    assert judge([mine], None).state is WAIT  # nothing else on the commit: no CI has reported yet


def test_a_re_run_replaces_the_earlier_run_of_the_same_check():
    checks = [Check("tests", FAIL, conclusion="failure", id=1), Check("tests", PASS, id=2)]
    assert judge(checks, None).state is PASS


def test_github_words_become_states_and_only_code_failures_are_fixable():
    assert run_state("in_progress", None) is WAIT and run_state("completed", "skipped") is PASS
    assert run_state("completed", "timed_out") is FAIL and status_state("error") is FAIL
    assert Check("t", FAIL, conclusion="failure").fixable and not Check("t", FAIL, conclusion="cancelled").fixable
    assert Check("ci/jenkins", FAIL, "status", conclusion="error").fixable


def test_the_bots_status_says_what_the_sandboxs_tests_said():
    from agents.types import FileSet, Publication, RunStatus, TestReport, TestStatus
    from bot.repos.commit_status import tests_status

    def publication(status, report):
        return Publication("r1", "k", "task", status, FileSet(), "", report)

    passed = TestReport(TestStatus.PASSED, 0, 1.0, 3, 0)
    assert tests_status(publication(RunStatus.PASSED, passed)) == ("success", "The sandbox's tests passed: 3 passed, 0 failed")
    assert tests_status(publication(RunStatus.FAILED, TestReport(TestStatus.FAILED, 1, 1.0, 2, 1)))[0] == "failure"
    assert tests_status(publication(RunStatus.FAILED, TestReport(TestStatus.TIMEOUT)))[0] == "error"
    assert tests_status(publication(RunStatus.ERROR, None)) == ("error", "No test result: the run ended error")
