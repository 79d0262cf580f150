"""Allowlists: anyone else is told why in a message only they see, and no model is called."""

from __future__ import annotations

import pytest

from tests.conftest import with_changes
from tests.fakes.slack_api import events_envelope, message_event
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
