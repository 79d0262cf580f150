"""Every role's template renders with what the Manager gives it, and a missing variable fails loudly."""

import jinja2
import pytest

from agents.prompts import PromptBook
from agents.types import Attachment, Role, TestReport, TestStatus

FILES = {"intf.py": "def find_intf(obj):\n    return []\n"}
TESTS = {"test_intf.py": "def test_x():\n    assert True\n"}
REPORT = TestReport(TestStatus.FAILED, 1, 0.5, 1, 1, "FAILED test_intf.py::test_x - assert 1 == 2")

CONTEXTS = {
    Role.PLANNER: dict(task="T", attachments=(Attachment("main.py", "print(1)\n"),), prior_tasks=("earlier",),
                       files=FILES, user_tests=["test_user.py"], previous_plan="old", replan_reason="why"),
    Role.PROGRAMMER: dict(task="T", plan="P", language="python", files=FILES, tests=TESTS, review_notes="fix x",
                          report=REPORT, triage_reason="the code is wrong",
                          reply_notes=("Not saved: file path '../x.py' must stay inside the project.",)),
    Role.OPTIMIZER: dict(task="T", plan="P", files=FILES, previous_review="earlier review"),
    Role.TESTER: dict(task="T", plan="P", language="python", files=FILES, user_tests=[], tests=TESTS, report=REPORT,
                      triage_reason="the test is wrong", reply_notes=()),
    Role.MANAGER: dict(task="T", plan="P", files=FILES, tests=TESTS, report=REPORT, can_fix_tests=True, can_replan=True),
    Role.CHECKIN: dict(task="T", language="python", files=list(FILES), tests=list(TESTS), status="passed",
                       report=REPORT, plan="P"),
}


@pytest.mark.parametrize("role", list(Role))
def test_each_template_renders_a_system_and_a_user_message(role):
    system, user = PromptBook().render(role, **CONTEXTS[role])
    assert (system.role, user.role) == ("system", "user")
    assert system.content.strip() and "T" in user.content
    assert "\n\n\n" not in user.content  # blank runs left by conditionals are squeezed


@pytest.mark.parametrize("role", list(Role))
def test_a_missing_variable_fails_loudly(role):
    context = dict(CONTEXTS[role])
    context.pop("task", None) or context.pop("plan")
    with pytest.raises(jinja2.UndefinedError):
        PromptBook().render(role, **context)


def test_files_reach_the_programmer_fenced_with_their_paths():
    _, user = PromptBook().render(Role.PROGRAMMER, **CONTEXTS[Role.PROGRAMMER])
    assert "```python path=intf.py\ndef find_intf(obj):" in user.content
    assert "FAILED test_intf.py::test_x" in user.content and "fix x" in user.content


def test_the_manager_is_told_when_fixing_tests_or_replanning_is_not_allowed():
    context = {**CONTEXTS[Role.MANAGER], "can_fix_tests": False, "can_replan": False}
    system, _ = PromptBook().render(Role.MANAGER, **context)
    assert "Not allowed now" in system.content and "replan" not in system.content


def test_what_a_reply_lost_is_told_to_its_author_next_time():
    _, user = PromptBook().render(Role.PROGRAMMER, **CONTEXTS[Role.PROGRAMMER])
    assert user.content.rstrip().endswith("- Not saved: file path '../x.py' must stay inside the project.")
    assert "## About your last reply" in user.content
