"""Allowlists: anyone else is told why in a message only they see, and no model is called."""

from __future__ import annotations

import asyncio

import pytest

from tests.conftest import with_changes
from tests.fakes.slack_api import BOT_USER, TEAM, events_envelope, message_event
from tests.slack.conftest import finished, mention, script_team


@pytest.mark.parametrize("section, words", [
    ({"allowed_users": ("UBOSS",)}, "not on this bot's list of users"),
    ({"allowed_channels": ("C_OTHER",)}, "not enabled in this channel"),
], ids=["user", "channel"])
async def test_someone_outside_the_allowlist_is_refused_ephemerally_without_a_model_call(
        slack, model_server, slack_config, start_bot, section, words):
    await start_bot(with_changes(slack_config, slack=section))
    message, envelope = await mention(slack, "find all intf keys", user="UANN")
    await slack.wait_ack(envelope)
    refusal = await slack.wait_for(lambda: slack.ephemeral)
    assert refusal[0]["user"] == "UANN" and refusal[0]["channel"] == "C1" and words in refusal[0]["text"]
    assert refusal[0]["thread_ts"] == message.ts
    assert model_server.requests == [] and slack.called("chat.postMessage") == []


async def test_an_allowed_user_in_an_allowed_channel_gets_the_team(slack, model_server, slack_config, start_bot):
    await start_bot(with_changes(slack_config, slack={"allowed_users": ("UANN",), "allowed_channels": ("C1",)}))
    script_team(model_server)
    message, _ = await mention(slack, "find all intf keys", user="UANN")
    await finished(slack, "C1", message.ts)
    assert slack.ephemeral == []


async def test_direct_messages_can_be_turned_off(slack, model_server, slack_config, start_bot):
    await start_bot(with_changes(slack_config, slack={"direct_messages": False}))
    dm = slack.say("D1", "UANN", "find all intf keys")
    await slack.deliver(events_envelope(message_event(dm, kind="message", channel_type="im"), "Ev-dm"))
    refusal = await slack.wait_for(lambda: slack.ephemeral)
    assert "direct messages" in refusal[0]["text"] and model_server.requests == []


@pytest.mark.parametrize("user_team, listed, refused", [
    ("T_PARTNER", (), True),  # a channel shared with another organization (Slack Connect)
    ("T_PARTNER", ("UOUT",), False),  # named in allowed_users: let in on purpose
    (TEAM, (), False),  # the bot's own workspace, said as Slack Connect events say it
], ids=["other-workspace", "other-workspace-listed", "own-workspace"])
async def test_someone_of_another_workspace_is_refused_unless_listed_by_name(
        slack, model_server, slack_config, start_bot, user_team, listed, refused):
    await start_bot(with_changes(slack_config, slack={"allowed_users": listed}) if listed else slack_config)
    if not refused:
        script_team(model_server)
    message = slack.say("C1", "UOUT", f"<@{BOT_USER}> find all intf keys")
    event = message_event(message, user_team=user_team, source_team=user_team)
    await slack.deliver(events_envelope(event, f"Ev{message.ts}"))
    if refused:
        refusal = await slack.wait_for(lambda: slack.ephemeral)
        assert refusal[0]["user"] == "UOUT" and "(or the organization) it is installed in" in refusal[0]["text"]
        assert model_server.requests == [] and slack.called("chat.postMessage") == []
    else:
        await finished(slack, "C1", message.ts)
        assert slack.ephemeral == []


@pytest.mark.parametrize("organization_wide", [False, True], ids=["sibling-workspace", "organization-wide-install"])
@pytest.mark.parametrize("their_organization, refused", [("E_OURS", False), ("E_THEIRS", True)],
                         ids=["same-organization", "another-organization"])
async def test_a_person_of_the_bot_s_own_enterprise_grid_organization_is_served(
        slack, model_server, slack_config, start_bot, their_organization, refused, organization_wide):
    await start_bot(slack_config)
    if not refused:
        script_team(model_server)
    slack.enterprises["UOUT"] = their_organization
    message = slack.say("C1", "UOUT", f"<@{BOT_USER}> find all intf keys")
    envelope = events_envelope(message_event(message, user_team="T_SIBLING"), f"Ev{message.ts}")
    envelope["payload"]["enterprise_id"] = "E_OURS"
    envelope["payload"]["authorizations"][0]["enterprise_id"] = "E_OURS"
    if organization_wide:  # installed for the whole organization: no workspace of its own
        envelope["payload"].pop("team_id", None)
        envelope["payload"]["authorizations"][0].update(team_id=None, is_enterprise_install=True)
    await slack.deliver(envelope)
    if refused:
        refusal = await slack.wait_for(lambda: slack.ephemeral)
        assert refusal[0]["user"] == "UOUT" and model_server.requests == []
    else:
        await finished(slack, "C1", message.ts)
        assert slack.ephemeral == []


async def test_another_organization_s_person_is_told_once_whatever_slack_sends_again(
        slack, model_server, slack_config, start_bot):
    await start_bot(slack_config)
    message = slack.say("C1", "UOUT", f"<@{BOT_USER}> find all intf keys")
    event = message_event(message, user_team="T_PARTNER")
    await slack.deliver(events_envelope(event, f"Ev{message.ts}"))
    await slack.wait_for(lambda: slack.ephemeral)
    await slack.wait_ack(await slack.deliver(events_envelope(event, f"Ev{message.ts}", retry_attempt=1)))
    await slack.deliver(events_envelope(message_event(message, kind="message", user_team="T_PARTNER"), "Ev-msg"))
    await asyncio.sleep(0.5)  # a second sentence would be on its way by now
    assert len(slack.ephemeral) == 1 and model_server.requests == []



@pytest.mark.parametrize("workspace, refused", [("T_PARTNER", True), (TEAM, False)], ids=["partner", "own-workspace"])
async def test_in_a_shared_channel_a_message_that_names_no_workspace_is_judged_by_the_sender_s_own(
        slack, model_server, slack_config, start_bot, workspace, refused):
    await start_bot(slack_config)
    if not refused:
        script_team(model_server)
    slack.workspaces["UOUT"] = workspace  # what users.info says; the event itself names no workspace
    message = slack.say("C1", "UOUT", f"<@{BOT_USER}> find all intf keys")
    envelope = events_envelope(message_event(message), f"Ev{message.ts}")
    envelope["payload"]["is_ext_shared_channel"] = True  # a Slack Connect channel, as the envelope says
    await slack.deliver(envelope)
    if refused:
        refusal = await slack.wait_for(lambda: slack.ephemeral)
        assert refusal[0]["user"] == "UOUT" and model_server.requests == []
        assert slack.called("chat.postMessage") == []
    else:
        await finished(slack, "C1", message.ts)
        assert slack.ephemeral == []
