"""``[team] fix_replies``: a fixing Programmer replies with diffs, which the team applies to the files it has, or
with whole files, so what is tested is the same code either way. ``auto`` (the default) asks for diffs until one
does not apply, then for whole files for the rest of the run."""

import pytest

from agents.events import Notice, RunFinished, WorkSaved
from agents.manager import WHOLE_FROM_NOW, Budget, FixReplies, Manager, Order, TeamSettings
from agents.run_request import RunRequest
from agents.types import Attachment, RunStatus, TestReport, TestStatus
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


async def test_whole_files_are_asked_for_with_whole():
    model, events, tested = await run(d.fix_rounds(2), FixReplies.WHOLE)
    assert events[-1].status is RunStatus.PASSED and tested[-1] == d.CODE
    assert not any("diff" in p for p in programmer_prompts(model)[1:])


async def test_by_default_fixes_are_asked_for_as_diffs_and_a_whole_file_sent_instead_is_taken():
    assert TeamSettings().fix_replies is FixReplies.AUTO
    model, events, tested = await run(d.fix_rounds(2), TeamSettings().fix_replies)  # the model answers whole
    assert events[-1].status is RunStatus.PASSED
    assert tested == [d.wrong_code(0), d.wrong_code(1), d.CODE]
    first, *fixing = programmer_prompts(model)
    assert "unified diff" not in first
    assert len(fixing) == 2 and all("Reply with a unified diff of each file you change" in p for p in fixing)
    assert not any(e.text == WHOLE_FROM_NOW for e in events if isinstance(e, Notice))


@pytest.mark.parametrize("order", list(Order))
async def test_after_a_diff_that_does_not_apply_auto_asks_for_whole_files_for_the_rest_of_the_run(order):
    versions = [d.wrong_code(0), d.wrong_code(1), d.CODE]
    model, events, tested = await run(d.fix_rounds(2, failed_diff=True), FixReplies.AUTO, order)
    assert events[-1].status is RunStatus.PASSED and tested == versions  # nothing lost, nothing extra tested
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert notices.count(WHOLE_FROM_NOW) == 1, notices
    calls = [messages for role, messages in model.calls if role == "programmer"]
    assert len(calls) == 4  # the first version, the diff, the same fix asked again, the next fix
    assert "unified diff" in calls[1][0].content
    assert "do not match the current file; send the whole file" in calls[2][-1].content  # asked again, whole
    assert "unified diff" not in calls[3][0].content  # and the next fix is asked whole


async def test_with_diff_a_diff_that_does_not_apply_does_not_change_how_fixes_are_asked_for():
    stale = d.diff_reply(d.wrong_code(2), d.CODE, "Fixed.")
    script = {**d.fix_rounds(2, diffs=True)}
    script["programmer"] = [script["programmer"][0], stale, *script["programmer"][1:]]
    model, events, tested = await run(script, FixReplies.DIFF)
    assert events[-1].status is RunStatus.PASSED and tested[-1] == d.CODE
    assert all("unified diff" in p for p in programmer_prompts(model)[1:])
    assert WHOLE_FROM_NOW not in [e.text for e in events if isinstance(e, Notice)]


async def test_auto_asks_for_the_first_completion_of_given_functions_whole():
    # large enough that a fix of it would be asked as a diff: only being the first completion keeps it whole
    stub = 'def add(a, b):\n    """The sum of a and b.\n\n' + "    More about adding.\n" * 60 + '    """\n'
    script = {"programmer": ["```python path=adder.py\ndef add(a, b):\n    return a + b\n```"],
              "optimizer": [d.APPROVE], "tester": ["```python path=test_adder.py\nfrom adder import add\n\n"
                                                    "def test_add():\n    assert add(1, 2) == 3\n```"],
              "checkin": [d.README]}
    model = ScriptedModel(script)
    sandbox = ScriptedSandbox(lambda job: TestReport(TestStatus.PASSED, 0, 0.1, 1, 0, "1 passed"))
    manager = Manager(model, sandbox, RecordingPublisher())
    events = [e async for e in manager.run(RunRequest(task="Write add.", run_id="r1",
                                                      attachments=(Attachment("adder.py", stub),)))]
    assert events[-1].status is RunStatus.PASSED
    first = programmer_prompts(model)[0]
    assert "Complete `add`" in first and "unified diff" not in first


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



async def test_auto_sees_a_diff_that_did_not_apply_whatever_else_the_reply_held():
    # the stale diff, then a block that cannot be saved for another reason (a path outside the project)
    script = d.fix_rounds(2, failed_diff=True)
    script["programmer"][1] += "\n```python path=../elsewhere.py\nprint('hi')\n```\n"
    model, events, tested = await run(script, FixReplies.AUTO)
    assert events[-1].status is RunStatus.PASSED and tested == [d.wrong_code(0), d.wrong_code(1), d.CODE]
    assert [e.text for e in events if isinstance(e, Notice)].count(WHOLE_FROM_NOW) == 1


async def test_a_diff_that_names_no_file_changes_the_only_file_there_is():
    unnamed = d.diff_reply(d.wrong_code(0), d.CODE, "Fixed.").replace("--- a/durations.py\n+++ b/durations.py\n", "")
    script = d.fix_rounds(1)
    script["programmer"][1] = unnamed
    model, events, tested = await run(script, FixReplies.AUTO, rounds=1)
    assert "--- a/" not in unnamed and events[-1].status is RunStatus.PASSED, events[-1].reason
    assert tested == [d.wrong_code(0), d.CODE]


ECHO = "```diff\n--- a/PATH, +++ b/PATH, @@ hunks with context lines); a new file whole.\n```\n"  # as Qwen answered


async def test_a_reply_to_a_request_for_a_diff_with_nothing_usable_has_the_same_fix_asked_whole_in_that_round():
    script = d.fix_rounds(1)
    script["programmer"][1:1] = [ECHO, ECHO]  # the request for a diff, and the reminder, both answered so
    model, events, tested = await run(script, FixReplies.AUTO, rounds=1)  # one fix round: none may be lost
    assert events[-1].status is RunStatus.PASSED, events[-1].reason
    assert tested == [d.wrong_code(0), d.CODE]
    calls = [messages for role, messages in model.calls if role == "programmer"]
    assert len(calls) == 4 and "unified diff" in calls[1][0].content and "unified diff" not in calls[3][0].content
    assert [e.text for e in events if isinstance(e, Notice)].count(WHOLE_FROM_NOW) == 1


async def test_auto_asks_the_fix_of_a_small_file_whole():
    small = {"planner": [d.PLAN], "programmer": ["```python path=durations.py\nUNIT = 6\n```",
                                                  "```python path=durations.py\nUNIT = 60\n```"],
             "optimizer": [d.APPROVE] * 2, "tester": ["```python path=test_durations.py\nfrom durations import UNIT\n\n\n"
                                                      "def test_unit():\n    assert UNIT == 60\n```"],
             "manager": ["The unit is wrong.\nDECISION: fix_code"], "checkin": [d.README]}

    def verdict(job):
        if "UNIT = 60" in job.files["durations.py"]:
            return TestReport(TestStatus.PASSED, 0, 0.1, 1, 0, "1 passed")
        return TestReport(TestStatus.FAILED, 1, 0.1, 0, 1, "FAILED test_durations.py::test_unit - assert 6 == 60")

    model = ScriptedModel(small)
    manager = Manager(model, ScriptedSandbox(verdict), RecordingPublisher(), settings=TeamSettings())
    events = [e async for e in manager.run(RunRequest(task=d.TASK, run_id="r1"))]
    assert events[-1].status is RunStatus.PASSED
    first, fix = programmer_prompts(model)
    assert "Change the python code below" in fix and "unified diff" not in fix
