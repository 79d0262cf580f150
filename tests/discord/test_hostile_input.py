"""Input Discord could deliver that the bot cannot act on: refused in one sentence and one log line, never a
traceback, and the bot keeps serving. Gateway events with a malformed field, and interactions that are not a
well-formed ``/code``."""

from __future__ import annotations

import pytest

from tests.discord.conftest import eventually, final_message, script_team, thread_of
from tests.discord.payloads import message, slash_code
from tests.fakes.discord_api import CHANNEL_ID, EPHEMERAL

AUTOCOMPLETE = 4


def tracebacks(caplog) -> list[str]:
    """Tracebacks the bot or discord.py logged (not a closed loop's leftovers from an earlier test's client)."""
    ours = ("adapters", "bot", "discord", "codegen_chat", "agents")
    return [r.getMessage() for r in caplog.records if r.exc_info and r.name.startswith(ours)]


async def a_run_still_works(discord_api, model_server) -> None:
    script_team(model_server)
    await discord_api.dispatch("INTERACTION_CREATE", slash_code(discord_api, "find all intf keys"))
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    await eventually(lambda: final_message(discord_api, thread), "the final message")


@pytest.mark.parametrize("field, value", [("mentions", "everyone"), ("author", "ann"), ("attachments", {"a": 1}),
                                          ("mention_roles", 5), ("embeds", 3)])
async def test_a_gateway_event_with_a_malformed_field_is_skipped_and_the_bot_serves_on(
        start_bot, discord_api, model_server, caplog, field, value):
    bot = await start_bot()
    broken = {**message(discord_api, CHANNEL_ID, "build it", mention_bot=True), field: value}
    await discord_api.dispatch("MESSAGE_CREATE", broken)
    await eventually(lambda: any("MESSAGE_CREATE" in r.getMessage() for r in caplog.records), "a log line")
    assert not bot.is_closed()
    await a_run_still_works(discord_api, model_server)
    assert tracebacks(caplog) == []


def with_options(payload: dict, options: list | None, name: str = "code") -> dict:
    payload["data"] = {**payload["data"], "name": name}
    if options is None:
        payload["data"].pop("options", None)
    else:
        payload["data"]["options"] = options
    return payload


@pytest.mark.parametrize("options, name, said", [
    ([{"name": "task", "type": 3, "value": 12345}], "code", "The task must be text"),
    ([{"name": "task", "type": 3, "value": ["a", "b"]}], "code", "The task must be text"),
    (None, "code", "/code needs a task"),
    ([{"name": "task", "type": 3, "value": "x"}, {"name": "file", "type": 11, "value": "404"}], "code",
     "The attached file did not come through"),
    ([{"name": "task", "type": 3, "value": "x"}], "deploy", "This bot has one command: /code"),
], ids=["numeric-task", "list-task", "no-task", "unresolved-file", "unknown-command"])
async def test_an_interaction_that_is_not_a_well_formed_code_gets_one_sentence(
        start_bot, discord_api, model_server, caplog, options, name, said):
    await start_bot()
    interaction = with_options(slash_code(discord_api, "x"), options, name)
    await discord_api.dispatch("INTERACTION_CREATE", interaction)
    reply = await eventually(lambda: discord_api.original_response(interaction["token"]), "an answer")
    assert reply.content.startswith(said) and reply.flags & EPHEMERAL
    [callback] = discord_api.calls_to("POST", f"/interactions/{interaction['id']}/")
    assert callback.json["data"]["allowed_mentions"]["parse"] == []  # a refusal pings no one either
    assert model_server.requests == [] and not discord_api.threads
    assert tracebacks(caplog) == []
    await a_run_still_works(discord_api, model_server)


async def test_an_autocomplete_gets_no_suggestions_and_no_traceback(start_bot, discord_api, model_server, caplog):
    await start_bot()
    interaction = slash_code(discord_api, "fin")
    interaction["type"] = AUTOCOMPLETE
    interaction["data"]["options"][0]["focused"] = True
    await discord_api.dispatch("INTERACTION_CREATE", interaction)
    callback = await eventually(lambda: discord_api.calls_to("POST", f"/interactions/{interaction['id']}/"), "an answer")
    assert callback[0].json == {"type": 8, "data": {"choices": []}}
    assert tracebacks(caplog) == [] and model_server.requests == []
