"""What a run ends with when it ends without a pass: the best version the tests judged, whatever ended it."""

import asyncio

import pytest

from agents import candidates
from agents.candidates import Candidate
from agents.errors import ModelError
from agents.events import BestVersion, Notice, RunFinished
from agents.manager import Budget, Manager, Order, TeamSettings
from agents.run_request import RunRequest
from agents.run_state import Work
from agents.types import Attachment, FileSet, RunStatus, TestReport, TestStatus
from tests.fakes import team_script as s
from tests.fakes.publishers import RecordingPublisher
from tests.fakes.team_script import ScriptedModel, ScriptedSandbox

RIGHT = "found.extend(find_intf(value))"  # the line only the right version has (s.CODE, not s.BUGGY_CODE)


async def run_team(script, sandbox=None, budget=None, model=None, request=None, **settings):
    model = model or ScriptedModel(script)
    publisher = RecordingPublisher()
    manager = Manager(model, sandbox or ScriptedSandbox(), publisher,
                      settings=TeamSettings(budget=budget or Budget(), order=Order.OVERLAPPED, **settings))
    request = request or RunRequest(task="find all intf keys", run_id="r1", conversation_key="terminal:t1")
    events = [event async for event in manager.run(request)]
    return events, publisher


def notices(events):
    return [e.text for e in events if isinstance(e, Notice)]


# Round 1 passes the team's tests and the review asks for a change; the change breaks it, and stays broken.
BROKEN_BY_A_FIX = {**s.happy_path(), "programmer": [s.CODE, s.BUGGY_CODE, s.BUGGY_CODE],
                   "optimizer": [s.CHANGES, s.APPROVE, s.APPROVE], "manager": [s.FIX_CODE] * 2}


async def test_without_user_tests_a_version_that_passed_is_what_the_budget_ends_with_not_a_later_broken_fix():
    events, publisher = await run_team(BROKEN_BY_A_FIX, budget=Budget(max_rounds=3))
    final = events[-1]
    assert isinstance(final, RunFinished) and final.status is RunStatus.STOPPED  # passing tests, an unconvinced review
    assert RIGHT in final.files["intf.py"] and final.report.ok
    assert RIGHT in publisher.publications[-1].files["intf.py"] and publisher.publications[-1].report.ok
    assert "the tests of the version published (round 1) passed (2 passed, 0 failed)" in final.reason
    assert "the review still asks for changes" in final.reason  # the review of round 1's version did
    assert candidates.BEST_NOTICE.format(round=1, summary="2 passed, 0 failed") in notices(events)


async def test_the_best_version_is_told_as_it_changes_and_not_again_when_it_does_not():
    events, _ = await run_team(BROKEN_BY_A_FIX, budget=Budget(max_rounds=3))
    told = [e for e in events if isinstance(e, BestVersion)]
    assert [(e.round, e.report.ok) for e in told] == [(1, True)]  # rounds 2 and 3 did worse
    assert RIGHT in told[0].files["intf.py"] and "test_intf.py" in told[0].tests


def _after_the_first_test_run(failure):
    """A sandbox that passes or fails as usual once, then raises ``failure``."""
    def verdict(job):
        if len(sandbox.jobs) > 1:
            raise failure
        return ScriptedSandbox().verdict(job)
    sandbox = ScriptedSandbox(verdict)
    return sandbox


@pytest.mark.parametrize("ending", ["model error", "internal error"])
async def test_a_run_that_ends_in_error_ends_with_the_best_version_tested_not_its_later_files(ending):
    if ending == "model error":  # round 2's fix is tested and fails; round 3's call to the model fails
        script = {**BROKEN_BY_A_FIX, "programmer": [s.CODE, s.BUGGY_CODE, ModelError("the endpoint answered 500")]}
        sandbox = None
    else:  # round 2's fix is written, and its test run breaks in a way no one expected
        script, sandbox = BROKEN_BY_A_FIX, _after_the_first_test_run(RuntimeError("a bug"))
    events, publisher = await run_team(script, sandbox=sandbox, budget=Budget(max_rounds=3))
    final = events[-1]
    assert final.status is RunStatus.ERROR and RIGHT in final.files["intf.py"] and final.report.ok
    assert final.reason.endswith("the files are the version of round 1, the best the tests judged (2 passed, 0 failed)")
    kept_said = candidates.BEST_NOTICE.format(round=1, summary="2 passed, 0 failed") in notices(events)
    assert kept_said == (ending == "model error")  # said when a later version was tested, and did worse
    assert publisher.publications == []  # an error publishes nothing, as before
    if ending == "model error":  # the error's own sentence comes first, whole
        assert final.reason == ("the endpoint answered 500; the files are the version of round 1, the best the tests "
                                "judged (2 passed, 0 failed)")


def test_the_version_an_error_ended_with_follows_the_errors_own_sentence():
    report = TestReport(TestStatus.PASSED, 0, 0.1, 1, 0)
    assert candidates.handed_back("The endpoint kept failing.", 2, report) == (
        "The endpoint kept failing. The files are the version of round 2, the best the tests judged (1 passed, 0 failed).")


async def test_an_error_after_a_version_passed_the_users_tests_ends_with_that_version():
    user_test = Attachment("test_user.py", "from intf import find_intf\n\ndef test_user():\n    assert find_intf({}) == []\n")

    def verdict(job):  # the user's tests alone pass only the right code; the team's wrong test fails every version
        users_only = "test_intf.py" not in job.files
        ok = RIGHT in job.files["intf.py"]
        if users_only:
            return TestReport(TestStatus.PASSED if ok else TestStatus.FAILED, 0 if ok else 1, 0.1, int(ok), int(not ok))
        return TestReport(TestStatus.FAILED, 1, 0.1, 1 + int(ok), 1 + int(not ok))

    script = {**s.happy_path(), "tester": [s.WRONG_TESTS], "optimizer": [s.APPROVE] * 2, "manager": [s.FIX_CODE],
              "programmer": [s.CODE, s.BUGGY_CODE, ModelError("the endpoint answered 500")]}
    request = RunRequest(task="find all intf keys", run_id="r1", attachments=(user_test,))
    events, _ = await run_team(script, sandbox=ScriptedSandbox(verdict), request=request, budget=Budget(max_rounds=4))
    final = events[-1]
    assert final.status is RunStatus.ERROR and RIGHT in final.files["intf.py"]
    assert "the files are the version of round 1" in final.reason and "test_user.py" in final.tests


async def test_a_budget_that_ends_during_the_review_says_the_review_did_not_finish():
    class SlowReviewer(ScriptedModel):
        async def stream(self, role, messages, temperature=None):
            if role == "optimizer":
                await asyncio.sleep(2)
            async for piece in super().stream(role, messages, temperature):
                yield piece

    events, publisher = await run_team({**s.happy_path()}, model=SlowReviewer(s.happy_path()),
                                       budget=Budget(max_wall_s=0.5))
    final = events[-1]
    assert final.status is RunStatus.STOPPED and "during the optimizer's turn" in final.reason
    assert final.reason.endswith("the tests passed (2 passed, 0 failed) but the review did not finish")
    assert publisher.publications[-1].review == ""  # no review of this version was given


async def test_a_failing_version_kept_over_the_last_one_is_labelled_as_the_one_published():
    """The reason's figures are the kept version's: they are not called the last test run."""
    script = {**s.happy_path(), "programmer": [s.BUGGY_CODE, s.BUGGY_CODE.replace("return found", "return found[:0]")],
              "optimizer": [s.APPROVE] * 2, "manager": [s.FIX_CODE] * 2}

    def verdict(job):  # round 1 fails one test, round 2 both
        failed = 2 if "found[:0]" in job.files["intf.py"] else 1
        return TestReport(TestStatus.FAILED, 1, 0.1, 2 - failed, failed)

    events, _ = await run_team(script, sandbox=ScriptedSandbox(verdict), budget=Budget(max_rounds=2))
    final = events[-1]
    assert final.status is RunStatus.FAILED and "found[:0]" not in final.files["intf.py"]
    assert final.reason.endswith("the test run of the version published (round 1): 1 passed, 1 failed")
    assert "the last test run" not in final.reason


def _candidate(tests, failed, users_failed=0, round_=1):
    report = TestReport(TestStatus.PASSED if not failed else TestStatus.FAILED, int(bool(failed)), 0.1, 1, failed)
    work = Work(FileSet({"a.py": f"# round {round_}"}), FileSet({"test_a.py": tests}))
    return Candidate(work, report, candidates.misses(report), users_failed, round_)


def test_versions_are_compared_by_the_teams_tests_only_when_the_same_tests_judged_them():
    passed_old_tests = _candidate("old", 0, round_=1)  # the tests that passed it were replaced (wrong, or a new plan)
    best_of_new = _candidate("new", 1, round_=2)
    worse_of_new = _candidate("new", 2, round_=3)
    assert candidates.best([passed_old_tests, best_of_new, worse_of_new], first_of_equals=False) is best_of_new
    # The tests no model wrote never change: a version that passed them beats any that failed them.
    users_passed = _candidate("old", 3, users_failed=0, round_=1)
    users_failed = _candidate("new", 0, users_failed=1, round_=2)
    assert candidates.best([users_passed, users_failed], first_of_equals=True) is users_passed


def test_of_equals_the_latest_is_kept_unless_tests_no_model_wrote_judge_the_run():
    first, second = _candidate("same", 1, round_=1), _candidate("same", 1, round_=2)
    assert candidates.best([first, second], first_of_equals=False) is second
    assert candidates.best([first, second], first_of_equals=True) is first
    assert candidates.best([], first_of_equals=False) is None
