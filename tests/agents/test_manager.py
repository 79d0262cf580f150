"""The Manager's workflow end to end over an in-process model and a Sandbox double."""

import asyncio
import re

import pytest

from agents import candidates
from agents.events import (
    CheckedIn,
    Decided,
    Notice,
    Planned,
    ReadmeWritten,
    Reviewed,
    RunFinished,
    RunStarted,
    TestReported,
    TextDelta,
    TurnFinished,
    TurnStarted,
)
from agents.manager import Budget, Manager, Order, TeamSettings
from agents.replies import Action
from agents.run_request import RunRequest
from agents.types import Attachment, FileSet, PriorWork, RunStatus, TestReport, TestStatus
from tests.fakes import team_script as s
from tests.fakes.publishers import RecordingPublisher
from tests.fakes.team_script import ScriptedModel, ScriptedSandbox

SEQUENTIAL, OVERLAPPED = Order.SEQUENTIAL, Order.OVERLAPPED


@pytest.fixture(params=list(Order))
def order(request):
    """Both orders: what a run ends with, and what each agent is shown, must not depend on the order."""
    return request.param


async def run_team(script, sandbox=None, publisher=None, budget=None, publish_failed=True, request=None, clock=None,
                   order=OVERLAPPED, **settled):
    model = ScriptedModel(script)
    sandbox = sandbox or ScriptedSandbox()
    publisher = publisher or RecordingPublisher()
    settings = TeamSettings(budget=budget or Budget(), publish_failed=publish_failed, order=order, **settled)
    manager = Manager(model, sandbox, publisher, settings=settings, **({"clock": clock} if clock else {}))
    request = request or RunRequest(task="find all intf keys", run_id="r1", conversation_key="terminal:t1")
    events = [event async for event in manager.run(request)]
    return events, model, sandbox, publisher


def turns(events):
    return [e.agent for e in events if isinstance(e, TurnFinished)]


@pytest.mark.parametrize("order, expected", [
    (SEQUENTIAL, ["planner", "programmer", "optimizer", "tester", "checkin"]),
    (OVERLAPPED, ["planner", "programmer", "tester", "optimizer", "checkin"]),  # tests written beside the code
])
async def test_happy_path_plans_codes_reviews_tests_and_checks_in(order, expected):
    events, model, sandbox, publisher = await run_team(s.happy_path(), order=order)
    assert isinstance(events[0], RunStarted)
    assert turns(events) == expected
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


@pytest.mark.parametrize("order, expected", [
    (SEQUENTIAL, ["planner", "programmer", "optimizer", "tester", "manager", "programmer", "optimizer", "checkin"]),
    (OVERLAPPED, ["planner", "programmer", "tester", "optimizer", "manager", "programmer", "optimizer", "checkin"]),
])
async def test_failing_tests_go_back_to_the_programmer_who_fixes_the_code(order, expected):
    script = {**s.happy_path(), "programmer": [s.BUGGY_CODE, s.CODE], "optimizer": [s.APPROVE, s.APPROVE],
              "manager": [s.FIX_CODE]}
    events, model, sandbox, _ = await run_team(script, order=order)
    assert turns(events) == expected
    reports = [e.report for e in events if isinstance(e, TestReported)]
    assert [r.status for r in reports] == [TestStatus.FAILED, TestStatus.PASSED]
    assert events[-1].status is RunStatus.PASSED
    second_programmer_prompt = [p for role, p in model.prompts if role == "programmer"]
    assert len(second_programmer_prompt) == 2


async def test_each_turn_carries_what_it_decided_as_the_workflow_read_it(order):
    def meanings(events):
        return {(e.agent, e.round): e.meaning for e in events if isinstance(e, TurnFinished)}

    script = {**s.happy_path(), "programmer": [s.BUGGY_CODE, s.CODE], "optimizer": [s.APPROVE, s.APPROVE],
              "manager": [s.FIX_CODE]}
    events, *_ = await run_team(script, order=order)
    meant = meanings(events)
    assert meant[("planner", 0)] == Planned("python", s.PLAN.removesuffix("LANGUAGE: python"))
    assert meant[("optimizer", 1)] == Reviewed(True, "The code is correct and handles nesting.")
    assert meant[("manager", 1)] == Decided(Action.FIX_CODE, "The code stops at the first level.")
    assert meant[("checkin", 2)] == ReadmeWritten(s.README)
    assert all(meaning is None for (agent, _), meaning in meant.items() if agent in ("programmer", "tester"))
    events, *_ = await run_team({**s.happy_path(), "optimizer": [s.CHANGES, s.APPROVE], "programmer": [s.CODE, s.CODE]},
                                order=order)
    assert meanings(events)[("optimizer", 1)] == Reviewed(False, "find_intf does not recurse into dict values.")


async def test_a_wrong_generated_test_is_fixed_by_the_tester_not_the_code():
    script = {**s.happy_path(), "tester": [s.WRONG_TESTS, s.TESTS], "manager": [s.FIX_TESTS]}
    events, model, sandbox, _ = await run_team(script)
    assert turns(events).count("tester") == 2
    assert turns(events).count("programmer") == 1  # the code stood; only the test was rewritten
    assert events[-1].status is RunStatus.PASSED
    assert '[("intf", "x"), ("intf", "y")]' in events[-1].tests["test_intf.py"]


async def test_review_changes_go_back_to_the_programmer_before_any_test_runs():
    script = {**s.happy_path(), "programmer": [s.BUGGY_CODE, s.CODE], "optimizer": [s.CHANGES, s.APPROVE]}
    events, _, sandbox, _ = await run_team(script, order=SEQUENTIAL)
    assert turns(events)[:4] == ["planner", "programmer", "optimizer", "programmer"]
    assert len(sandbox.jobs) == 1 and events[-1].status is RunStatus.PASSED


async def test_passing_tests_do_not_pass_a_run_whose_review_asks_for_changes():
    script = {**s.happy_path(), "programmer": [s.CODE, s.CODE.replace("found = []", "found = []  # v2")],
              "optimizer": [s.CHANGES, s.APPROVE]}
    events, model, sandbox, publisher = await run_team(script, order=OVERLAPPED)
    assert [job.files["intf.py"].count("# v2") for job in sandbox.jobs] == [0, 1]  # tested again after the fix
    assert turns(events) == ["planner", "programmer", "tester", "optimizer", "programmer", "optimizer", "checkin"]
    assert "find_intf does not recurse" in model.user_prompt("programmer", 1)  # the review's notes, to fix
    assert events[-1].status is RunStatus.PASSED and "# v2" in publisher.publications[0].files["intf.py"]


async def test_an_unreadable_reply_gets_one_format_reminder():
    script = {**s.happy_path(), "programmer": ["Sure! I will write it now.", s.CODE]}
    events, model, *_ = await run_team(script)
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert any("programmer's reply could not be read" in n for n in notices)
    assert events[-1].status is RunStatus.PASSED


async def test_code_unreadable_twice_goes_on_without_it_and_the_tests_show_what_is_missing():
    script = {**s.happy_path(), "programmer": ["no code here", "still no code", s.CODE], "manager": [s.FIX_CODE],
              "optimizer": [s.APPROVE] * 3}
    events, model, sandbox, _ = await run_team(script)
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert any("programmer's reply could not be read again (no fenced code block" in n for n in notices)
    assert "intf.py" not in sandbox.jobs[0].files and sandbox.jobs[1].files["intf.py"]  # tested without, then with
    assert events[-1].status is RunStatus.PASSED
    assert "Nothing was saved from your last reply" in model.user_prompt("programmer", 2)


async def test_an_empty_plan_twice_ends_the_run_with_a_clear_error():
    events, *_ = await run_team({**s.happy_path(), "planner": ["", "  "]})
    final = events[-1]
    assert final.status is RunStatus.ERROR
    assert "planner replied twice in a form the team cannot read (the plan was empty)" in final.reason


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
    script = {**s.happy_path(), "optimizer": [s.CHANGES] * 5, "programmer": [s.CODE] * 2}
    events, _, sandbox, publisher = await run_team(script, budget=Budget(max_rounds=2), order=SEQUENTIAL)
    final = events[-1]
    assert final.status is RunStatus.STOPPED and "no tested code yet" in final.reason
    assert sandbox.jobs == [] and publisher.publications == []


async def test_token_budget_stops_the_run_before_anything_is_tested():
    events, _, sandbox, _ = await run_team(s.happy_path(), budget=Budget(max_tokens=300))
    final = events[-1]
    assert final.status is RunStatus.STOPPED and "token budget ran out" in final.reason and sandbox.jobs == []


async def test_token_budget_after_a_failing_test_ends_failed():
    script = {**s.happy_path(), "programmer": [s.BUGGY_CODE] * 3, "manager": [s.FIX_CODE] * 3}
    events, _, sandbox, publisher = await run_team(script, budget=Budget(max_tokens=1500))
    final = events[-1]
    assert final.status is RunStatus.FAILED and "token budget ran out" in final.reason and len(sandbox.jobs) >= 1
    assert publisher.publications[-1].status is RunStatus.FAILED  # the check-in is owed past the budget


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


async def test_failing_user_tests_send_the_code_back_without_a_triage():
    user_test = "from intf import find_intf\n\ndef test_user():\n    assert find_intf({'intf': 1}) == [('intf', 1)]\n"
    tester_reply = "```python path=test_user.py\ndef test_user():\n    assert True\n```\n"  # only rewrites the user's
    script = {**s.happy_path(), "tester": [tester_reply], "programmer": [s.BUGGY_CODE, s.CODE],
              "manager": ["The user's test is wrong.\nDECISION: fix_tests"], "optimizer": [s.APPROVE] * 2}

    def verdict(job):
        ok = "found.extend(find_intf(value))" in job.files["intf.py"]
        return TestReport(TestStatus.PASSED if ok else TestStatus.FAILED, 0 if ok else 1, 0.1, 1 if ok else 0, 0 if ok else 1)

    request = RunRequest(task="t", run_id="r1", attachments=(Attachment("test_user.py", user_test),))
    for order in (OVERLAPPED, SEQUENTIAL):
        events, model, sandbox, _ = await run_team(script, sandbox=ScriptedSandbox(verdict), request=request, order=order)
        # The user's tests are never the ones to fix, so no Manager is asked: the code is changed at once,
        # and the code that failed them is not reviewed.
        assert "manager" not in turns(events) and turns(events).count("programmer") == 2
        assert turns(events).count("optimizer") == 1 and turns(events).count("tester") == 1
        assert candidates.FIX_REASON in model.user_prompt("programmer", 1)
        assert all(job.files["test_user.py"] == user_test for job in sandbox.jobs)
        assert events[-1].status is RunStatus.PASSED


async def test_replan_asks_the_planner_again_within_its_cap_and_rewrites_the_tests():
    replan = "The approach is wrong.\nDECISION: replan"
    script = {**s.happy_path(), "planner": [s.PLAN, s.PLAN, s.PLAN], "tester": [s.TESTS, s.TESTS], "optimizer": [s.APPROVE] * 3,
              "programmer": [s.BUGGY_CODE, s.BUGGY_CODE, s.CODE], "manager": [replan, replan]}
    events, model, *_ = await run_team(script, budget=Budget(max_replans=1))
    assert turns(events).count("planner") == 2  # the second replan was over the cap: it became fix_code
    assert turns(events).count("tester") == 2  # tests for the abandoned plan were rewritten
    assert "The previous plan did not work out" in model.user_prompt("planner", 1)
    assert events[-1].status is RunStatus.PASSED


async def test_a_follow_up_starts_from_the_previous_files_and_tasks():
    prior = PriorWork(tasks=("find all intf keys",), plan=s.PLAN, files=FileSet({"intf.py": "old\n"}), language="python")
    request = RunRequest(task="now make it async", run_id="r2", prior=prior)
    events, model, *_ = await run_team(s.happy_path(), request=request)
    assert events[-1].status is RunStatus.PASSED
    planner = model.user_prompt("planner")
    assert "- find all intf keys" in planner and "```python path=intf.py\nold" in planner and "now make it async" in planner
    assert "```python path=intf.py\nold" in model.user_prompt("programmer")


async def test_attached_source_files_become_the_starting_code():
    request = RunRequest(task="write tests for this", run_id="r1", attachments=(Attachment("intf.py", "x = 1\n"),))
    events, model, *_ = await run_team(s.happy_path(), request=request)
    assert events[-1].status is RunStatus.PASSED
    assert "```python path=intf.py\nx = 1" in model.user_prompt("planner")
    assert "```python path=intf.py\nx = 1" in model.user_prompt("programmer")  # the starting code


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


async def test_a_pass_is_a_pass_even_when_the_time_budget_ends_during_the_test_run():
    now = [0.0]

    class SlowSandbox(ScriptedSandbox):
        async def run(self, job):
            now[0] += 1000  # the tests take longer than the whole budget
            return await super().run(job)

    events, _, _, publisher = await run_team(s.happy_path(), sandbox=SlowSandbox(), budget=Budget(max_wall_s=500),
                                             clock=lambda: now[0])
    assert events[-1].status is RunStatus.PASSED and publisher.publications[0].status is RunStatus.PASSED


async def test_a_failing_check_in_agent_still_publishes_and_the_run_passes():
    script = {**s.happy_path(), "checkin": ["", "   "]}
    events, _, _, publisher = await run_team(script)
    assert events[-1].status is RunStatus.PASSED
    assert publisher.publications[0].readme == ""  # the publisher writes a plain README
    assert any("Check-In agent failed" in e.text for e in events if isinstance(e, Notice))


async def test_the_best_attempt_published_is_the_code_that_was_tested(order):
    script = {**s.happy_path(), "programmer": [s.BUGGY_CODE, s.BUGGY_CODE.replace("pass", "pass  # v2"), s.CODE],
              "optimizer": [s.APPROVE, s.CHANGES], "manager": [s.FIX_CODE] * 2}
    events, _, sandbox, publisher = await run_team(script, budget=Budget(max_rounds=2), order=order)
    final = events[-1]
    assert final.status is RunStatus.FAILED
    # In order, v2 is never tested (its review asked for changes first); overlapped, it is tested as it is reviewed.
    assert len(sandbox.jobs) == {SEQUENTIAL: 1, OVERLAPPED: 2}[order]
    assert publisher.publications[-1].files["intf.py"] == sandbox.jobs[-1].files["intf.py"] == final.files["intf.py"]


async def test_a_budget_that_ends_with_passing_tests_and_an_unconvinced_review_is_stopped_not_failed():
    script = {**s.happy_path(), "optimizer": [s.CHANGES] * 3, "programmer": [s.CODE] * 3}
    events, _, sandbox, publisher = await run_team(script, budget=Budget(max_rounds=2), order=OVERLAPPED)
    final = events[-1]
    assert final.status is RunStatus.STOPPED and len(sandbox.jobs) == 2
    assert "the tests passed (2 passed, 0 failed) but the review still asks for changes" in final.reason
    assert publisher.publications[-1].status is RunStatus.STOPPED  # never marked as failing tests


async def test_an_unexpected_error_ends_the_run_and_keeps_its_files():
    class Broken:
        async def publish(self, publication):
            raise OSError("disk full")

    events, *_ = await run_team(s.happy_path(), publisher=Broken())
    final = events[-1]
    assert final.status is RunStatus.ERROR and "internal error" in final.reason and list(final.files) == ["intf.py"]


async def test_a_slow_consumer_is_not_cut_by_the_time_budget():
    """The deadline bounds waiting for the model, not what the consumer does with each event."""
    clock = [0.0]
    manager = Manager(ScriptedModel(s.happy_path()), ScriptedSandbox(), RecordingPublisher(),
                      settings=TeamSettings(budget=Budget(max_wall_s=0.5)), clock=lambda: clock[0])
    events = []
    async for event in manager.run(RunRequest(task="t", run_id="r1")):
        events.append(event)
        if isinstance(event, TextDelta) and len(events) < 4:
            await asyncio.sleep(0.6)  # longer than the whole budget, but on the consumer's side
    assert events[-1].status is RunStatus.PASSED


async def test_a_follow_up_asks_the_tester_to_update_its_tests_for_the_new_request():
    prior = PriorWork(tasks=("find all intf keys",), plan=s.PLAN, files=FileSet({"intf.py": "old\n"}),
                      tests=FileSet({"test_intf.py": "old test\n"}), language="python")
    events, model, *_ = await run_team(s.happy_path(), request=RunRequest(task="now async", run_id="r2", prior=prior))
    tester = model.user_prompt("tester")
    assert "## Why the tests must change\nThe user asked for a change" in tester


async def test_the_users_tests_stay_authoritative_in_a_follow_up():
    user_test = "def test_user():\n    assert True\n"
    prior = PriorWork(tasks=("t",), plan=s.PLAN, files=FileSet({"intf.py": "old\n"}),
                      user_tests=FileSet({"test_user.py": user_test}), language="python")
    rewrite = s.TESTS + "\n```python path=test_user.py\ndef test_user():\n    assert False\n```\n"
    events, _, sandbox, _ = await run_team({**s.happy_path(), "tester": [rewrite]},
                                           request=RunRequest(task="now async", run_id="r2", prior=prior))
    assert sandbox.jobs[0].files["test_user.py"] == user_test and events[-1].user_tests["test_user.py"] == user_test


def corpus(name):
    from pathlib import Path

    return (Path(__file__).parent / "corpus" / name).read_text()


async def test_a_team_that_drifts_from_every_format_still_reaches_a_tested_pass():
    script = {"planner": ["Write intf.py with a recursive find_intf(obj)."],  # no LANGUAGE line either
              "programmer": [corpus("prose-one-unnamed-block.md")],
              "optimizer": [corpus("review-says-nothing-either-way.md")],
              "tester": [corpus("tester-one-unnamed-block.md")], "checkin": [s.README]}
    events, model, sandbox, _ = await run_team(script)
    assert events[-1].status is RunStatus.PASSED, events[-1].reason
    assert set(sandbox.jobs[0].files) == {"intf.py", "test_intf.py"}
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert "Programmer: The code block had no file name; it was saved as intf.py." in notices
    assert any(n.startswith("Optimizer: The review gave no verdict") for n in notices)


async def test_a_reminder_shows_the_model_its_own_code_in_the_expected_form():
    own = "def find_intf(obj):\n    return []\n"
    script = {**s.happy_path(), "programmer": [f"```python path=/etc/intf.py\n{own}```", s.CODE]}
    events, model, *_ = await run_team(script)
    assert events[-1].status is RunStatus.PASSED
    second = [messages for role, messages in model.calls if role == "programmer"][1]
    reminder = second[-1].content
    assert f"```python path=intf.py\n{own}```" in reminder and "inside the project" in reminder
    assert second[-2].content.startswith("```python path=/etc/intf.py")  # its own reply, as the assistant's turn


async def test_a_file_a_reply_cannot_write_is_dropped_and_its_author_told_next_time():
    hostile = s.CODE + "\n```ini path=.git/config\n[core]\nfsmonitor = evil\n```\n"
    script = {**s.happy_path(), "programmer": [hostile, s.CODE], "optimizer": [s.CHANGES, s.APPROVE]}
    events, model, sandbox, _ = await run_team(script)
    assert events[-1].status is RunStatus.PASSED and ".git/config" not in sandbox.jobs[0].files
    assert any("Not saved" in e.text and ".git" in e.text for e in events if isinstance(e, Notice))
    assert "## About your last reply\n- Not saved: file path '.git/config'" in model.user_prompt("programmer", 1)


@pytest.mark.parametrize("output", [
    "no tests ran in 0.01s",
    '  File "/work/test_intf.py", line 3\nE     def test_nested()\nE   SyntaxError: expected \':\'',
])
async def test_tests_that_cannot_run_go_back_to_the_tester_without_a_triage(output, order):
    reports = iter([TestReport(TestStatus.FAILED, 5 if "no tests" in output else 2, 0.1, None, None, output),
                    TestReport(TestStatus.PASSED, 0, 0.1, 2, 0, "2 passed in 0.01s")])
    script = {**s.happy_path(), "tester": [s.TESTS, s.TESTS]}
    events, model, sandbox, _ = await run_team(script, sandbox=ScriptedSandbox(lambda job: next(reports)), order=order)
    assert events[-1].status is RunStatus.PASSED
    assert sorted(turns(events)) == sorted(["planner", "programmer", "optimizer", "tester", "tester", "checkin"])
    assert turns(events)[-2:] == ["tester", "checkin"]  # the Tester fixed its tests; no triage, no new code
    assert "The tests could not run" in model.user_prompt("tester", 1)
    assert any("generated tests could not run" in e.text for e in events if isinstance(e, Notice))


PARITY_TESTS = "```python path=test_parity.py\nfrom {module} import is_even\n\n\ndef test_even():\n    assert is_even(4)\n```\n"


def pytest_importing(job):
    """What pytest says of test_parity.py: an import error for a module or a name the code lacks, else a pass."""
    module, name = re.search(r"from (\w+) import (\w+)", job.files["test_parity.py"]).groups()
    if f"{module}.py" not in job.files:
        error = f"E   ModuleNotFoundError: No module named '{module}'"
    elif f"def {name}(" not in job.files[f"{module}.py"]:
        error = f"E   ImportError: cannot import name '{name}' from '{module}' (/work/{module}.py)"
    else:
        return TestReport(TestStatus.PASSED, 0, 0.1, 1, 0, "1 passed in 0.01s")
    return TestReport(TestStatus.FAILED, 2, 0.1, 0, 1, (
        "_______________________ ERROR collecting test_parity.py ________________________\n"
        "ImportError while importing test module '/work/test_parity.py'.\ntest_parity.py:1: in <module>\n"
        f"    from {module} import {name}\n{error}\nERROR test_parity.py\n1 error in 0.32s"))


async def test_tests_importing_a_name_the_task_gives_that_the_code_lacks_send_the_programmer_not_the_tester(order):
    wrong, right = (f"```python path=parity.py\ndef {n}(n):\n    return n % 2 == 0\n```\n"
                    for n in ("iseven", "is_even"))
    script = {**s.happy_path(), "planner": ["1. is_even(n) in parity.py\nLANGUAGE: python"],
              "programmer": [wrong, right], "tester": [PARITY_TESTS.format(module="parity")], "optimizer": [s.APPROVE] * 2}
    request = RunRequest(task="Write is_even(n) in parity.py.", run_id="r1", conversation_key="terminal:t1")
    events, model, _, _ = await run_team(script, sandbox=ScriptedSandbox(pytest_importing), request=request, order=order)
    assert events[-1].status is RunStatus.PASSED, events[-1].reason
    assert sorted(turns(events)) == sorted(["planner", "programmer", "programmer", "tester", "optimizer", "optimizer",
                                            "checkin"])  # no Tester rewrite, no triage
    assert "the tests import is_even from parity.py, as the task or plan names it" in model.user_prompt("programmer", 1)


async def test_an_import_still_failing_after_the_tester_rewrote_the_tests_goes_to_the_triage():
    code = "```python path=parity.py\ndef is_even(n):\n    return n % 2 == 0\n```\n"
    script = {**s.happy_path(), "planner": ["1. parity\nLANGUAGE: python"], "programmer": [code] * 2,
              "tester": [PARITY_TESTS.format(module="helpers"), PARITY_TESTS.format(module="helpers"),
                         PARITY_TESTS.format(module="parity")],
              "optimizer": [s.APPROVE] * 2, "manager": ["The tests import a module nobody wrote.\nDECISION: fix_tests"]}
    request = RunRequest(task="Tell even numbers.", run_id="r1", conversation_key="terminal:t1")
    events, model, _, _ = await run_team(script, sandbox=ScriptedSandbox(pytest_importing), request=request)
    assert turns(events)[:6] == ["planner", "programmer", "tester", "optimizer", "tester", "manager"]
    assert any("still fail to import the same way" in e.text for e in events if isinstance(e, Notice))
    assert events[-1].status is RunStatus.PASSED, events[-1].reason


async def test_a_pass_with_no_test_run_is_not_a_pass():
    reports = iter([TestReport(TestStatus.PASSED, 0, 0.1, 0, 0, "?   \tsandbox\t[no test files]"),
                    TestReport(TestStatus.PASSED, 0, 0.1, 2, 0, "--- PASS: TestA\n--- PASS: TestB")])
    script = {**s.happy_path(), "tester": [s.TESTS, s.TESTS]}
    events, *_ = await run_team(script, sandbox=ScriptedSandbox(lambda job: next(reports)))
    assert turns(events).count("tester") == 2 and events[-1].status is RunStatus.PASSED
    assert [e.report.passed for e in events if isinstance(e, TestReported)] == [0, 2]


# -- replies that are not whole: too long a prompt, nothing, cut short; silence; the token budget ---------

from agents.errors import EmptyReply, PromptTooLong  # noqa: E402
from agents.events import Waiting  # noqa: E402
from tests.fakes.team_script import Cut  # noqa: E402


@pytest.mark.parametrize("trouble", [
    PromptTooLong("The programmer's prompt (about 3,000 tokens) does not fit the context of m (2,048 tokens).", 3000, 2048),
    EmptyReply("The model sent an empty reply for the programmer (HTTP 200, no text; the prompt was about 900 tokens).",
               900),
])
async def test_a_prompt_the_model_cannot_take_is_trimmed_and_tried_once_more(trouble):
    old = "def helper():\n" + "    x = 1\n" * 2000  # written long ago: the first to go
    prior = PriorWork(tasks=("t",), plan=s.PLAN, files=FileSet({"helper.py": old, "intf.py": "x = 1\n"}), language="python")
    script = {**s.happy_path(), "programmer": [trouble, s.CODE]}
    events, model, *_ = await run_team(script, request=RunRequest(task="now recurse", run_id="r2", prior=prior))
    assert events[-1].status is RunStatus.PASSED
    first, second = [messages for role, messages in model.calls if role == "programmer"]
    assert "    x = 1\n" * 100 in first[1].content and "    x = 1\n" * 100 not in second[1].content
    assert "[2001 lines, unchanged; not shown to fit the model's context" in second[1].content
    assert any(str(trouble) in e.text and "Trimming the prompt" in e.text for e in events if isinstance(e, Notice))


async def test_a_prompt_too_long_twice_ends_the_run_naming_it():
    trouble = PromptTooLong("The planner's prompt (about 9,000 tokens) does not fit the context of m (2,048 tokens).",
                            9000, 2048)
    events, *_ = await run_team({**s.happy_path(), "planner": [trouble, trouble]})
    final = events[-1]
    assert final.status is RunStatus.ERROR and "does not fit the context" in final.reason
    assert "the plan was empty" not in final.reason and "internal error" not in final.reason


async def test_a_cut_reply_is_asked_again_shorter_and_a_second_cut_goes_on_with_what_arrived():
    cut_plan = s.PLAN + "\n3. And then, at great length"
    script = {**s.happy_path(), "planner": [Cut(cut_plan), Cut(cut_plan)]}
    events, model, *_ = await run_team(script)
    assert events[-1].status is RunStatus.PASSED
    second = [messages for role, messages in model.calls if role == "planner"][1]
    assert second[-1].content.endswith("Answer again, shorter: no explanations, and only what is asked for, complete.")
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert any("The team goes on with what arrived" in n for n in notices)


async def test_a_file_reply_cut_after_whole_files_is_used_at_once_without_the_file_it_cut():
    cut = s.CODE + "\n```python path=extra.py\ndef unfinished(\n"
    events, model, sandbox, _ = await run_team({**s.happy_path(), "programmer": [Cut(cut)]})
    assert set(sandbox.jobs[0].files) == {"intf.py", "test_intf.py"}  # extra.py was cut open: not saved
    assert events[-1].status is RunStatus.PASSED
    assert [role for role, _ in model.calls].count("programmer") == 1  # not asked again: what arrived was whole
    assert any("The team goes on with what arrived" in e.text for e in events if isinstance(e, Notice))


async def test_a_file_reply_cut_twice_before_any_whole_file_does_not_end_the_run():
    cut = "```python path=test_intf.py\ndef test_a():\n    assert"
    reports = iter([TestReport(TestStatus.FAILED, 5, 0.1, None, None, "no tests ran in 0.01s"),
                    TestReport(TestStatus.PASSED, 0, 0.1, 2, 0, "2 passed in 0.01s")])
    script = {**s.happy_path(), "tester": [Cut(cut), Cut(cut), s.TESTS]}
    events, model, *_ = await run_team(script, sandbox=ScriptedSandbox(lambda job: next(reports)))
    assert events[-1].status is RunStatus.PASSED, events[-1].reason
    assert [role for role, _ in model.calls].count("tester") == 3  # cut, asked shorter, cut again; then fixed


class SilentUntilTold:
    """A model that says nothing until the test lets it speak (after the run said it was waiting)."""

    def __init__(self):
        self.speak = asyncio.Event()
        self.inner = ScriptedModel(s.happy_path())

    def model_name(self, role):
        return "silent"

    async def stream(self, role, messages, temperature=None):
        if role == "planner":
            await self.speak.wait()
        async for piece in self.inner.stream(role, messages, temperature):
            yield piece


async def test_silence_from_the_model_is_shown_as_waiting_until_it_speaks():
    model = SilentUntilTold()
    manager = Manager(model, ScriptedSandbox(), RecordingPublisher(),
                      settings=TeamSettings(wait_notice_s=0.01, wait_repeat_s=0.01))
    events = []
    async for event in manager.run(RunRequest(task="t", run_id="r1")):
        events.append(event)
        if isinstance(event, Waiting) and sum(isinstance(e, Waiting) for e in events) == 2:
            model.speak.set()
    waiting = [e for e in events if isinstance(e, Waiting)]
    assert len(waiting) >= 2 and {e.agent for e in waiting} == {"planner"}
    first_text = next(i for i, e in enumerate(events) if isinstance(e, TextDelta))
    assert all(events.index(w) < first_text for w in waiting) and events[-1].status is RunStatus.PASSED


async def test_the_token_budget_stops_a_reply_as_it_arrives():
    endless_plan = "1. Keep planning.\n" * 50_000  # about 225,000 tokens: the stream must not be read to its end
    model = ScriptedModel({**s.happy_path(), "planner": [endless_plan]}, chunk=100)
    manager = Manager(model, ScriptedSandbox(), RecordingPublisher(), settings=TeamSettings(budget=Budget(max_tokens=5000)))
    events = [e async for e in manager.run(RunRequest(task="t", run_id="r1"))]
    final = events[-1]
    assert final.status is RunStatus.STOPPED and "token budget ran out during the planner's reply" in final.reason
    assert model.chunks_sent < 250  # ~20,000 characters of 900,000
    finished = [e for e in events if isinstance(e, TurnFinished)]
    assert finished[-1].usage.estimated and final.usage.total_tokens >= 5000


async def test_tests_that_never_arrive_go_back_to_the_tester_as_no_test_ran():
    echo = "```python\n" + s.CODE.split("```python path=intf.py\n")[1]  # a weak Tester repeats the code
    reports = iter([TestReport(TestStatus.FAILED, 5, 0.1, None, None, "no tests ran in 0.01s"),
                    TestReport(TestStatus.FAILED, 5, 0.1, None, None, "no tests ran in 0.01s"),
                    TestReport(TestStatus.PASSED, 0, 0.1, 2, 0, "2 passed in 0.01s")])
    script = {**s.happy_path(), "tester": [echo, "I would test it.", "Still prose.", s.TESTS]}
    events, model, sandbox, _ = await run_team(script, sandbox=ScriptedSandbox(lambda job: next(reports)))
    assert "test_intf.py" in sandbox.jobs[0].files  # the echo, saved where the tests go: the run says no test ran
    assert "test_intf.py" in sandbox.jobs[1].files  # the prose replies saved nothing; the earlier file stands
    assert turns(events).count("manager") == 0 and events[-1].status is RunStatus.PASSED
    retry = model.user_prompt("tester", 1)
    assert "The tests could not run: no test ran (pytest runs functions named test_*" in retry
    assert ("A test file the runner finds starts like this (each `...` stands for real arguments or the result the "
            "task expects: write those, not the dots):\n\n```python path=test_intf.py\nfrom intf import find_intf\n"
            "\n\ndef test_find_intf():\n    assert find_intf(...) == ...\n```") in retry


@pytest.mark.parametrize("plan, task, language", [
    ("Write the function.", "Write a Go function that reverses a string", "go"),
    ("Write it.\nLANGUAGE: English", "reverse a string", "python"),
    ("Write it.\nLANGUAGE: rust", "reverse a string", "rust"),
    ("Steps.", "reverse a string", "python"),
])
async def test_the_language_is_the_plans_else_the_tasks_else_python(plan, task, language):
    events, _, sandbox, _ = await run_team({**s.happy_path(), "planner": [plan]},
                                           request=RunRequest(task=task, run_id="r1"))
    assert sandbox.jobs[0].language == language


# -- the overlapped order: who works at the same time, and what the thread sees ------------------------------

from tests.agents.test_lanes import blocks_are_whole  # noqa: E402


class WaitsFor(ScriptedModel):
    """A model whose ``role`` does not answer until ``other`` has been asked too: a run in which they do not
    work at the same time never ends (the test's own timeout catches that)."""

    def __init__(self, script, role, other):
        super().__init__(script)
        self.role, self.other, self.asked = role, other, asyncio.Event()

    async def stream(self, role, messages, temperature=None):
        if role == self.other:
            self.asked.set()
        if role == self.role:
            await self.asked.wait()
        async for piece in super().stream(role, messages, temperature):
            yield piece


async def run_with(model, sandbox=None, order=OVERLAPPED, budget=None, request=None):
    manager = Manager(model, sandbox or ScriptedSandbox(), RecordingPublisher(),
                      settings=TeamSettings(order=order, budget=budget or Budget()))
    return [e async for e in manager.run(request or RunRequest(task="find all intf keys", run_id="r1"))]


async def test_the_tester_writes_from_the_plan_while_the_programmer_writes_the_code():
    model = WaitsFor({**s.happy_path(), "programmer": [s.CODE]}, role="programmer", other="tester")
    model.chunk = 8  # many small pieces, so the two replies really stream at the same time
    events = await run_with(model)
    assert events[-1].status is RunStatus.PASSED
    assert blocks_are_whole(events)  # every renderer sees one whole turn after another
    tester = model.user_prompt("tester")
    assert "## Plan\n" + s.PLAN.split("\n")[0] in tester and "Code under test" not in tester


class SandboxWaitingForTheReview(ScriptedSandbox):
    """Tests that do not finish until the reviewer has been asked: in order, the review would wait for them."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    async def run(self, job):
        while "optimizer" not in [role for role, _ in self.model.calls]:
            await asyncio.sleep(0)
        return await super().run(job)


async def test_the_review_runs_while_the_tests_run_and_a_failure_is_triaged():
    script = {**s.happy_path(), "programmer": [s.BUGGY_CODE, s.CODE], "optimizer": [s.APPROVE, s.APPROVE],
              "manager": [s.FIX_CODE]}
    model = ScriptedModel(script, chunk=8)
    events = await run_with(model, sandbox=SandboxWaitingForTheReview(model))
    assert events[-1].status is RunStatus.PASSED and blocks_are_whole(events)
    kinds = [(type(e).__name__, getattr(e, "agent", "")) for e in events
             if isinstance(e, (TurnStarted, TestReported))]
    # The thread reads: the review, then the test result it ran beside, then the triage of that result.
    assert kinds[3:6] == [("TurnStarted", "optimizer"), ("TestReported", ""), ("TurnStarted", "manager")]


async def test_no_triage_is_asked_when_its_outcome_is_forced():
    user_test = "from intf import find_intf\n\ndef test_user():\n    assert find_intf({'a': {'intf': 1}}) == [('intf', 1)]\n"
    only_the_users = "```python path=test_user.py\ndef test_user():\n    assert True\n```\n"  # nothing of its own

    def verdict(job):
        ok = "found.extend(find_intf(value))" in job.files["intf.py"]
        return TestReport(TestStatus.PASSED if ok else TestStatus.FAILED, 0 if ok else 1, 0.1, 1 if ok else 0,
                          0 if ok else 1, "1 passed" if ok else "FAILED test_user.py::test_user - assert [] == [('intf', 1)]")

    request = RunRequest(task="t", run_id="r1", attachments=(Attachment("test_user.py", user_test),))
    for order, triaged in ((OVERLAPPED, 0), (SEQUENTIAL, 0)):  # the user's tests failing: the code must change
        script = {**s.happy_path(), "tester": [only_the_users], "programmer": [s.BUGGY_CODE, s.CODE],
                  "optimizer": [s.APPROVE] * 2, "manager": [s.FIX_CODE]}
        events, model, sandbox, _ = await run_team(script, sandbox=ScriptedSandbox(verdict), request=request,
                                                   budget=Budget(max_replans=0), order=order)
        assert events[-1].status is RunStatus.PASSED and turns(events).count("manager") == triaged
        assert "FAILED test_user.py::test_user" in model.user_prompt("programmer", 1)  # the failure says what to fix


async def test_a_triage_with_a_choice_left_is_still_asked():
    script = {**s.happy_path(), "programmer": [s.BUGGY_CODE, s.CODE], "manager": [s.FIX_CODE]}
    events, *_ = await run_team(script, budget=Budget(max_replans=0))  # the team's own tests could be wrong
    assert turns(events).count("manager") == 1


class Preparing(ScriptedSandbox):
    def __init__(self):
        super().__init__()
        self.prepared = []

    def prepare(self, language):
        self.prepared.append((language, len(self.jobs)))


async def test_each_rounds_container_is_prepared_while_the_models_write():
    script = {**s.happy_path(), "programmer": [s.BUGGY_CODE, s.CODE], "manager": [s.FIX_CODE],
              "optimizer": [s.APPROVE] * 2}
    sandbox = Preparing()
    events, *_ = await run_team(script, sandbox=sandbox)
    assert events[-1].status is RunStatus.PASSED
    assert sandbox.prepared == [("python", 0), ("python", 1)]  # before each round's test run


async def test_a_sandbox_that_cannot_prepare_still_runs_the_tests():
    class Refuses(ScriptedSandbox):
        def prepare(self, language):
            raise RuntimeError("the engine is busy")

    events, _, sandbox, _ = await run_team(s.happy_path(), sandbox=Refuses())
    assert events[-1].status is RunStatus.PASSED and len(sandbox.jobs) == 1


async def test_a_follow_up_has_the_tester_update_its_tests_beside_the_new_code(order):
    prior = PriorWork(tasks=("find all intf keys",), plan=s.PLAN, files=FileSet({"intf.py": "old\n"}),
                      tests=FileSet({"test_intf.py": "old test\n"}), language="python")
    events, model, sandbox, _ = await run_team(s.happy_path(), order=order,
                                               request=RunRequest(task="now async", run_id="r2", prior=prior))
    assert events[-1].status is RunStatus.PASSED
    assert sandbox.jobs[0].files["test_intf.py"] == s.TESTS.split("\n", 1)[1].rsplit("```", 1)[0]
    assert "## Why the tests must change\nThe user asked for a change" in model.user_prompt("tester")


class FinishesFirst(ScriptedModel):
    """``first`` ends its reply before the other writer says a word."""

    def __init__(self, script, first):
        super().__init__(script)
        self.first, self.done = first, asyncio.Event()

    async def stream(self, role, messages, temperature=None):
        if role in ("programmer", "tester") and role != self.first:
            await self.done.wait()
        async for piece in super().stream(role, messages, temperature):
            yield piece
        if role == self.first:
            self.done.set()


@pytest.mark.parametrize("first", ["programmer", "tester"])
async def test_a_test_file_both_agents_wrote_is_the_testers_and_a_code_file_both_wrote_is_the_programmers(first):
    programmer = s.CODE + "\n```python path=test_intf.py\ndef test_mine():\n    assert True\n```\n"
    tester = s.TESTS + "\n```python path=intf.py\ndef find_intf(obj):\n    return []\n```\n"
    sandbox = ScriptedSandbox()
    events = await run_with(FinishesFirst({**s.happy_path(), "programmer": [programmer], "tester": [tester]}, first),
                            sandbox=sandbox)
    job = sandbox.jobs[0]
    assert "found.extend" in job.files["intf.py"] and "test_lists" in job.files["test_intf.py"]
    assert list(events[-1].files) == ["intf.py"] and list(events[-1].tests) == ["test_intf.py"]


async def test_a_sandbox_that_cannot_start_ends_the_run_before_the_next_model_call(order):
    from agents.errors import SandboxError

    class EngineDown(ScriptedSandbox):
        async def ready(self):
            raise SandboxError("Docker is not reachable (connection refused): start the Docker engine")

    events, model, sandbox, _ = await run_team(s.happy_path(), sandbox=EngineDown(), order=order)
    final = events[-1]
    assert final.status is RunStatus.ERROR and final.reason.startswith("Docker is not reachable")
    assert [role for role, _ in model.calls] == ["planner"] and sandbox.jobs == []


async def test_the_sandbox_starts_once_the_model_has_begun_to_answer():
    seen = []

    class Starting(ScriptedSandbox):
        async def ready(self):
            seen.append([role for role, _ in model.calls])

    model = ScriptedModel(s.happy_path())
    await run_with(model, sandbox=Starting())
    assert seen == [["planner"]]  # after the first request, while the Planner writes


async def test_a_run_that_cannot_test_says_so_even_when_the_model_failed_first():
    from agents.errors import ModelError, SandboxError

    class NoImages(ScriptedSandbox):
        async def ready(self):
            raise SandboxError("no sandbox image is present: run `codegen-chat sandbox build` first")

    script = {**s.happy_path(), "planner": [ModelError("The model endpoint is unreachable."), s.PLAN]}
    events, model, _, _ = await run_team(script, sandbox=NoImages())
    assert events[-1].status is RunStatus.ERROR and events[-1].reason.startswith("no sandbox image is present")
    assert [role for role, _ in model.calls] == ["planner"]


async def test_a_role_the_test_did_not_script_fails_the_run_instead_of_approving():
    # The scripted model never invents a reply: a review nobody scripted is an error, not an approval.
    script = {**s.happy_path()}
    del script["optimizer"]
    events, model, *_ = await run_team(script, order=SEQUENTIAL)
    final = events[-1]
    assert final.status is RunStatus.ERROR and "nothing scripted for the optimizer" in final.reason
    assert "optimizer" not in [e.agent for e in events if isinstance(e, TurnFinished)]


async def test_the_testers_format_example_is_a_test_file_for_the_code_it_tests():
    tester_system = {}
    for order in (SEQUENTIAL, OVERLAPPED):
        events, model, *_ = await run_team(s.happy_path(), order=order)
        assert events[-1].status is RunStatus.PASSED
        tester_system[order] = next(messages for role, messages in model.calls if role == "tester")[0].content
    # Sequential: the Tester writes after the code, and its example is a test file importing what the code defines.
    assert "```python path=test_intf.py\nfrom intf import find_intf" in tester_system[SEQUENTIAL]
    assert "src/example.py" not in tester_system[SEQUENTIAL]
    # Overlapped: no code exists yet, so the example is the general one.
    assert "src/example.py" in tester_system[OVERLAPPED]


async def test_a_fix_that_comes_back_unchanged_has_the_next_candidate_written_afresh_from_the_stub():
    stub = 'def find_intf(obj):\n    """All (key, value) pairs whose key is \'intf\', at any depth."""\n'

    def verdict(job):
        ok = "found.extend(find_intf(value))" in job.files["intf.py"]
        return TestReport(TestStatus.PASSED if ok else TestStatus.FAILED, 0 if ok else 1, 0.1, 1 if ok else 0, 0 if ok else 1)

    request = RunRequest(task="complete find_intf", run_id="r1", attachments=(Attachment("intf.py", stub),))
    for order in (OVERLAPPED, SEQUENTIAL):
        script = {**s.happy_path(), "programmer": [s.BUGGY_CODE, s.BUGGY_CODE, s.CODE], "manager": [s.FIX_CODE] * 2,
                  "optimizer": [s.APPROVE] * 3}
        events, model, *_ = await run_team(script, sandbox=ScriptedSandbox(verdict), request=request, order=order)
        assert events[-1].status is RunStatus.PASSED
        first_fix = model.user_prompt("programmer", 1)  # shown the code that failed, not the stub
        assert "```python path=intf.py\n" + stub + "```" not in first_fix and candidates.AGAIN_REASON not in first_fix
        again = model.user_prompt("programmer", 2)  # the fix came back unchanged: the stub again, and why
        assert candidates.AGAIN_REASON in again and "```python path=intf.py\n" + stub + "```" in again
        assert any(isinstance(e, Notice) and e.text == candidates.AGAIN_NOTICE for e in events)


STUB_WITH_EXAMPLE = ('def find_intf(obj):\n    """All (key, value) pairs whose key is \'intf\', at any depth.\n\n'
                     '    >>> find_intf({"a": {"intf": 1}})\n    [(\'intf\', 1)]\n    """\n')


def _found_nested(job):
    ok = "found.extend(find_intf(value))" in job.files["intf.py"]
    return TestReport(TestStatus.PASSED if ok else TestStatus.FAILED, 0 if ok else 1, 0.1, 1 if ok else 0, 0 if ok else 1)


@pytest.mark.parametrize("order", [OVERLAPPED, SEQUENTIAL])
async def test_code_failing_the_tasks_examples_is_written_afresh_from_the_stub_at_the_resample_temperature(order):
    request = RunRequest(task="complete find_intf", run_id="r1", attachments=(Attachment("intf.py", STUB_WITH_EXAMPLE),))
    script = {**s.happy_path(), "programmer": [s.BUGGY_CODE, s.CODE], "optimizer": [s.APPROVE]}
    events, model, sandbox, _ = await run_team(script, sandbox=ScriptedSandbox(_found_nested), request=request,
                                               order=order, resample_temperature=0.7)
    assert events[-1].status is RunStatus.PASSED
    assert any(path.startswith("test_task_examples_") for path in sandbox.jobs[0].files)  # the examples judged it
    again = model.user_prompt("programmer", 1)  # the stub again, and why; not the version that failed
    assert candidates.RESAMPLE_REASON in again and "```python path=intf.py\n" + STUB_WITH_EXAMPLE + "```" in again
    assert "for item in obj:" not in again and "manager" not in turns(events)  # a line only the failing version had
    assert [t for role, t in model.temperatures if role == "programmer"] == [None, 0.7]  # only the fresh one sampled
    assert all(t is None for role, t in model.temperatures if role != "programmer")
    assert any(isinstance(e, Notice) and "the Programmer writes the code afresh" in e.text for e in events)


async def test_without_fresh_candidates_code_failing_the_tasks_examples_is_fixed():
    request = RunRequest(task="complete find_intf", run_id="r1", attachments=(Attachment("intf.py", STUB_WITH_EXAMPLE),))
    script = {**s.happy_path(), "programmer": [s.BUGGY_CODE, s.CODE], "optimizer": [s.APPROVE]}
    events, model, *_ = await run_team(script, sandbox=ScriptedSandbox(_found_nested), request=request,
                                       resample_temperature=None)
    assert events[-1].status is RunStatus.PASSED
    fix = model.user_prompt("programmer", 1)
    assert candidates.FIX_REASON in fix and candidates.RESAMPLE_REASON not in fix and "for item in obj:" in fix
    assert [t for role, t in model.temperatures if role == "programmer"] == [None, None]


async def test_when_no_version_passes_the_tasks_examples_the_first_of_the_closest_is_handed_back():
    request = RunRequest(task="complete find_intf", run_id="r1", attachments=(Attachment("intf.py", STUB_WITH_EXAMPLE),))
    other = s.BUGGY_CODE.replace("for item in obj:", "for item in reversed(obj):")
    script = {**s.happy_path(), "programmer": [s.BUGGY_CODE, other], "optimizer": [s.APPROVE]}
    events, model, sandbox, publisher = await run_team(script, sandbox=ScriptedSandbox(_found_nested), request=request,
                                                       budget=Budget(max_rounds=2))
    final = events[-1]
    assert final.status is RunStatus.FAILED and "reversed(obj)" in sandbox.jobs[-1].files["intf.py"]
    assert "for item in obj:" in final.files["intf.py"]  # the first of two that failed as much: the one handed back
    assert "for item in obj:" in publisher.publications[-1].files["intf.py"]
    assert any(isinstance(e, Notice) and e.text.startswith("No version of the code passed the task's own tests")
               for e in events)


async def test_of_versions_the_tasks_examples_pass_the_first_is_kept_unless_a_later_one_fails_fewer_tests():
    """A small model changes right code on the word of its own wrong tests; a later version that passes the task's
    examples all the same is not better for being later. One that fails fewer of the team's tests is."""
    request = RunRequest(task="complete find_intf", run_id="r1", attachments=(Attachment("intf.py", STUB_WITH_EXAMPLE),))
    later = s.CODE.replace("for item in obj:", "for item in list(obj):")

    def team_tests_fail(counts):
        def verdict(job):
            if "test_intf.py" not in job.files:  # the task's examples alone: every version passes them
                return TestReport(TestStatus.PASSED, 0, 0.1, 1, 0)
            failed = counts["list(obj)" in job.files["intf.py"]]
            return TestReport(TestStatus.FAILED, 1, 0.1, 2 - failed, failed)
        return verdict

    script = {**s.happy_path(), "programmer": [s.CODE, later], "manager": [s.FIX_CODE] * 2, "optimizer": [s.APPROVE] * 2}
    for counts, handed_back in (({False: 1, True: 1}, s.CODE), ({False: 2, True: 1}, later)):
        events, *_ = await run_team(script, sandbox=ScriptedSandbox(team_tests_fail(counts)), request=request,
                                    budget=Budget(max_rounds=2))
        final = events[-1]
        assert final.status is RunStatus.FAILED
        assert ("list(obj)" in final.files["intf.py"]) == (handed_back is later)
        kept_said = any(isinstance(e, Notice) and e.text.startswith("The last version of the code is not the best")
                        for e in events)
        assert kept_said == (handed_back is s.CODE)


async def test_a_fresh_candidate_is_read_against_the_stub_it_was_shown():
    """The fresh candidate names its block as a file that does not exist; the stub it was shown says which file."""
    request = RunRequest(task="complete find_intf", run_id="r1", attachments=(Attachment("intf.py", STUB_WITH_EXAMPLE),))
    renamed = s.CODE.replace("```python path=intf.py\n", "```python\n# task.py\n")
    script = {**s.happy_path(), "programmer": [s.BUGGY_CODE, renamed], "optimizer": [s.APPROVE]}
    events, _, sandbox, _ = await run_team(script, sandbox=ScriptedSandbox(_found_nested), request=request)
    assert events[-1].status is RunStatus.PASSED
    assert "task.py" not in events[-1].files and "found.extend(find_intf(value))" in events[-1].files["intf.py"]
