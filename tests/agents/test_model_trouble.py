"""Whole runs against an endpoint that misbehaves the way real servers do: the scripted server on
loopback, the real ``openai`` client. Every run ends with the status and the sentence that fit."""

import dataclasses

import pytest

from agents.events import Notice, TestReported
from agents.manager import Manager
from agents.run_request import RunRequest
from agents.types import FileSet, PriorWork, RunStatus
from bot.config.sections import AgentSettings
from bot.model.client import OpenAIChatModel
from tests.conftest import with_changes
from tests.fakes import team_script as s
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.publishers import RecordingPublisher
from tests.fakes.team_script import ScriptedSandbox


async def run_against(server, config, secrets, request=None, **agent):
    config = with_changes(config, llm={"base_url": server.base_url})
    if agent:
        config = dataclasses.replace(config, agents={"default": AgentSettings(**agent)})
    manager = Manager(OpenAIChatModel(config, secrets), ScriptedSandbox(), RecordingPublisher())
    return [e async for e in manager.run(request or RunRequest(task="find every intf key", run_id="m1"))]


def script_team(server, **overrides):
    for role, replies in {**s.happy_path(), **overrides}.items():
        server.script(role, *replies)


async def test_a_follow_up_too_long_for_a_small_context_is_trimmed_and_reaches_its_tests(config, secrets):
    """llama-cpp-python's way: HTTP 200 and an empty stream for a prompt over the context."""
    old = "def helper():\n" + "    value = compute_something_long()\n" * 300  # ~10,000 characters
    prior = PriorWork(tasks=("t",), plan=s.PLAN, files=FileSet({"helper.py": old, "intf.py": "x = 1\n"}),
                      language="python")
    request = RunRequest(task="now recurse into dict values", run_id="m2", prior=prior)
    async with FakeOpenAI(context=2048, overflow="llama-cpp-python") as server:
        script_team(server)
        events = await run_against(server, config, secrets, request=request, max_tokens=512)
        calls = [(c.agent, c.body.get("stream")) for c in server.requests]
    assert events[-1].status is RunStatus.PASSED, events[-1].reason
    assert ("planner", True) in calls and ("planner", False) in calls  # the empty stream was asked about once
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert any("does not fit the context of gpt-4o-mini" in n and "Trimming the prompt" in n for n in notices)
    assert any(isinstance(e, TestReported) for e in events)


async def test_an_endpoint_answering_html_ends_the_run_with_one_sentence_naming_it(model_server, config, secrets):
    model_server.script_any(Reply(raw=b"<!doctype html><title>Login</title>", content_type="text/html"))
    events = await run_against(model_server, config, secrets)
    final = events[-1]
    assert final.status is RunStatus.ERROR and f"The model endpoint {model_server.base_url}" in final.reason
    assert "an HTML page" in final.reason and "plan was empty" not in final.reason and "internal" not in final.reason


@pytest.mark.parametrize("reply, words", [
    (Reply(raw=b"data: {oops\n\n", content_type="text/event-stream"), "not valid server-sent events"),
    (Reply(raw=b'data: {"id": "1", "object": "chat.completion.chunk", "created": 0, "model": "m"}\n\n',
           content_type="text/event-stream"), "without 'choices'"),
])
async def test_a_malformed_stream_ends_the_run_naming_the_endpoint(model_server, config, secrets, reply, words):
    model_server.script("planner", reply)
    events = await run_against(model_server, config, secrets)
    assert events[-1].status is RunStatus.ERROR and words in events[-1].reason
    assert model_server.base_url in events[-1].reason


async def test_empty_replies_end_the_run_as_empty_replies_with_the_prompts_size(model_server, config, secrets):
    model_server.script("planner", *[Reply("")] * 4)  # each empty stream is asked about once, non-streamed
    events = await run_against(model_server, config, secrets)
    final = events[-1]
    assert final.status is RunStatus.ERROR and "sent an empty reply for the planner" in final.reason
    assert "the prompt was about" in final.reason and "did not help" in final.reason


async def test_a_plain_json_completion_still_makes_a_run(model_server, config, secrets):
    for role, replies in s.happy_path().items():
        model_server.script(role, *[Reply(text, ignore_stream=True) for text in replies])
    events = await run_against(model_server, config, secrets)
    assert events[-1].status is RunStatus.PASSED
