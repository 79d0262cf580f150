"""The examples a task's files give in their docstrings run as tests nobody edits, and files that already hold
the functions to write stand for the plan: the scripted model on loopback, the real client, the real sandbox."""

import pytest

from agents.events import TestReported, TurnFinished
from agents.manager import Manager
from agents.run_request import RunRequest
from agents.task_examples import example_tests
from agents.types import Attachment, FileSet, RunStatus
from bot.model.client import OpenAIChatModel
from bot.sandbox import DockerSandbox
from tests.docker_support import TEST_CONFIG
from tests.fakes import team_script as s
from tests.fakes.publishers import RecordingPublisher

STUB = '''def add(a: int, b: int) -> int:
    """The sum of a and b.
    >>> add(2, 3)
    5
    >>> add(-1, 1)
    0
    """
'''
WRONG = "```python path=calc.py\ndef add(a: int, b: int) -> int:\n    return a * b\n```\n"
RIGHT = "```python path=calc.py\ndef add(a: int, b: int) -> int:\n    return a + b\n```\n"
TESTS = "```python path=test_calc.py\nfrom calc import add\n\n\ndef test_add():\n    assert add(1, 1) == 2\n```\n"


def test_only_files_whose_docstrings_hold_examples_get_an_examples_test():
    tests = example_tests(FileSet({"calc.py": STUB, "pkg/util.py": "def f():\n    '''No example.'''\n",
                                   "test_calc.py": STUB}))
    assert list(tests) == ["test_task_examples_calc.py"]
    assert "import calc as module" in tests["test_task_examples_calc.py"] and "add(2, 3)" in tests["test_task_examples_calc.py"]


@pytest.mark.docker
async def test_the_examples_catch_wrong_code_before_any_model_test_and_no_plan_is_asked_for(
        model_server, config, secrets, docker_client):
    model_server.script("programmer", WRONG, RIGHT)
    model_server.script("tester", TESTS)
    model_server.script("optimizer", s.APPROVE, s.APPROVE)
    model_server.script("manager", "The code multiplies.\nDECISION: fix_code")
    model_server.script("checkin", s.README)
    request = RunRequest(task="Complete add in calc.py.", run_id="ex1", attachments=(Attachment("calc.py", STUB),))
    async with DockerSandbox(TEST_CONFIG, client=docker_client) as sandbox:
        manager = Manager(OpenAIChatModel(config, secrets), sandbox, RecordingPublisher())
        events = [e async for e in manager.run(request)]
    assert events[-1].status is RunStatus.PASSED, events[-1].reason
    agents = [e.agent for e in events if isinstance(e, TurnFinished)]
    assert "planner" not in agents and agents[0] in ("programmer", "tester")
    first, second = [e.report for e in events if isinstance(e, TestReported)]
    assert "Failed example:" in first.stdout and "add(2, 3)" in first.stdout and "Got:" in first.stdout
    assert second.ok and second.passed == 2  # the examples and the Tester's test
    assert "test_task_examples_calc.py" in events[-1].user_tests
    fixing = model_server.calls("programmer")[1].body["messages"][1]["content"]
    assert "Failed example:" in fixing


@pytest.mark.docker
async def test_a_programmer_echoing_the_stub_is_asked_again_and_never_shown_the_examples_file(
        model_server, config, secrets, docker_client):
    echo = f"```python path=calc.py\n{STUB}```\n"
    model_server.script("programmer", echo, RIGHT)
    model_server.script("tester", TESTS)
    model_server.script("optimizer", s.APPROVE)
    model_server.script("checkin", s.README)
    request = RunRequest(task="Complete add in calc.py.", run_id="ex2", attachments=(Attachment("calc.py", STUB),))
    async with DockerSandbox(TEST_CONFIG, client=docker_client) as sandbox:
        manager = Manager(OpenAIChatModel(config, secrets), sandbox, RecordingPublisher())
        events = [e async for e in manager.run(request)]
    assert events[-1].status is RunStatus.PASSED, events[-1].reason
    first, again = (call.body["messages"] for call in model_server.calls("programmer"))
    assert "test_task_examples_calc.py" not in first[1]["content"]
    assert "calc.py came back unchanged (add still only a signature and a docstring)" in again[-1]["content"]
    assert [e.report.passed for e in events if isinstance(e, TestReported)] == [2]
