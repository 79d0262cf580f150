"""``codegen-chat doctor`` for Slack: tokens through auth.test, scopes against the manifest's."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from adapters.slack import doctor_checks
from adapters.slack.doctor import AGENT_SCOPES, BOT_SCOPES
from tests.conftest import with_changes
from tests.fakes.slack_api import FakeSlack

MANIFEST = Path(__file__).parents[2] / "deploy" / "slack-manifest.yml"


def by_name(results):
    return {r.name: r for r in results}


async def test_good_tokens_and_every_scope_pass(slack, slack_config, slack_secrets):
    results = by_name(await doctor_checks(slack_config, slack_secrets))
    assert all(r.ok for r in results.values()), results
    assert results["slack bot token"].detail == "@codegen in Fake Team"
    assert set(results) == {"slack bot token", "slack scopes", "slack thread reading", "slack agent features",
                            "slack app token"}
    assert [c.method for c in slack.calls] == ["auth.test", "apps.connections.open"]


async def test_missing_scopes_are_named_with_the_fix(slack_config, slack_secrets):
    async with FakeSlack(scopes=("chat:write", "app_mentions:read")) as narrow:
        config = with_changes(slack_config, slack={"api_url": narrow.api_url})
        scopes = by_name(await doctor_checks(config, slack_secrets))["slack scopes"]
    assert not scopes.ok and scopes.detail.startswith("missing: channels:history, files:read")
    assert "deploy/slack-manifest.yml" in scopes.fix


async def test_doctor_names_what_reading_threads_needs(slack_config, slack_secrets):
    async with FakeSlack(scopes=("chat:write", "app_mentions:read", "groups:history")) as narrow:
        config = with_changes(slack_config, slack={"api_url": narrow.api_url})
        reading = by_name(await doctor_checks(config, slack_secrets))["slack thread reading"]
    assert not reading.ok and reading.detail == "missing: channels:history; a mention in a thread runs on the request alone"
    assert "channels:history, groups:history" in reading.fix


@pytest.mark.parametrize("scopes, ok", [((*BOT_SCOPES, "users:read"), True), (BOT_SCOPES, False)],
                         ids=["with-users-read", "without"])
async def test_an_organization_wide_install_needs_users_read_to_know_its_people(slack_config, slack_secrets, scopes, ok):
    async with FakeSlack(scopes=scopes) as grid:
        grid.organization_wide = "E_OURS"
        config = with_changes(slack_config, slack={"api_url": grid.api_url})
        check = by_name(await doctor_checks(config, slack_secrets))["slack organization-wide install"]
    assert check.ok is ok
    assert ok or ("users:read" in check.detail and "refused" in check.detail and "users:read" in check.fix)


async def test_a_wrong_bot_token_fails_and_is_not_shown(slack_config, slack_secrets):
    secrets = dataclasses.replace(slack_secrets, slack_bot_token="xoxb-wrong-token-123456")
    results = await doctor_checks(slack_config, secrets)
    assert not results[0].ok and "invalid_auth" in results[0].detail
    assert all("xoxb-wrong" not in r.detail + r.fix for r in results)


async def test_a_wrong_app_token_fails_in_socket_mode(slack_config, slack_secrets):
    secrets = dataclasses.replace(slack_secrets, slack_app_token="xapp-wrong-123456")
    assert not by_name(await doctor_checks(slack_config, secrets))["slack app token"].ok


async def test_http_mode_needs_the_signing_secret_instead(slack_config, slack_secrets):
    config = with_changes(slack_config, slack={"mode": "http"})
    secrets = dataclasses.replace(slack_secrets, slack_signing_secret="", slack_app_token="")
    results = by_name(await doctor_checks(config, secrets))
    assert not results["slack signing secret"].ok and "slack app token" not in results


async def test_an_unset_bot_token_says_where_to_find_it(slack_config, slack_secrets):
    results = await doctor_checks(slack_config, dataclasses.replace(slack_secrets, slack_bot_token=""))
    assert len(results) == 1 and not results[0].ok and "OAuth & Permissions" in results[0].fix


async def test_slack_down_is_a_clear_failure(slack_config, slack_secrets):
    config = with_changes(slack_config, slack={"api_url": "http://127.0.0.1:9/api/", "request_timeout_s": 2.0})
    result = (await doctor_checks(config, slack_secrets))[0]
    assert not result.ok and "did not answer" in result.detail


def test_the_manifest_asks_for_exactly_the_scopes_doctor_checks():
    yaml = pytest.importorskip("yaml", reason="PyYAML (a dev dependency) reads the manifest")
    manifest = yaml.safe_load(MANIFEST.read_text())
    assert sorted(manifest["oauth_config"]["scopes"]["bot"]) == sorted(BOT_SCOPES + AGENT_SCOPES)
    assert manifest["features"]["assistant_view"]["assistant_description"]  # assistant:write needs it
    settings = manifest["settings"]
    assert settings["socket_mode_enabled"] is True and settings["interactivity"]["is_enabled"] is True
    assert {"app_mention", "message.channels", "message.groups", "message.im"} <= set(
        settings["event_subscriptions"]["bot_events"])
    assert manifest["features"]["app_home"]["messages_tab_enabled"] is True  # DMs


@pytest.mark.parametrize("section, key", [
    ({"mode": "webhook"}, "slack.mode"),
    ({"max_message_chars": 50}, "slack.max_message_chars"),
    ({"update_interval_s": 0}, "slack.update_interval_s"),
    ({"api_url": "slack.com/api"}, "slack.api_url"),
])
def test_a_bad_slack_config_names_the_key(tmp_path, section, key):
    from bot.config.sections import ConfigError, load_config

    lines = "\n".join(f"{k} = {v!r}".replace("'", '"') for k, v in section.items())
    path = tmp_path / "config.toml"
    path.write_text(f"[slack]\n{lines}\n")
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_config(path)


async def test_without_the_agent_features_doctor_warns_and_still_passes(slack_config, slack_secrets):
    from tests.fakes.slack_api import ALL_SCOPES

    async with FakeSlack(scopes=tuple(s for s in ALL_SCOPES if s != "assistant:write")) as narrow:
        config = with_changes(slack_config, slack={"api_url": narrow.api_url})
        results = by_name(await doctor_checks(config, slack_secrets))
    agent = results["slack agent features"]
    assert not agent.ok and not agent.required and "missing: assistant:write" in agent.detail
    assert "Agents & AI Apps" in agent.fix and results["slack scopes"].ok
