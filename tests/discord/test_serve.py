"""``serve``: logs in, syncs /code (to the configured guilds at once, else globally), connects with the
smallest intents, and turns Discord's refusals into config errors that say what to fix."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from adapters.discord import serve
from bot.config.sections import ConfigError
from bot.model.client import OpenAIChatModel
from bot.runs.service import Service
from tests.conftest import with_changes
from tests.discord.conftest import eventually, final_message, script_team, thread_of
from tests.discord.payloads import slash_code
from tests.fakes import team_script as s
from tests.fakes.discord_api import GUILD_ID
from tests.fakes.openai_server import Reply
from tests.fakes.team_script import ScriptedSandbox


def service_for(config, secrets, store) -> Service:
    return Service(config, store, OpenAIChatModel(config, secrets), ScriptedSandbox())


async def _serve_until_identified(config, secrets, store, discord_api) -> None:
    task = asyncio.create_task(serve(service_for(config, secrets, store), config, secrets))
    await eventually(lambda: discord_api.identified.is_set() or task.done(), "the bot identified")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_commands_are_synced_to_the_configured_guilds(discord_config, discord_secrets, store, discord_api):
    config = with_changes(discord_config, discord={"sync_guilds": (GUILD_ID,)})
    await _serve_until_identified(config, discord_secrets, store, discord_api)
    assert set(discord_api.commands) == {str(GUILD_ID)}  # no global sync
    [code] = discord_api.commands[str(GUILD_ID)]
    assert code["name"] == "code" and code["contexts"] == [0]  # guild channels only
    options = {o["name"]: o for o in code["options"]}
    assert options["task"]["type"] == 3 and options["task"]["required"]
    assert options["file"]["type"] == 11 and not options["file"].get("required")


async def test_commands_are_synced_globally_without_guilds(discord_config, discord_secrets, store, discord_api):
    await _serve_until_identified(discord_config, discord_secrets, store, discord_api)
    assert [c["name"] for c in discord_api.commands["global"]] == ["code"]
    assert discord_api.intents == (1 << 0) | (1 << 9)  # GUILDS, GUILD_MESSAGES: nothing privileged


async def test_a_refused_token_is_a_config_error(discord_config, discord_secrets, store, discord_api):
    wrong = dataclasses.replace(discord_secrets, discord_token="not-the-token-at-all")
    with pytest.raises(ConfigError, match="DISCORD_TOKEN was refused"):
        await serve(service_for(discord_config, wrong, store), discord_config, wrong)


async def test_a_missing_privileged_intent_is_a_config_error(discord_config, discord_secrets, store, discord_api):
    discord_api.privileged_allowed = False
    config = with_changes(discord_config, discord={"message_content_intent": True})
    with pytest.raises(ConfigError, match="Message Content intent"):
        await serve(service_for(config, discord_secrets, store), config, discord_secrets)


async def test_stopping_the_bot_stops_its_runs_and_says_so_in_their_threads(
        discord_config, discord_secrets, store, discord_api, model_server):
    script_team(model_server, planner=[Reply(s.PLAN, stall_after=70)])
    service = service_for(discord_config, discord_secrets, store)
    task = asyncio.create_task(serve(service, discord_config, discord_secrets))
    await eventually(lambda: discord_api.identified.is_set(), "the bot identified")
    await discord_api.dispatch("INTERACTION_CREATE", slash_code(discord_api, "find all intf keys"))
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    await eventually(lambda: any(m.content.startswith("**Planner**\n1.") for m in discord_api.channel_messages(thread)),
                     "the Planner's first words")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert final_message(discord_api, thread).content.startswith("⏹️ Stopped")
    assert (await store.runs())[0].status == "stopped"
