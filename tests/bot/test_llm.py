"""The OpenAI-compatible client against the scripted server, through the real ``openai`` library."""

import asyncio
import contextlib
import dataclasses
import json

import pytest

from agents.errors import ModelError
from agents.types import Message, Usage
from bot.config.sections import AgentSettings, Secrets
from bot.model.client import MAX_CHARS_PER_TOKEN, OpenAIChatModel
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


async def test_a_calls_own_temperature_replaces_the_agents_for_that_call_only(model_server, config, secrets):
    config = dataclasses.replace(config, agents={"default": AgentSettings(temperature=0.1)})
    model_server.script("programmer", "sampled", "as configured")
    model = OpenAIChatModel(config, secrets)
    for temperature in (0.8, None):
        async for _ in model.stream("programmer", MESSAGES, temperature):
            pass
    assert [call.body["temperature"] for call in model_server.calls("programmer")] == [0.8, 0.1]


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
    assert usage == Usage(len("You plan.Write a parser.") // 4, 10, estimated=True)
    assert usage.tokens_text() == "~6 in / ~10 out (estimated)"


async def test_credentials_in_the_endpoint_url_never_reach_a_message(model_server, config, secrets):
    config = with_changes(config, llm={"base_url": "http://user:hunter2-secret@127.0.0.1:9/v1"})
    with pytest.raises(ModelError) as caught:
        await collect(OpenAIChatModel(config, secrets, sleep=SleepLog()))
    assert "hunter2" not in str(caught.value) and "cannot connect to http://127.0.0.1:9/v1" in str(caught.value)


# -- replies that are not what they seem -------------------------------------------------------------

from agents.errors import EmptyReply, PromptTooLong, ReplyCut  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI  # noqa: E402


async def partial(model, role="planner", messages=MESSAGES):
    """The text that arrived before the stream failed, and the failure."""
    text = []
    with pytest.raises(Exception) as caught:
        async for piece in model.stream(role, messages):
            if isinstance(piece, str):
                text.append(piece)
    return "".join(text), caught.value


async def test_keep_alive_comments_do_not_count_as_an_answer(model_server, config, secrets):
    config = with_changes(config, llm={"request_timeout_s": 0.4})
    model_server.script("planner", Reply("The first part, then pings only.", chunk=5, stall_after=10, keepalive_s=0.05))
    text, error = await partial(OpenAIChatModel(config, secrets))
    assert isinstance(error, ModelError) and "stopped mid-reply for the planner: no answer within 0.4s" in str(error)
    assert text == "The first part, then pings only."[:10]


async def test_a_busy_server_pinging_before_any_text_is_retried(model_server, config, secrets):
    config = with_changes(config, llm={"request_timeout_s": 0.4})
    model_server.script("planner", Reply("never", stall_after=0, keepalive_s=0.05), Reply("second try"))
    text, _ = await collect(OpenAIChatModel(config, secrets, sleep=SleepLog()))
    assert text == "second try" and len(model_server.requests) == 2


async def test_a_reply_cut_at_max_tokens_is_named_after_its_text(model_server, config, secrets):
    model_server.script("planner", Reply("A plan that goes on and", finish="length"))
    text, error = await partial(OpenAIChatModel(config, secrets))
    assert text == "A plan that goes on and"
    assert isinstance(error, ReplyCut) and "reached its limit of 4,096 tokens before it ended" in str(error)
    assert "the prompt was about" in str(error)


@pytest.mark.parametrize("max_tokens", [10, 50])
async def test_a_reply_that_never_ends_is_cut_at_its_size_cap_and_the_stream_closed(model_server, config, secrets,
                                                                                   max_tokens):
    config = dataclasses.replace(config, agents={"default": AgentSettings(max_tokens=max_tokens)})
    model_server.script("planner", Reply("all work and no play " * 50, chunk=64, endless=True))
    text, error = await partial(OpenAIChatModel(config, secrets))
    assert isinstance(error, ReplyCut) and "was cut there" in str(error)
    assert len(text) == max_tokens * MAX_CHARS_PER_TOKEN
    assert await model_server.hung_up(within=5) == 1


@pytest.mark.parametrize("raw, content_type, words", [
    (b"<html><body>Welcome to nginx!</body></html>", "text/html", "answered with an HTML page (text/html)"),
    (b"Not here", "text/plain", "answered with plain text (text/plain)"),
    (b"data: {not json\n\n", "text/event-stream", "not valid server-sent events"),
    (b'data: {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m"}\n\ndata: [DONE]\n\n',
     "text/event-stream", "a stream chunk without 'choices'"),
    (b'{"status": "ok"}', "application/json", "answered with JSON that is not a chat completion"),
])
async def test_a_malformed_answer_is_one_sentence_naming_the_endpoint(model_server, config, secrets, raw,
                                                                      content_type, words):
    model_server.script("planner", Reply(raw=raw, content_type=content_type))
    _, error = await partial(OpenAIChatModel(config, secrets))
    assert isinstance(error, ModelError) and words in str(error) and model_server.base_url in str(error)
    assert str(error).count(". ") <= 1 and "\n" not in str(error)


async def test_a_plain_json_completion_to_a_streamed_request_is_taken_as_the_reply(model_server, config, secrets):
    model_server.script("planner", Reply("The whole plan at once.", ignore_stream=True, usage=(30, 6)))
    text, usage = await collect(OpenAIChatModel(config, secrets))
    assert text == "The whole plan at once." and usage == Usage(30, 6)


@pytest.mark.parametrize("reply", [Reply("\ufeff```python path=a.py\nx = 1\n```\n", chunk=1),
                                   Reply("\ufeff```python path=a.py\nx = 1\n```\n", ignore_stream=True)])
async def test_a_byte_order_mark_a_server_starts_a_reply_with_is_dropped(model_server, config, secrets, reply):
    model_server.script("planner", reply)
    text, _ = await collect(OpenAIChatModel(config, secrets))
    assert text == "```python path=a.py\nx = 1\n```\n"


async def test_an_empty_reply_is_named_with_the_prompts_size(model_server, config, secrets):
    model_server.script("planner", Reply(""), Reply(""))  # the second answers the diagnosis
    _, error = await partial(OpenAIChatModel(config, secrets))
    assert isinstance(error, EmptyReply) and "sent an empty reply for the planner" in str(error)
    assert "the prompt was about" in str(error)


async def with_server(config, **options):
    server = FakeOpenAI(**options)
    await server.__aenter__()
    return server, with_changes(config, llm={"base_url": server.base_url})


@pytest.mark.parametrize("overflow", ["openai", "llama-cpp-python"])
async def test_a_prompt_longer_than_the_context_is_named_as_such_with_the_numbers(config, secrets, overflow):
    server, config = await with_server(config, models=("gpt-4o-mini",), context=50, overflow=overflow)
    try:
        server.script("planner", Reply("never sent"))
        long = [Message("system", "You plan."), Message("user", "word " * 200)]
        _, error = await partial(OpenAIChatModel(config, secrets), messages=long)
    finally:
        await server.__aexit__()
    assert isinstance(error, PromptTooLong) and error.context == 50
    assert "prompt (about 25" in str(error) and "does not fit the context of gpt-4o-mini" in str(error)
    assert "(50 tokens)" in str(error)


@pytest.mark.parametrize("advertise", ["models", "props"])
async def test_max_tokens_is_clamped_to_the_context_the_endpoint_reports(config, secrets, advertise):
    server, config = await with_server(config, models=("gpt-4o-mini",), context=2048, advertise=advertise)
    try:
        server.script("planner", Reply("ok"))
        model = OpenAIChatModel(config, secrets)
        text, _ = await collect(model)
        assert await model.context_window("gpt-4o-mini") == 2048
    finally:
        await server.__aexit__()
    sent = server.calls("planner")[0].body["max_tokens"]
    assert text == "ok" and 1900 < sent < 2048  # the configured 4,096 cannot fit


async def test_a_context_error_that_leaves_room_for_a_reply_is_retried_within_the_window(config, secrets):
    server, config = await with_server(config, models=("gpt-4o-mini",), context=1000)  # says so only when refusing
    try:
        server.script("planner", Reply("fits now"))
        text, _ = await collect(OpenAIChatModel(config, secrets))
    finally:
        await server.__aexit__()
    first, second = server.calls("planner")
    assert first.body["max_tokens"] == 4096 and second.body["max_tokens"] <= 1000 - 6
    assert text == "fits now"


def _sse(text: str) -> bytes:
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "gpt-4o-mini",
             "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
    data = f"data: {json.dumps(chunk)}\n\n".encode()
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


@contextlib.asynccontextmanager
async def dropping_server(after_text: bool):
    """A model server that takes the request, then drops the connection: after some streamed text, or at once."""
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        if after_text:
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                         + _sse("The plan: ") + _sse("first, "))
            await writer.drain()
            await asyncio.sleep(0.05)
        writer.transport.abort()  # a reset, as a crashed server or a proxy's limit leaves it

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    async with server:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"


@pytest.mark.parametrize(("after_text", "words"), [
    (True, "The model stopped mid-reply for the planner: the server at {url} closed the connection."),
    (False, "The model endpoint kept failing for the planner (the server at {url} closed the connection before "
            "answering) after 2 attempts."),
])
async def test_a_connection_dropped_by_the_server_is_not_called_unreachable(config, secrets, after_text, words):
    async with dropping_server(after_text) as url:
        config = with_changes(config, llm={"base_url": url, "max_retries": 1})
        with pytest.raises(ModelError) as caught:
            await collect(OpenAIChatModel(config, secrets, sleep=SleepLog()))
    assert str(caught.value) == words.format(url=url) and "cannot connect" not in str(caught.value)


def _sse_event(payload: dict) -> bytes:
    return f"data: {json.dumps(payload)}\r\n\r\n".encode()


def _text_chunk(text: str, finish: str | None = None) -> dict:
    return {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "gpt-4o-mini",
            "choices": [{"index": 0, "delta": {"content": text} if text else {}, "finish_reason": finish}]}


async def test_a_stream_read_as_plain_events_keeps_text_finish_and_usage(model_server, config, secrets):
    raw = (b": a comment first\r\n\r\n" + _sse_event(_text_chunk("Hello, ")) + _sse_event(_text_chunk("world."))
           + _sse_event(_text_chunk("", "stop")) + _sse_event({"choices": [], "usage": {"prompt_tokens": 11,
                                                                                        "completion_tokens": 3}})
           + b"data: [DONE]\r\n\r\n")
    model_server.script("planner", Reply(raw=raw))
    assert await collect(OpenAIChatModel(config, secrets)) == ("Hello, world.", Usage(11, 3))


async def test_an_error_sent_inside_the_stream_before_any_text_is_retried(model_server, config, secrets):
    model_server.script("planner", Reply(raw=_sse_event({"error": {"message": "the server is overloaded"}})),
                        Reply("second try"))
    sleep = SleepLog()
    text, _ = await collect(OpenAIChatModel(config, secrets, sleep=sleep))
    assert text == "second try" and len(sleep.waits) == 1 and len(model_server.requests) == 2


async def test_an_error_sent_inside_the_stream_after_text_stops_the_reply_naming_it(model_server, config, secrets):
    raw = _sse_event(_text_chunk("The plan: ")) + _sse_event({"error": {"message": "the server is overloaded"}})
    model_server.script("planner", Reply(raw=raw))
    text, failure = await partial(OpenAIChatModel(config, secrets, sleep=SleepLog()))
    assert text == "The plan: " and len(model_server.requests) == 1
    assert str(failure) == "The model stopped mid-reply for the planner: the server is overloaded."


async def test_a_reply_cut_at_max_tokens_in_raw_events_is_named_so(model_server, config, secrets):
    raw = _sse_event(_text_chunk("The plan: first")) + _sse_event(_text_chunk("", "length")) + b"data: [DONE]\n\n"
    model_server.script("planner", Reply(raw=raw))
    text, failure = await partial(OpenAIChatModel(config, secrets))
    assert text == "The plan: first" and isinstance(failure, ReplyCut) and "reached its limit" in str(failure)


async def test_replies_one_after_another_share_one_kept_alive_connection(model_server, config, secrets):
    model = OpenAIChatModel(config, secrets)
    for text in ("one", "two", "three"):
        model_server.script("planner", Reply(text * 40, chunk=7))
        assert (await collect(model))[0] == text * 40
    assert len({r.peer for r in model_server.requests}) == 1
    await model.close()


async def test_an_openai_organization_and_project_from_the_environment_go_with_every_request(model_server, config):
    secrets = Secrets.from_env({"OPENAI_API_KEY": "sk-test-0123456789abcdef", "OPENAI_ORG_ID": "org-team",
                                "OPENAI_PROJECT_ID": "proj_bot"})
    model_server.script("planner", "ok")
    await collect(OpenAIChatModel(config, secrets))
    headers = model_server.requests[0].headers
    assert headers["OpenAI-Organization"] == "org-team" and headers["OpenAI-Project"] == "proj_bot"
    model_server.script("planner", "ok")
    await collect(OpenAIChatModel(config, Secrets(openai_api_key="sk-test-0123456789abcdef")))
    assert "OpenAI-Organization" not in model_server.requests[1].headers


@pytest.mark.parametrize("proxy", ["HTTP_PROXY", "ALL_PROXY", "http_proxy"])
async def test_a_server_on_this_machine_is_reached_directly_whatever_proxy_the_environment_names(
        model_server, config, secrets, monkeypatch, proxy):
    monkeypatch.setenv(proxy, "http://127.0.0.1:9")  # a proxy elsewhere: it cannot reach this machine's loopback
    model_server.script("planner", "a plan")
    model = OpenAIChatModel(dataclasses.replace(config, llm=dataclasses.replace(config.llm, max_retries=0)), secrets)
    try:
        assert (await collect(model))[0] == "a plan"
    finally:
        await model.close()
