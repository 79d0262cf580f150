"""The allowlists: refusals are private (ephemeral) where Discord allows it and never reach the model."""

from __future__ import annotations

import pytest

from bot.chat.access import WRONG_CHANNEL, WRONG_ROLE, WRONG_SERVER
from tests.discord.conftest import eventually, final_message, script_team, thread_of
from tests.discord.payloads import BOB, message, slash_code
from tests.fakes.discord_api import CHANNEL_ID, CODERS_ROLE, EPHEMERAL, GUILD_ID, OTHER_CHANNEL_ID


@pytest.mark.parametrize("allowlists, channel, refusal", [
    ({"allowed_roles": (CODERS_ROLE,)}, CHANNEL_ID, WRONG_ROLE),
    ({"allowed_channels": (OTHER_CHANNEL_ID,)}, CHANNEL_ID, WRONG_CHANNEL),
    ({"allowed_guilds": (GUILD_ID + 1,)}, CHANNEL_ID, WRONG_SERVER),
])
async def test_code_outside_the_allowlists_is_refused_privately_without_a_model_call(
        start_bot, discord_api, model_server, store, allowlists, channel, refusal):
    await start_bot(**allowlists)
    interaction = slash_code(discord_api, "find all intf keys", user_id=BOB, channel_id=channel)
    await discord_api.dispatch("INTERACTION_CREATE", interaction)
    reply = await eventually(lambda: discord_api.original_response(interaction["token"]), "the refusal")

    assert reply.content == refusal and reply.flags & EPHEMERAL
    assert [c.json["type"] for c in discord_api.calls_to("POST", "/callback")] == [4]  # answered, not deferred
    assert model_server.requests == [] and await store.runs() == [] and not discord_api.threads


async def test_a_mention_without_an_allowed_role_gets_a_reaction_and_nothing_else(start_bot, discord_api, model_server):
    await start_bot(allowed_roles=(CODERS_ROLE,))
    mention = message(discord_api, CHANNEL_ID, "find all intf keys", user_id=BOB, mention_bot=True)
    await discord_api.dispatch("MESSAGE_CREATE", mention)
    await eventually(lambda: discord_api.calls_to("PUT", f"/messages/{mention['id']}/reactions/"), "the reaction")
    assert model_server.requests == [] and not discord_api.threads
    assert discord_api.calls_to("POST", "/messages") == []  # no refusal posted in the channel


async def test_the_allowed_role_and_channel_get_in(start_bot, discord_api, model_server):
    script_team(model_server)
    await start_bot(allowed_roles=(CODERS_ROLE,), allowed_channels=(CHANNEL_ID,), allowed_guilds=(GUILD_ID,))
    await discord_api.dispatch("INTERACTION_CREATE", slash_code(discord_api, "find intf keys", roles=(CODERS_ROLE,)))
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    assert (await eventually(lambda: final_message(discord_api, thread), "the final message")).content.startswith("✅")
