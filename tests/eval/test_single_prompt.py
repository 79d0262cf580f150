"""The eval's single attempt shows its one Programmer call what the team's first Programmer turn is shown: the
same builder makes both prompts, so a change to what the Programmer sees reaches both modes alike."""

from agents.manager import Manager, TeamSettings
from agents.prompts import PromptBook
from agents.run_request import RunRequest
from agents.types import Attachment, FileSet
from bot.eval.attempts import NO_PLAN, Parts, attempt
from bot.eval.modes import MODES
from bot.eval.problems import Problem
from tests.fakes import team_script as s
from tests.fakes.publishers import RecordingPublisher
from tests.fakes.team_script import ScriptedModel, ScriptedSandbox

STUB = 'def find_intf(obj):\n    """Every value under an "intf" key, at any depth."""\n'
USER_TEST = "from intf import find_intf\n\n\ndef test_top():\n    assert find_intf({'intf': 1}) == [1]\n"
TASK = "find all intf keys"


async def test_the_single_attempt_and_the_teams_programmer_are_shown_the_same_prompt():
    problem = Problem("p1", "python", TASK, hidden_tests=FileSet(),
                      starter=FileSet({"intf.py": STUB, "test_user.py": USER_TEST}))
    single = ScriptedModel({"programmer": [s.CODE]})
    parts = Parts(single, ScriptedSandbox(), PromptBook(), TeamSettings(), {})
    done = await attempt(problem, MODES["single"], parts, "e1")
    assert done.status == "answered" and "found.extend" in done.files["intf.py"]

    team = ScriptedModel(fallback=s.TEAM_DEFAULTS)  # given stubs, the team's Programmer writes first, with no plan
    settings = TeamSettings(review=False, check_in=False, task_examples=False)
    request = RunRequest(task=TASK, run_id="r1", attachments=tuple(Attachment(p, c) for p, c in problem.starter.items()))
    [event async for event in Manager(team, ScriptedSandbox(), RecordingPublisher(), settings=settings).run(request)]

    (role, one_call), = single.calls
    team_call = next(messages for r, messages in team.calls if r == "programmer")
    assert role == "programmer" and one_call[0] == team_call[0]  # the same instructions
    # Given a file to complete, neither is shown a plan: the single attempt is the team's first Programmer turn.
    assert one_call[1].content == team_call[1].content and NO_PLAN not in one_call[1].content
    assert "```python path=intf.py\n" + STUB in one_call[1].content and "test_user.py" in one_call[1].content
