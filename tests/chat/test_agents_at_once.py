"""Two agents writing at the same time, as a chat thread shows them: one whole message per turn, in turn."""

from agents.manager import Manager, Order, TeamSettings
from agents.run_request import RunRequest
from agents.types import RunStatus
from bot.chat.renderer import RunRenderer
from bot.safety.redact import Redactor
from tests.fakes import team_script as s
from tests.fakes.chat_thread import RecordingThread, platform
from tests.fakes.publishers import RecordingPublisher
from tests.fakes.team_script import ScriptedModel, ScriptedSandbox


async def test_turns_written_at_once_each_get_their_own_whole_message():
    script = {**s.happy_path(), "programmer": [s.BUGGY_CODE, s.CODE], "optimizer": [s.APPROVE, s.APPROVE],
              "manager": [s.FIX_CODE]}
    model = ScriptedModel(script, chunk=8)  # small pieces: the Programmer and the Tester stream at the same time
    manager = Manager(model, ScriptedSandbox(), RecordingPublisher(), settings=TeamSettings(order=Order.OVERLAPPED))
    thread = RecordingThread()
    renderer = RunRenderer(thread, platform(), Redactor(()))
    await renderer.open("r1")
    async for event in manager.run(RunRequest(task="find all intf keys", run_id="r1")):
        await renderer(event)
    final = await renderer.done()
    assert final is not None and final.status is RunStatus.PASSED
    turns = [m.text for m in thread.messages if m.text.startswith("**")]
    heads = [text.split("\n", 1)[0].split("**")[1] for text in turns]
    assert heads[:5] == ["Planner", "Programmer", "Tester", "Optimizer (review)", "Manager (triage)"]
    programmer, tester = turns[1], turns[2]
    assert "def find_intf" in programmer and "def test_nested" not in programmer
    assert "def test_nested" in tester and "def find_intf(obj):" not in tester
    assert not any("cut short" in text for text in thread.texts())
    status = 0  # the status message at the top sums up every round too; the test report is a message of its own
    results = [i for i, text in enumerate(thread.texts()) if "passed, 1 failed" in text and i != status]
    optimizer = next(i for i, text in enumerate(thread.texts()) if text.startswith("**Optimizer"))
    manager_turn = next(i for i, text in enumerate(thread.texts()) if text.startswith("**Manager"))
    assert optimizer < results[0] < manager_turn  # the review, the result it ran beside, then its triage
