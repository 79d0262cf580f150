"""The Manager's workflow end to end over an in-process model and a Sandbox double."""

import pytest

from agents.events import CheckedIn, Notice, RunFinished, RunStarted, TestReported, TextDelta, TurnFinished, TurnStarted
from agents.manager import Budget, Manager, TeamSettings
from agents.types import Attachment, FileSet, PriorWork, RunRequest, RunStatus, TestReport, TestStatus
from tests.fakes import team_script as s
from tests.fakes.publishers import RecordingPublisher
from tests.fakes.team_script import ScriptedModel, ScriptedSandbox


async def run_team(script, sandbox=None, publisher=None, budget=None, publish_failed=True, request=None, clock=None):
    model = ScriptedModel(script)
    sandbox = sandbox or ScriptedSandbox()
    publisher = publisher or RecordingPublisher()
    settings = TeamSettings(budget=budget or Budget(), publish_failed=publish_failed, conversation_key="terminal:t1")
    manager = Manager(model, sandbox, publisher, settings=settings, **({"clock": clock} if clock else {}))
    request = request or RunRequest(task="find all intf keys", run_id="r1")
    events = [event async for event in manager.run(request)]
    return events, model, sandbox, publisher


def turns(events):
    return [e.agent for e in events if isinstance(e, TurnFinished)]


async def test_happy_path_plans_codes_reviews_tests_and_checks_in():
    events, model, sandbox, publisher = await run_team(s.happy_path())
    assert isinstance(events[0], RunStarted)
    assert turns(events) == ["planner", "programmer", "optimizer", "tester", "checkin"]
    final = events[-1]
    assert isinstance(final, RunFinished) and final.status is RunStatus.PASSED
    assert list(final.files) == ["intf.py"] and list(final.tests) == ["test_intf.py"]
    assert final.checkin and final.checkin.location == "memory://r1"
    published = publisher.publications[0]
    assert published.status is RunStatus.PASSED and set(published.files) == {"intf.py", "test_intf.py"}
    assert published.readme.startswith("# find_intf") and published.conversation_key == "terminal:t1"
    assert sandbox.jobs[0].language == "python"


async def test_every_turn_streams_and_is_bracketed_in_order():
    events, *_ = await run_team(s.happy_path())
    kinds = [type(e) for e in events]
    assert kinds.index(TurnStarted) < kinds.index(TextDelta) < kinds.index(TurnFinished)
    programmer_text = "".join(e.text for e in events if isinstance(e, TextDelta) and e.agent == "programmer")
    assert programmer_text == s.CODE
    assert [type(e) for e in events if isinstance(e, (TestReported, CheckedIn, RunFinished))] == [
        TestReported, CheckedIn, RunFinished]
    assert sum(isinstance(e, RunFinished) for e in events) == 1


async def test_failing_tests_go_back_to_the_programmer_who_fixes_the_code():
    script = {**s.happy_path(), "programmer": [s.BUGGY_CODE, s.CODE], "optimizer": [s.APPROVE, s.APPROVE],
              "manager": [s.FIX_CODE]}
    events, model, sandbox, _ = await run_team(script)
    assert turns(events) == ["planner", "programmer", "optimizer", "tester", "manager",
                             "programmer", "optimizer", "checkin"]
    reports = [e.report for e in events if isinstance(e, TestReported)]
    assert [r.status for r in reports] == [TestStatus.FAILED, TestStatus.PASSED]
    assert events[-1].status is RunStatus.PASSED
    second_programmer_prompt = [p for role, p in model.prompts if role == "programmer"]
    assert len(second_programmer_prompt) == 2


async def test_a_wrong_generated_test_is_fixed_by_the_tester_not_the_code():
    script = {**s.happy_path(), "tester": [s.WRONG_TESTS, s.TESTS], "manager": [s.FIX_TESTS]}
    events, model, sandbox, _ = await run_team(script)
    assert turns(events).count("tester") == 2
    assert turns(events).count("programmer") == 1  # the code stood; only the test was rewritten
    assert events[-1].status is RunStatus.PASSED
    assert '[("intf", "x"), ("intf", "y")]' in events[-1].tests["test_intf.py"]


async def test_review_changes_go_back_to_the_programmer_before_any_test_runs():
    script = {**s.happy_path(), "programmer": [s.BUGGY_CODE, s.CODE], "optimizer": [s.CHANGES, s.APPROVE]}
    events, _, sandbox, _ = await run_team(script)
    assert turns(events)[:4] == ["planner", "programmer", "optimizer", "programmer"]
    assert len(sandbox.jobs) == 1 and events[-1].status is RunStatus.PASSED


async def test_an_unreadable_reply_gets_one_format_reminder():
    script = {**s.happy_path(), "programmer": ["Sure! I will write it now.", s.CODE]}
    events, model, *_ = await run_team(script)
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert any("programmer's reply could not be read" in n for n in notices)
    assert events[-1].status is RunStatus.PASSED


async def test_a_reply_unreadable_twice_ends_the_run_with_a_clear_error():
    script = {**s.happy_path(), "programmer": ["no code here", "still no code"]}
    events, *_ = await run_team(script)
    final = events[-1]
    assert final.status is RunStatus.ERROR
    assert "programmer replied twice in a form the team cannot read" in final.reason
    assert "no fenced code block" in final.reason


async def test_round_budget_ends_failed_with_the_failing_output_and_publishes_the_best_attempt():
    script = {**s.happy_path(), "programmer": [s.BUGGY_CODE] * 3, "optimizer": [s.APPROVE] * 3,
              "manager": [s.FIX_CODE] * 3}
    events, _, sandbox, publisher = await run_team(script, budget=Budget(max_rounds=2))
    final = events[-1]
    assert final.status is RunStatus.FAILED
    assert "all 2 rounds" in final.reason and "1 passed, 1 failed" in final.reason
    assert "FAILED test_intf.py::test_nested" in final.report.output()
    assert len(sandbox.jobs) == 2
    assert publisher.publications[-1].status is RunStatus.FAILED


async def test_publish_failed_false_keeps_a_failing_run_unpublished():
    script = {**s.happy_path(), "programmer": [s.BUGGY_CODE] * 2, "manager": [s.FIX_CODE] * 2}
    events, _, _, publisher = await run_team(script, budget=Budget(max_rounds=1), publish_failed=False)
    assert events[-1].status is RunStatus.FAILED and publisher.publications == []


async def test_budget_out_before_any_test_is_stopped_not_failed():
    script = {**s.happy_path(), "optimizer": [s.CHANGES] * 5}
    events, _, sandbox, publisher = await run_team(script, budget=Budget(max_rounds=2))
    final = events[-1]
    assert final.status is RunStatus.STOPPED and "no tested code yet" in final.reason
    assert sandbox.jobs == [] and publisher.publications == []


async def test_token_budget_stops_the_run():
    events, *_ = await run_team(s.happy_path(), budget=Budget(max_tokens=300))
    final = events[-1]
    assert final.status in (RunStatus.STOPPED, RunStatus.FAILED) and "token budget" in final.reason


async def test_wall_time_budget_stops_the_run():
    ticks = iter(range(0, 10_000, 100))
    events, *_ = await run_team(s.happy_path(), budget=Budget(max_wall_s=250), clock=lambda: float(next(ticks)))
    assert events[-1].status is RunStatus.STOPPED and "time budget" in events[-1].reason


async def test_user_tests_are_authoritative_and_never_rewritten():
    user_test = "from intf import find_intf\n\ndef test_user():\n    assert find_intf({}) == []\n"
    tester_reply = s.TESTS + "\n```python path=test_user.py\ndef test_user():\n    assert True\n```\n"
    script = {**s.happy_path(), "tester": [tester_reply]}
    request = RunRequest(task="t", run_id="r1", attachments=(Attachment("test_user.py", user_test),))
    events, _, sandbox, _ = await run_team(script, request=request)
    assert sandbox.jobs[0].files["test_user.py"] == user_test
    assert events[-1].tests["test_user.py"] == user_test


async def test_fix_tests_is_refused_when_only_user_tests_exist():
    from agents.manager import Manager as M
    from agents.replies import Action, Triage

    assert M._allowed(Triage(Action.FIX_TESTS, "x"), can_fix_tests=False, can_replan=True).action is Action.FIX_CODE
    assert M._allowed(Triage(Action.REPLAN, "x"), can_fix_tests=True, can_replan=False).action is Action.FIX_CODE


async def test_replan_asks_the_planner_again_once():
    script = {**s.happy_path(), "planner": [s.PLAN, s.PLAN], "programmer": [s.BUGGY_CODE, s.CODE],
              "manager": ["The approach is wrong.\nDECISION: replan"]}
    events, *_ = await run_team(script, budget=Budget(max_replans=1))
    assert turns(events).count("planner") == 2 and events[-1].status is RunStatus.PASSED


async def test_a_follow_up_starts_from_the_previous_files_and_tasks():
    prior = PriorWork(tasks=("find all intf keys",), plan=s.PLAN, files=FileSet({"intf.py": "old\n"}), language="python")
    request = RunRequest(task="now make it async", run_id="r2", prior=prior)
    events, model, *_ = await run_team(s.happy_path(), request=request)
    assert events[-1].status is RunStatus.PASSED
    assert turns(events)[0] == "planner"


async def test_attached_source_files_become_the_starting_code():
    request = RunRequest(task="write tests for this", run_id="r1", attachments=(Attachment("intf.py", "x = 1\n"),))
    events, model, *_ = await run_team(s.happy_path(), request=request)
    assert events[-1].status is RunStatus.PASSED


async def test_a_sandbox_that_cannot_run_ends_the_run_with_an_error():
    from agents.errors import SandboxError

    class Down:
        async def run(self, job):
            raise SandboxError("Docker is not reachable: start the Docker daemon.")

    events, *_ = await run_team(s.happy_path(), sandbox=Down())
    assert events[-1].status is RunStatus.ERROR and "Docker is not reachable" in events[-1].reason
    assert list(events[-1].files) == ["intf.py"]  # what was written is kept


async def test_a_failed_check_in_keeps_the_run_passed_and_says_so():
    events, *_ = await run_team(s.happy_path(), publisher=RecordingPublisher(fail=True))
    assert events[-1].status is RunStatus.PASSED and events[-1].checkin is None
    assert any("Check-in failed" in e.text for e in events if isinstance(e, Notice))


@pytest.mark.parametrize("rounds", [5])
async def test_prompt_size_stays_flat_across_rounds(rounds):
    script = {**s.happy_path(), "programmer": [s.BUGGY_CODE] * rounds + [s.CODE],
              "optimizer": [s.APPROVE] * (rounds + 1), "manager": [s.FIX_CODE] * rounds}
    events, model, *_ = await run_team(script, budget=Budget(max_rounds=rounds + 1))
    assert events[-1].status is RunStatus.PASSED
    programmer = [chars for role, chars in model.prompts if role == "programmer"]
    assert max(programmer[1:]) - min(programmer[1:]) < 200  # round 2 and round 6 see the same kind of input


def test_the_failing_report_summary_reads_well():
    report = TestReport(TestStatus.FAILED, 1, 0.2, 12, 1, "x")
    assert report.summary() == "12 passed, 1 failed"
    assert TestReport(TestStatus.TIMEOUT, None, 30.0).summary() == "tests timed out after 30s"
