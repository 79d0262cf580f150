"""The OpenAI-compatible client against the scripted server, through the real ``openai`` library."""

import asyncio

import pytest

from agents.errors import ModelError
from agents.types import Message, Usage
from bot.config import AgentSettings, Secrets
from bot.llm import OpenAIChatModel
from tests.conftest import with_changes
from tests.fakes.openai_server import Reply, error

MESSAGES = [Message("system", "You plan."), Message("user", "Write a parser.")]


class SleepLog:
    def __init__(self):
        self.waits = []

    async def __call__(self, seconds):
        self.waits.append(seconds)


async def collect(model, role="planner"):
    text, usage = [], None
    async for piece in model.stream(role, MESSAGES):
        if isinstance(piece, Usage):
            usage = piece
        else:
            text.append(piece)
    return "".join(text), usage


async def test_streams_the_reply_and_reports_usage(model_server, config, secrets):
    model_server.script("planner", Reply("A plan in several chunks.", chunk=5, usage=(123, 45)))
    text, usage = await collect(OpenAIChatModel(config, secrets))
    assert text == "A plan in several chunks."
    assert usage == Usage(123, 45)


async def test_every_request_names_its_agent_and_uses_that_agents_settings(model_server, config, secrets):
    import dataclasses

    config = dataclasses.replace(config, agents={"default": AgentSettings(temperature=0.1),
                                                 "programmer": AgentSettings(model="gpt-4o", max_tokens=999)})
    model_server.script("programmer", "code")
    await collect(OpenAIChatModel(config, secrets), role="programmer")
    call = model_server.calls("programmer")[0]
    assert call.headers["X-Codegen-Agent"] == "programmer"
    assert call.body["model"] == "gpt-4o" and call.body["max_tokens"] == 999 and call.body["temperature"] == 0.1
    assert call.body["stream"] is True and call.headers["Authorization"] == "Bearer sk-test-0123456789abcdef"


async def test_429_is_retried_after_the_servers_retry_after(model_server, config, secrets):
    model_server.script("planner", error(429, "slow down", retry_after="7"), Reply("ok"))
    sleep = SleepLog()
    text, _ = await collect(OpenAIChatModel(config, secrets, sleep=sleep))
    assert text == "ok" and sleep.waits == [7.0] and len(model_server.requests) == 2


async def test_5xx_until_retries_run_out_is_a_clear_error(model_server, config, secrets):
    model_server.script("planner", *[error(503)] * 5)
    sleep = SleepLog()
    with pytest.raises(ModelError, match=r"kept failing for the planner \(HTTP 503\) after 3 attempts"):
        await collect(OpenAIChatModel(config, secrets, sleep=sleep))
    assert len(model_server.requests) == 3 and len(sleep.waits) == 2
    assert sleep.waits[1] > sleep.waits[0] * 1.2  # exponential backoff


async def test_bad_credentials_are_not_retried(model_server, config, secrets):
    model_server.script("planner", error(401, "Incorrect API key provided: sk-test-0123456789abcdef"))
    with pytest.raises(ModelError, match="rejected the credentials") as caught:
        await collect(OpenAIChatModel(config, secrets))
    assert len(model_server.requests) == 1 and "sk-test" not in str(caught.value)


async def test_an_unknown_model_names_the_config_key(model_server, config, secrets):
    import dataclasses

    config = dataclasses.replace(config, agents={"default": AgentSettings(model="gpt-9-imaginary")})
    model_server.script("planner", "never sent")
    with pytest.raises(ModelError, match=r"'gpt-9-imaginary' \(used by the planner\) was not found.*agents.planner.model"):
        await collect(OpenAIChatModel(config, secrets))
    assert len(model_server.requests) == 1


async def test_a_refused_request_quotes_the_server_without_secrets(model_server, config, secrets):
    model_server.script("planner", error(400, "context too long for key sk-test-0123456789abcdef"))
    with pytest.raises(ModelError, match=r"HTTP 400\): context too long for key \[redacted\]"):
        await collect(OpenAIChatModel(config, secrets))


async def test_a_stall_mid_stream_times_out_with_a_clear_error_and_no_retry(model_server, config, secrets):
    config = with_changes(config, llm={"request_timeout_s": 0.3})
    model_server.script("planner", Reply("The first part, then silence.", chunk=5, stall_after=10))
    with pytest.raises(ModelError, match="stopped mid-reply for the planner: no answer within"):
        await collect(OpenAIChatModel(config, secrets))
    assert len(model_server.requests) == 1


async def test_a_stall_before_any_text_is_retried(model_server, config, secrets):
    config = with_changes(config, llm={"request_timeout_s": 0.3})
    model_server.script("planner", Reply("never", stall_after=0), Reply("second try"))
    text, _ = await collect(OpenAIChatModel(config, secrets, sleep=SleepLog()))
    assert text == "second try"


async def test_an_unreachable_endpoint_is_retried_then_reported(config, secrets):
    config = with_changes(config, llm={"base_url": "http://127.0.0.1:9/v1"})
    with pytest.raises(ModelError, match="cannot connect to http://127.0.0.1:9/v1"):
        await collect(OpenAIChatModel(config, secrets, sleep=SleepLog()))


async def test_cancelling_a_turn_closes_the_model_stream(model_server, config, secrets):
    model_server.script("planner", Reply("Some text, then a long think.", chunk=4, stall_after=8))
    model = OpenAIChatModel(config, secrets)
    first = asyncio.Event()

    async def consume():
        async for _ in model.stream("planner", MESSAGES):
            first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await model_server.hung_up() == 1


async def test_a_local_server_needs_no_api_key(model_server, config):
    model_server.script("planner", "ok")
    text, _ = await collect(OpenAIChatModel(config, Secrets()))
    assert text == "ok" and model_server.requests[0].headers["Authorization"] == "Bearer not-needed"


async def test_a_server_without_usage_gets_an_estimate(model_server, config, secrets):
    model_server.script("planner", Reply("x" * 40, omit_usage=True))
    text, usage = await collect(OpenAIChatModel(config, secrets))
    assert usage == Usage(len("You plan.Write a parser.") // 4, 10)


async def test_credentials_in_the_endpoint_url_never_reach_a_message(model_server, config, secrets):
    config = with_changes(config, llm={"base_url": "http://user:hunter2-secret@127.0.0.1:9/v1"})
    with pytest.raises(ModelError) as caught:
        await collect(OpenAIChatModel(config, secrets, sleep=SleepLog()))
    assert "hunter2" not in str(caught.value) and "cannot connect to http://127.0.0.1:9/v1" in str(caught.value)
