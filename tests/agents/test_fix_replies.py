"""``[team] fix_replies``: a fixing Programmer replies with whole files (the default) or with diffs, which the
team applies to the files it has, so what is tested is the same code either way."""

import pytest

from agents.events import Notice, RunFinished, WorkSaved
from agents.manager import Budget, FixReplies, Manager, Order, TeamSettings
from agents.run_request import RunRequest
from agents.types import RunStatus, TestReport, TestStatus
from tests.fakes import durations_script as d
from tests.fakes.publishers import RecordingPublisher
from tests.fakes.team_script import ScriptedModel, ScriptedSandbox

FAILING = "FAILED test_durations.py::test_each_unit_alone[5m-300] - AssertionError: assert 30 == 300\n"


def verdict(job):
    if job.files.get("durations.py") == d.CODE:
        return TestReport(TestStatus.PASSED, 0, 0.2, 41, 0, "41 passed in 0.20s")
    return TestReport(TestStatus.FAILED, 1, 0.2, 40, 1, FAILING)


async def run(script, fix_replies, order=Order.OVERLAPPED, rounds=3):
    model, tested = ScriptedModel(script), []

    def recorded(job):
        tested.append(job.files["durations.py"])
        return verdict(job)

    manager = Manager(model, ScriptedSandbox(recorded), RecordingPublisher(),
                      settings=TeamSettings(budget=Budget(max_rounds=rounds + 1), order=order, fix_replies=fix_replies))
    events = [e async for e in manager.run(RunRequest(task=d.TASK, run_id="r1"))]
    return model, events, tested


def programmer_prompts(model):
    return [messages[0].content for role, messages in model.calls if role == "programmer"]


@pytest.mark.parametrize("order", list(Order))
async def test_fixes_written_as_diffs_are_applied_and_the_run_tests_each_version(order):
    model, events, tested = await run(d.fix_rounds(3, diffs=True), FixReplies.DIFF, order)
    final = events[-1]
    assert isinstance(final, RunFinished) and final.status is RunStatus.PASSED, final.reason
    assert tested == [d.wrong_code(0), d.wrong_code(1), d.wrong_code(2), d.CODE]  # each diff applied exactly
    assert final.files["durations.py"] == d.CODE
    first, *fixing = programmer_prompts(model)
    assert "unified diff" not in first  # the first version is written whole
    assert fixing and all("Reply with a unified diff of each file you change" in p for p in fixing)


async def test_whole_files_are_asked_for_by_default():
    model, events, tested = await run(d.fix_rounds(2), TeamSettings().fix_replies)
    assert events[-1].status is RunStatus.PASSED and tested[-1] == d.CODE
    assert not any("diff" in p for p in programmer_prompts(model)[1:])


async def test_a_diff_that_does_not_apply_loses_nothing_and_is_asked_for_again():
    stale = d.diff_reply(d.wrong_code(1), d.CODE, "Fixed.")  # made against a version the team never had
    script = {**d.fix_rounds(1, diffs=True)}
    script["programmer"] = [script["programmer"][0], stale, d.code_reply(d.CODE, "The whole file, then.")]
    model, events, tested = await run(script, FixReplies.DIFF, rounds=2)
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert any("do not match the current file" in n for n in notices), notices
    saved = [e.files["durations.py"] for e in events if isinstance(e, WorkSaved) and "durations.py" in e.files]
    assert d.wrong_code(0) in saved and events[-1].status is RunStatus.PASSED and tested[-1] == d.CODE


async def test_asking_for_diffs_keeps_every_prompt_within_the_ceiling_for_ten_rounds():
    model, events, _ = await run(d.fix_rounds(10, diffs=True), FixReplies.DIFF, rounds=10)
    first_programmer = next(chars for role, chars in model.prompts if role == "programmer")
    assert events[-1].status is RunStatus.PASSED
    assert max(chars for _, chars in model.prompts) <= 1.5 * first_programmer

