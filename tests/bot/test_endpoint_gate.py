"""A model server that answers one request at a time and drops the reply under way when another arrives
(llama-cpp-python's server does): the client finds it out, asks the dropped reply again, and from then on
sends one request at a time, so a team whose agents write at once, or two runs at once, lose nothing."""

from __future__ import annotations

import asyncio

import pytest

from agents.events import Notice, RunFinished
from agents.manager import Manager, Order, TeamSettings
from agents.run_request import RunRequest
from agents.types import Message, RunStatus, Usage
from bot.config.sections import Config, LLMConfig, StorageConfig
from bot.model.client import OpenAIChatModel
from tests.fakes import team_script as s
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.publishers import RecordingPublisher
from tests.fakes.team_script import ScriptedSandbox

PLANNER_TEXT = "A plan in a few words, long enough to stream in several pieces. " * 3
TESTER_TEXT = "Tests that take their time to stream, piece by piece, as a slow server does. " * 3


def config_for(server: FakeOpenAI, tmp_path, parallel: int = 0) -> Config:
    return Config(llm=LLMConfig(base_url=server.base_url, request_timeout_s=5.0, max_retries=1, backoff_s=0.01,
                                parallel_requests=parallel),
                  storage=StorageConfig(path=str(tmp_path / "db.sqlite3")))


async def reply_of(model: OpenAIChatModel, role: str) -> tuple[str, Usage | None]:
    text, usage = "", None
    async for piece in model.stream(role, [Message("user", f"the {role}'s task")]):
        if isinstance(piece, Usage):
            usage = piece
        else:
            text += piece
    return text, usage


@pytest.mark.parametrize("dropped_at", ["before its first token", "mid-reply"])
async def test_a_reply_dropped_for_another_request_is_asked_again_and_requests_go_one_at_a_time(
        tmp_path, secrets, dropped_at):
    first_token_s = 0.2 if dropped_at == "before its first token" else 0.0
    async with FakeOpenAI(one_at_a_time=True, pace=(first_token_s, 400.0)) as server:
        server.script("planner", Reply(PLANNER_TEXT, chunk=8), Reply(PLANNER_TEXT, chunk=8))
        server.script("tester", Reply(TESTER_TEXT, chunk=8), Reply(TESTER_TEXT, chunk=8))
        model = OpenAIChatModel(config_for(server, tmp_path), secrets)
        planner = asyncio.create_task(reply_of(model, "planner"))
        await asyncio.sleep(0.05)  # the planner's reply is under way when the tester's request arrives
        if dropped_at == "mid-reply":
            results = await asyncio.gather(planner, reply_of(model, "tester"), return_exceptions=True)
        else:
            results = list(await asyncio.gather(planner, reply_of(model, "tester")))
        await model.close()
    assert server.dropped == 1 and server.overlapped_after_drop == 0  # found out once; never again at once
    assert results[1] == (TESTER_TEXT, results[1][1])
    if dropped_at == "before its first token":  # nothing was shown: asked again at once, whole
        assert results[0][0] == PLANNER_TEXT
        assert len(server.calls("planner")) == 2
    else:  # text was shown: the caller is told, to ask again (the Manager does)
        assert type(results[0]).__name__ == "ReplyDropped"
        assert "answers one request at a time" in str(results[0])


async def test_parallel_requests_1_sends_one_at_a_time_from_the_start(tmp_path, secrets):
    async with FakeOpenAI(one_at_a_time=True, pace=(0.05, 400.0)) as server:
        server.script("planner", Reply(PLANNER_TEXT, chunk=8))
        server.script("tester", Reply(TESTER_TEXT, chunk=8))
        model = OpenAIChatModel(config_for(server, tmp_path, parallel=1), secrets)
        results = await asyncio.gather(reply_of(model, "planner"), reply_of(model, "tester"))
        await model.close()
    assert [text for text, _ in results] == [PLANNER_TEXT, TESTER_TEXT]
    assert server.dropped == 0


async def test_a_server_that_answers_at_once_keeps_getting_requests_at_once(tmp_path, secrets):
    async with FakeOpenAI(pace=(0.1, 400.0)) as server:
        server.script("planner", Reply(PLANNER_TEXT, chunk=8))
        server.script("tester", Reply(TESTER_TEXT, chunk=8))
        model = OpenAIChatModel(config_for(server, tmp_path), secrets)
        results = await asyncio.gather(reply_of(model, "planner"), reply_of(model, "tester"))
        await model.close()
    assert [text for text, _ in results] == [PLANNER_TEXT, TESTER_TEXT]
    assert not model.gate._serial  # nothing was dropped: no reason to wait


@pytest.mark.parametrize("first_token_s", [0.0, 0.2], ids=["dropped-mid-reply", "dropped-before-a-token"])
async def test_a_team_writing_at_once_on_such_a_server_reaches_its_tests_and_passes(tmp_path, secrets,
                                                                                    first_token_s):
    async with FakeOpenAI(one_at_a_time=True, pace=(first_token_s, 2000.0)) as server:
        for role, replies in s.happy_path().items():
            server.script(role, *[Reply(r, chunk=16) if isinstance(r, str) else r for r in replies] * 2)
        model = OpenAIChatModel(config_for(server, tmp_path), secrets)
        manager = Manager(model, ScriptedSandbox(), RecordingPublisher(),
                          settings=TeamSettings(order=Order.OVERLAPPED))
        events = [e async for e in manager.run(RunRequest(task="find all intf keys", run_id="r1"))]
        await model.close()
    final = events[-1]
    assert isinstance(final, RunFinished) and final.status is RunStatus.PASSED, final.reason
    assert server.dropped == 1 and server.overlapped_after_drop == 0
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert all("Trimming" not in n for n in notices)  # nothing was wrong with the prompts
