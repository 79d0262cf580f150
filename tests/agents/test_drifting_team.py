"""The whole workflow on replies that drift from the formats: the scripted OpenAI-compatible server on
loopback, the real ``openai`` client, and the real Docker sandbox running the tests the team wrote."""

from pathlib import Path

import pytest

from agents.events import TestReported, TurnFinished
from agents.manager import Manager
from agents.run_request import RunRequest
from agents.types import RunStatus
from bot.model.client import OpenAIChatModel
from bot.sandbox import DockerSandbox
from tests.docker_support import TEST_CONFIG
from tests.fakes import team_script as s
from tests.fakes.publishers import RecordingPublisher

pytestmark = pytest.mark.docker
CORPUS = Path(__file__).parent / "corpus"
PLAN = "Write intf.py with find_intf(obj), which walks dicts and lists and returns every ('intf', value) pair."


def corpus(name):
    return (CORPUS / name).read_text()


async def run_drifting(model_server, config, secrets, docker_client, **script):
    for role, replies in {"planner": [PLAN], "checkin": [s.README], **script}.items():
        model_server.script(role, *replies)
    async with DockerSandbox(TEST_CONFIG, client=docker_client) as sandbox:
        manager = Manager(OpenAIChatModel(config, secrets), sandbox, RecordingPublisher())
        return [e async for e in manager.run(RunRequest(task="find every intf key", run_id="d1"))]


async def test_unnamed_code_a_verdict_in_prose_and_unnamed_tests_pass_for_real(model_server, config, secrets,
                                                                                 docker_client):
    events = await run_drifting(model_server, config, secrets, docker_client,
                                programmer=[corpus("prose-one-unnamed-block.md")],
                                optimizer=[corpus("review-prose-approve.md")],
                                tester=[corpus("tester-one-unnamed-block.md")])
    final = events[-1]
    assert final.status is RunStatus.PASSED, final.reason
    assert set(final.files) == {"intf.py"} and set(final.tests) == {"test_intf.py"}
    assert final.report.passed == 2 and "2 passed" in final.report.stdout


async def test_a_test_file_that_does_not_parse_is_never_taken_and_the_tester_is_asked_again(
        model_server, config, secrets, docker_client):
    events = await run_drifting(model_server, config, secrets, docker_client,
                                programmer=[corpus("several-unnamed-blocks.md")],
                                optimizer=[corpus("review-echoes-both-choices.md")],
                                tester=[corpus("tester-test-file-that-does-not-parse.md"),
                                        corpus("tester-one-unnamed-block.md")])
    agents = [e.agent for e in events if isinstance(e, TurnFinished)]
    assert sorted(agents) == sorted(["planner", "programmer", "tester", "tester", "optimizer", "checkin"])  # no triage
    reports = [e.report for e in events if isinstance(e, TestReported)]
    assert len(reports) == 1 and reports[0].passed == 2  # the broken file never reached the sandbox
    assert events[-1].status is RunStatus.PASSED
    tester_retry = model_server.calls("tester")[1].body["messages"][-1]["content"]
    assert "test_intf.py is not valid Python (expected ':' (line 3))" in tester_retry


async def test_buggy_code_and_a_triage_without_a_decision_line_go_back_to_the_programmer(
        model_server, config, secrets, docker_client):
    buggy = corpus("bold-name-above-block.md").replace("found.extend(find_intf(value))", "pass")
    events = await run_drifting(model_server, config, secrets, docker_client,
                                programmer=[buggy, corpus("diff-instead-of-file.md")],
                                optimizer=[corpus("review-prose-approve.md")] * 2,
                                tester=[corpus("tester-one-unnamed-block.md")],
                                manager=[corpus("triage-no-decision.md")])
    reports = [e.report for e in events if isinstance(e, TestReported)]
    assert [r.status for r in reports] == ["failed", "passed"]
    assert "test_nested" in reports[0].stdout
    assert events[-1].status is RunStatus.PASSED, events[-1].reason
