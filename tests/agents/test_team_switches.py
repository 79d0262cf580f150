"""Settings that switch a step of the workflow off: the review (an ablation the eval measures) and the
check-in (eval runs publish nothing)."""

import pytest

from agents.events import CheckedIn, RunFinished, TurnFinished
from agents.manager import Budget, Manager, Order, TeamSettings
from agents.run_request import RunRequest
from agents.types import RunStatus
from tests.fakes import team_script as s
from tests.fakes.publishers import RecordingPublisher
from tests.fakes.team_script import ScriptedModel, ScriptedSandbox


async def run_team(script, **settings):
    model, publisher = ScriptedModel(script), RecordingPublisher()
    manager = Manager(model, ScriptedSandbox(), publisher, settings=TeamSettings(**settings))
    events = [e async for e in manager.run(RunRequest(task="find all intf keys", run_id="r1"))]
    return events, publisher


def turns(events):
    return [e.agent for e in events if isinstance(e, TurnFinished)]


async def test_without_review_the_code_goes_straight_to_its_tests_every_round():
    script = {**s.happy_path(), "programmer": [s.BUGGY_CODE, s.CODE], "manager": [s.FIX_CODE],
              "optimizer": [s.CHANGES, s.CHANGES]}  # would block the code, were it asked
    events, _ = await run_team(script, review=False)
    assert turns(events) == ["planner", "programmer", "tester", "manager", "programmer", "checkin"]
    final = events[-1]
    assert isinstance(final, RunFinished) and final.status is RunStatus.PASSED
    assert final.reason == "tests passed (no review)"


@pytest.mark.parametrize("order", list(Order))
async def test_with_check_in_off_a_passing_run_publishes_nothing_and_asks_no_readme(order):
    events, publisher = await run_team(s.happy_path(), check_in=False, order=order)
    assert sorted(turns(events)) == ["optimizer", "planner", "programmer", "tester"]  # in either order
    assert publisher.publications == [] and not any(isinstance(e, CheckedIn) for e in events)
    final = events[-1]
    assert final.status is RunStatus.PASSED and final.checkin is None and list(final.files) == ["intf.py"]


async def test_with_check_in_off_a_run_its_budget_stopped_publishes_nothing_either():
    script = {**s.happy_path(), "programmer": [s.BUGGY_CODE]}
    events, publisher = await run_team(script, check_in=False, budget=Budget(max_rounds=1))
    assert "checkin" not in turns(events) and publisher.publications == []
    assert events[-1].status is RunStatus.FAILED and "the last test run" in events[-1].reason
