"""Smoke test against a real small model (SmolLM2-135M-Instruct on llama-cpp-python's server, a 2,048-token
context, no usage in its stream) with the real Docker sandbox: whatever such a model writes, every run
reaches the test stage and ends ``passed`` or ``failed`` with the real test output (or ``stopped``
because the tests it wrote passed but could not fail), never ``error`` because of the reply format. A
model this small rarely writes correct tests; the run must say so honestly, not stop at its replies."""

import dataclasses
import time

import pytest

from agents.events import Notice, TestReported, TurnFinished
from agents.manager import Budget, Manager, TeamSettings
from agents.run_request import RunRequest
from agents.types import RunStatus
from bot.config.sections import AgentSettings, Config, LLMConfig
from bot.model.client import OpenAIChatModel
from bot.sandbox import DockerSandbox
from tests.docker_support import TEST_CONFIG
from tests.fakes.publishers import RecordingPublisher
from tests.smoke.conftest import MODEL

pytestmark = [pytest.mark.docker, pytest.mark.model]

TASKS = [
    "Write a python function add(a, b) that returns the sum of two numbers.",
    "Write a python function is_palindrome(text) that tells whether a string reads the same backwards.",
    "Write a python function that finds all properties with a key of 'intf' within all nested child objects "
    "and returns a list of all key value pairs that match",
]


@pytest.mark.parametrize("task", TASKS, ids=["add", "palindrome", "intf"])
async def test_a_small_local_model_reaches_an_honest_test_result(local_model_url, docker_client, secrets, task):
    config = Config(llm=LLMConfig(base_url=local_model_url, request_timeout_s=120.0, max_retries=1, backoff_s=0.5),
                    agents={"default": AgentSettings(model=MODEL, temperature=0.2, max_tokens=768)})
    model = OpenAIChatModel(config, dataclasses.replace(secrets, openai_api_key=""))
    settings = TeamSettings(budget=Budget(max_rounds=2, max_wall_s=900))
    started = time.monotonic()
    async with DockerSandbox(TEST_CONFIG, client=docker_client) as sandbox:
        manager = Manager(model, sandbox, RecordingPublisher(), settings=settings)
        events = [e async for e in manager.run(RunRequest(task=task, run_id="smoke"))]
    await model.close()
    final = events[-1]
    reports = [e.report for e in events if isinstance(e, TestReported)]
    turns = [e for e in events if isinstance(e, TurnFinished)]
    print(f"\n{task[:40]}: {final.status} in {time.monotonic() - started:.0f}s, {len(turns)} turns, "
          f"{len(reports)} test runs; {final.reason}")
    for notice in (e.text for e in events if isinstance(e, Notice)):
        print(f"  ! {notice}")
    # Passed or failed on a test result; or stopped because the tests it wrote passed but could not fail.
    honest_stop = final.status is RunStatus.STOPPED and "cannot fail" in final.reason
    assert final.status in (RunStatus.PASSED, RunStatus.FAILED) or honest_stop, final.reason
    assert reports and final.report is not None
    assert (final.report.stdout + final.report.stderr).strip()  # the runner's own words, not ours
    assert all(t.usage.estimated for t in turns)  # this server sends no usage: every count is an estimate
