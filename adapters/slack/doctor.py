"""``codegen-chat doctor`` for Slack: the tokens work, and the bot has the scopes the manifest asks for."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from bot.config.doctor_types import CheckResult
from bot.config.sections import SlackConfig

# The bot token scopes of deploy/slack-manifest.yml (a test keeps the two the same): the bot needs these,
BOT_SCOPES = ("app_mentions:read", "channels:history", "chat:write", "files:read", "files:write",
              "groups:history", "im:history", "mpim:history")
# and uses these where they are granted: the status message as a streamed plan (Agents & AI Apps), and
# the display names of the people in a thread it reads (without it, their user ids stand in).
AGENT_SCOPES = ("assistant:write", "users:read")
# What reading the thread a mention is made in needs (docs/threads.md): without them a run has the request alone.
THREAD_SCOPES = ("channels:history", "groups:history")
MANIFEST = "deploy/slack-manifest.yml"
_UNREACHABLE = (SlackClientError, aiohttp.ClientError, asyncio.TimeoutError, OSError)


async def token_checks(settings: SlackConfig, bot: AsyncWebClient, app: AsyncWebClient | None,
                       signing_secret: str) -> list[CheckResult]:
    results = await _bot_token(settings, bot)
    if settings.mode == "socket":
        results.append(await _app_token(app))
    else:
        results.append(CheckResult("slack signing secret", bool(signing_secret),
                                   "set" if signing_secret else "SLACK_SIGNING_SECRET is not set",
                                   "copy the Signing Secret from the app's Basic Information page"))
    return results


async def _bot_token(settings: SlackConfig, client: AsyncWebClient) -> list[CheckResult]:
    try:
        response = await client.auth_test()
    except SlackApiError as error:
        return [CheckResult("slack bot token", False, f"auth.test refused it ({error.response.get('error')})",
                            "copy the Bot User OAuth Token (xoxb-…) into SLACK_BOT_TOKEN; reinstall the app if revoked")]
    except _UNREACHABLE as error:
        return [CheckResult("slack bot token", False, f"{settings.api_url} did not answer ({type(error).__name__})",
                            "check slack.api_url and the network")]
    who = f"@{response.get('user')} in {response.get('team')}"
    granted = set(_scopes(response.headers))
    missing = [scope for scope in BOT_SCOPES if scope not in granted]
    scopes = CheckResult(
        "slack scopes", not missing,
        "all granted" if not missing else f"missing: {', '.join(missing)}",
        f"add them under OAuth & Permissions (or create the app from {MANIFEST}) and reinstall the app",
    )
    checks = [CheckResult("slack bot token", True, who), scopes, _thread_reading(granted), _agent_features(granted)]
    if response.get("is_enterprise_install"):
        checks.append(_organization_wide(granted))
    return checks


def _thread_reading(granted: set[str]) -> CheckResult:
    missing = [scope for scope in THREAD_SCOPES if scope not in granted]
    names = "users:read" in granted
    return CheckResult(
        "slack thread reading", not missing,
        (f"a mention reads its thread first ({', '.join(THREAD_SCOPES)})"
         + ("" if names else "; without users:read people show as user ids")) if not missing
        else f"missing: {', '.join(missing)}; a mention in a thread runs on the request alone",
        f"add {', '.join(THREAD_SCOPES)} under OAuth & Permissions (or create the app from {MANIFEST}) and reinstall",
    )


def _organization_wide(granted: set[str]) -> CheckResult:
    """An install for a whole Enterprise Grid organization has no workspace of its own: it tells its organization's
    people from another organization's (Slack Connect) by ``users.info``, and refuses whom it cannot ask about."""
    ok = "users:read" in granted
    return CheckResult(
        "slack organization-wide install", ok,
        "people are told from another organization's by users.info" if ok
        else "missing: users:read; every message that names its sender's workspace is refused",
        f"add users:read under OAuth & Permissions (or create the app from {MANIFEST}) and reinstall")


def _agent_features(granted: set[str]) -> CheckResult:
    missing = [scope for scope in AGENT_SCOPES[:1] if scope not in granted]
    return CheckResult(
        "slack agent features", not missing,
        "the status message streams a plan of the run's steps" if not missing
        else f"missing: {', '.join(missing)}; the status message is a plain message kept current instead",
        f"turn on Agents & AI Apps in the app's settings (or create it from {MANIFEST}) and reinstall", required=False,
    )


async def _app_token(client: AsyncWebClient | None) -> CheckResult:
    fix = "create an app-level token with connections:write (Basic Information) and export SLACK_APP_TOKEN"
    if client is None:
        return CheckResult("slack app token", False, "SLACK_APP_TOKEN is not set (needed for Socket Mode)", fix)
    try:
        # Only issues a websocket URL; no connection is opened.
        await client.apps_connections_open(app_token=str(client.token))
    except SlackApiError as error:
        return CheckResult("slack app token", False, f"apps.connections.open refused it ({error.response.get('error')})",
                           fix + "; turn Socket Mode on")
    except _UNREACHABLE as error:
        return CheckResult("slack app token", False, f"Slack did not answer ({type(error).__name__})", "check the network")
    return CheckResult("slack app token", True, "Socket Mode connections allowed")


def _scopes(headers: Mapping[str, Any]) -> list[str]:
    for name, value in headers.items():
        if name.lower() == "x-oauth-scopes":
            text = value[0] if isinstance(value, list) else str(value)
            return [s.strip() for s in text.split(",") if s.strip()]
    return []
