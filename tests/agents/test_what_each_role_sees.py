"""Each role's prompt holds what that role needs to decide, and nothing twice, however many rounds a run takes.

Measured on a realistic run (``tests/fakes/durations_script.py``) in both orders: the plan reaches only the
roles that work from it, triage judges the tests against the task without the code, the Programmer fixes
from the code and what failed, the reviewer sees what changed and what failed, the Check-In sees the code.
"""

import pytest

from agents.events import RunFinished
from agents.manager import Budget, Manager, Order, TeamSettings
from agents.run_request import RunRequest
from agents.types import RunStatus, TestReport, TestStatus
from tests.agents.test_failures import pytest_output
from tests.fakes import durations_script as d
from tests.fakes.publishers import RecordingPublisher
from tests.fakes.team_script import ScriptedModel, ScriptedSandbox

FAILING = ("test_durations.py:10: in test_each_unit_alone\n    assert parse_duration(text) == seconds\n"
           "E   AssertionError: assert 30 == 300\nE    +  where 30 = parse_duration('5m')\n"
           "FAILED test_durations.py::test_each_unit_alone[5m-300] - AssertionError: assert 30 == 300\n"
           "1 failed, 40 passed in 0.21s\n")


def verdict(job):
    if job.files.get("durations.py") == d.CODE:
        return TestReport(TestStatus.PASSED, 0, 0.2, 41, 0, "41 passed in 0.20s")
    return TestReport(TestStatus.FAILED, 1, 0.2, 40, 1, FAILING)


async def run(order, rounds=5, judge=verdict):
    model = ScriptedModel(d.fix_rounds(rounds))
    manager = Manager(model, ScriptedSandbox(judge), RecordingPublisher(),
                      settings=TeamSettings(budget=Budget(max_rounds=rounds + 1), order=order))
    events = [e async for e in manager.run(RunRequest(task=d.TASK, run_id="r1"))]
    assert isinstance(events[-1], RunFinished) and events[-1].status is RunStatus.PASSED, events[-1].reason
    return model


def asked(model, role):
    return [messages[-1].content for r, messages in model.calls if r == role]


@pytest.fixture(params=list(Order))
async def model(request):
    return await run(request.param)


TESTS = d.TESTS.rstrip("\n")
CODE = d.CODE.rstrip("\n")
PLAN_LINE = "Each unit at most once, largest first"


async def test_the_plan_reaches_only_the_roles_that_work_from_it(model):
    with_plan = [role for role, messages in model.calls if PLAN_LINE in messages[-1].content]
    assert sorted(with_plan) == ["programmer", "tester"]  # the first Programmer call, and the Tester
    assert PLAN_LINE in asked(model, "programmer")[0]


async def test_triage_judges_the_failing_tests_against_the_task_without_the_code(model):
    start = d.TESTS.index("@pytest.mark.parametrize(\"text, seconds\"")
    failing = d.TESTS[start:d.TESTS.index("\n\n\n", start)]  # test_each_unit_alone, its decorator included
    for prompt in asked(model, "manager"):
        assert d.TASK in prompt and failing in prompt and "assert 30 == 300" in prompt
        assert "def test_combined_forms" not in prompt  # the tests that passed are not what it judges
        assert "def parse_duration" not in prompt  # no code, and no plan either
        assert PLAN_LINE not in prompt


async def test_the_programmer_fixes_from_the_code_what_failed_and_why_not_from_the_teams_tests(model):
    for round_, prompt in enumerate(asked(model, "programmer")[1:], start=2):
        assert "def parse_duration" in prompt and "assert 30 == 300" in prompt
        assert d.TRIAGE[round_ - 2].split("\nDECISION")[0] in prompt  # the Manager's reading of the failure
        assert "def test_combined_forms" not in prompt  # the team's tests are written apart from the code


async def test_the_reviewer_sees_what_changed_and_what_it_was_to_fix(model):
    first, *later = asked(model, "optimizer")
    assert d.wrong_code(0).rstrip("\n") in first  # the whole module, the first time
    for round_, prompt in enumerate(later, start=2):
        assert "## What changed since your last review" in prompt and "```diff path=durations.py" in prompt
        assert "## The Manager's reading of the failure" in prompt
        assert d.TRIAGE[(round_ - 2) % len(d.TRIAGE)].split("\nDECISION")[0] in prompt
        # the reading stands for the failing output it was made from: the tests run again on the change
        assert "assert 30 == 300" not in prompt
        assert CODE not in prompt and PLAN_LINE not in prompt


async def test_the_check_in_sees_the_interface_of_the_code_it_describes(model):
    [prompt] = asked(model, "checkin")
    assert "- test_durations.py" in prompt and "41 passed" in prompt
    assert PLAN_LINE not in prompt
    # what a reader calls, and how: each signature and docstring, the module's constants; not the bodies
    for line in ('def parse_duration(text: str) -> int:', '"""Seconds in a duration such as "1h 30m", "90s" or "2d4h"."""',
                 'def format_duration(seconds: int) -> str:', 'UNITS = {"d": 86_400, "h": 3_600, "m": 60, "s": 1}'):
        assert line in prompt
    assert "raise ValueError" not in prompt and "(its interface: the function bodies are left out)" in prompt


async def test_no_prompt_holds_anything_twice(model):
    pieces = [d.TASK, CODE, TESTS, FAILING.rstrip("\n"), PLAN_LINE]
    for role, messages in model.calls:
        prompt = "\n".join(m.content for m in messages)
        for piece in pieces:
            assert prompt.count(piece) <= 1, (role, piece[:40])


@pytest.mark.parametrize("order", list(Order))
async def test_prompts_stay_the_same_size_however_many_rounds(order):
    five, twelve = await run(order, rounds=5), await run(order, rounds=12)
    largest = [max(chars for _, chars in m.prompts) for m in (five, twelve)]
    assert largest[0] == largest[1]
    later = [chars for role, chars in twelve.prompts[8:] if role == "programmer"]
    assert max(later) - min(later) < 200  # round 3 and round 13 see the same kind of input


def huge_failure(job):
    """Every parametrized case failing, thousands of times over: pytest's output runs to hundreds of kilobytes."""
    if job.files.get("durations.py") == d.CODE:
        return TestReport(TestStatus.PASSED, 0, 0.2, 41, 0, "41 passed in 0.20s")
    cases = [(test, f"{i}") for i in range(400) for test in ("test_each_unit_alone", "test_combined_forms", "test_format")]
    return TestReport(TestStatus.FAILED, 1, 0.2, 0, len(cases), pytest_output(cases))


@pytest.mark.parametrize("judge", [verdict, huge_failure])
async def test_no_prompt_exceeds_one_and_a_half_first_programmer_prompts_in_ten_rounds(judge):
    model = await run(Order.OVERLAPPED, rounds=10, judge=judge)
    first_programmer = next(chars for role, chars in model.prompts if role == "programmer")
    assert len(model.prompts) > 30 and max(chars for _, chars in model.prompts) <= 1.5 * first_programmer


async def test_a_huge_failing_output_still_tells_the_first_failure_and_how_many_more():
    model = await run(Order.OVERLAPPED, rounds=2, judge=huge_failure)
    for prompt in asked(model, "programmer")[1:] + asked(model, "manager"):
        assert "test_each_unit_alone[0]:\nE   AssertionError: assert '0' == 0" in prompt
        assert ("1198 more failed: test_format (400 cases), test_each_unit_alone (399 cases), "
                "test_combined_forms (399 cases)") in prompt
