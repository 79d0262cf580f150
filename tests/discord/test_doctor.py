"""``codegen-chat doctor``: the Discord token is checked against the API (``GET /users/@me``)."""

from __future__ import annotations

import dataclasses

import pytest

from adapters.discord import doctor_checks
from tests.conftest import with_changes
from tests.fakes.discord_api import FakeDiscord


async def test_a_good_token_logs_in_and_the_invite_url_is_shown(discord_config, discord_secrets, discord_api):
    result, invite, reading, _ = await doctor_checks(discord_config, discord_secrets)
    assert not reading.ok and not reading.required and "Message Content Intent" in reading.fix  # intent off here
    assert result.ok and result.detail == "logged in as codegen (900000000000000001)"
    assert invite.detail == ("https://discord.com/oauth2/authorize?client_id=900000000000000002"
                             "&scope=bot+applications.commands&permissions=309237746752")
    assert [c.path for c in discord_api.calls_to("GET", "/users/@me")] == ["/users/@me"]


async def test_a_refused_token_says_so_and_how_to_fix_it(discord_config, discord_secrets, discord_api):
    wrong = dataclasses.replace(discord_secrets, discord_token="not-the-token-at-all")
    [result] = await doctor_checks(discord_config, wrong)
    assert not result.ok and "refused" in result.detail and "reset the bot token" in result.fix
    assert "not-the-token-at-all" not in result.detail + result.fix


async def test_a_missing_token(discord_config, discord_secrets):
    [result] = await doctor_checks(discord_config, dataclasses.replace(discord_secrets, discord_token=""))
    assert not result.ok and "DISCORD_TOKEN" in result.detail + result.fix


async def test_the_message_content_intent_must_be_on_when_configured(discord_config, discord_secrets, discord_api):
    discord_api.application_flags = 0
    config = with_changes(discord_config, discord={"message_content_intent": True})
    token, _, intent, _ = await doctor_checks(config, discord_secrets)
    assert token.ok and not intent.ok and "Message Content Intent" in intent.fix


@pytest.mark.parametrize("servers, public, ok, words", [
    ({"allowed_guilds": (5,)}, True, True, "serves 1 listed server"),
    ({"allowed_guilds": (), "sync_guilds": (5, 6)}, True, True, "serves 2 listed server"),
    ({"allowed_guilds": ()}, False, False, "no server listed"),
    ({"allowed_guilds": (), "any_server": True}, True, False, "anyone may add it"),
    ({"allowed_guilds": (), "any_server": True}, False, True, "every server the bot is in"),
], ids=["allowed", "synced", "none", "any-public", "any-private"])
async def test_the_servers_served_are_named_and_a_public_bot_serving_any_fails(
        discord_config, discord_secrets, discord_api, servers, public, ok, words):
    discord_api.public = public
    *_, served = await doctor_checks(with_changes(discord_config, discord=servers), discord_secrets)
    assert served.name == "Discord servers" and served.ok is ok and words in served.detail


async def test_an_unreachable_api(discord_config, discord_secrets):
    async with FakeDiscord() as gone:
        url, gateway = gone.api_url, gone.gateway_url
    config = with_changes(discord_config, discord={"api_url": url, "gateway_url": gateway})
    [result] = await doctor_checks(config, discord_secrets)
    assert not result.ok and result.detail.startswith("could not reach Discord")
