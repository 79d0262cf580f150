"""``serve`` refuses to start, with one sentence, when a token is missing or Slack rejects it."""

from __future__ import annotations

import dataclasses

import pytest

import adapters.slack
from bot.config.sections import ConfigError
from bot.model.client import OpenAIChatModel
from bot.runs.service import Service
from tests.conftest import with_changes
from tests.fakes.team_script import ScriptedSandbox


async def serve(config, secrets, store):
    model = OpenAIChatModel(config, secrets)
    try:
        await adapters.slack.serve(Service(config, store, model, ScriptedSandbox()), config, secrets)
    finally:
        await model.close()


@pytest.mark.parametrize("change, words", [
    ({"slack_bot_token": ""}, "SLACK_BOT_TOKEN is not set"),
    ({"slack_app_token": ""}, "SLACK_APP_TOKEN is not set"),
    ({"slack_bot_token": "xoxb-revoked-0123456"}, r"Slack refused SLACK_BOT_TOKEN \(invalid_auth\)"),
    ({"slack_app_token": "xapp-wrong-0123456"}, r"Slack refused SLACK_APP_TOKEN \(invalid_auth\)"),
])
async def test_a_missing_or_refused_token_stops_serve_with_one_sentence(slack, slack_config, slack_secrets, store,
                                                                       change, words):
    with pytest.raises(ConfigError, match=words) as caught:
        await serve(slack_config, dataclasses.replace(slack_secrets, **change), store)
    assert "xoxb-revoked" not in str(caught.value) and "xapp-wrong" not in str(caught.value)


async def test_http_mode_needs_the_signing_secret(slack_config, slack_secrets, store):
    config = with_changes(slack_config, slack={"mode": "http"})
    with pytest.raises(ConfigError, match="SLACK_SIGNING_SECRET is not set"):
        await serve(config, dataclasses.replace(slack_secrets, slack_signing_secret=""), store)
