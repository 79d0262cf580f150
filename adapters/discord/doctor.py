"""``codegen-chat doctor`` for Discord: the token logs in, the invite link, the message content intent."""

from __future__ import annotations

import asyncio

import aiohttp
import discord
from discord.http import HTTPClient

from adapters.discord.endpoints import PORTAL, endpoints
from adapters.discord.platform import served
from bot.config.doctor_types import CheckResult
from bot.config.sections import Config, DiscordConfig, Secrets

MESSAGE_CONTENT_FLAGS = (1 << 18) | (1 << 19)  # GATEWAY_MESSAGE_CONTENT(_LIMITED) in the application's flags
# What the bot does in a channel: read it, open threads from messages, post and attach files in them,
# reply to a message (needs its history) and react with a refusal.
INVITE_PERMISSIONS = discord.Permissions(
    view_channel=True, send_messages=True, create_public_threads=True, send_messages_in_threads=True,
    attach_files=True, read_message_history=True, add_reactions=True)


async def doctor_checks(config: Config, secrets: Secrets) -> list[CheckResult]:
    """The token logs in (``GET /users/@me``); the message content intent is on when the config asks for it."""
    if not secrets.discord_token:
        return [CheckResult("Discord token", False, "DISCORD_TOKEN is not set",
                            fix=f"create a bot at {PORTAL}, copy its token and export DISCORD_TOKEN")]
    with endpoints(config.discord):
        http = HTTPClient(asyncio.get_running_loop())
        try:
            return await _token_checks(http, config.discord, secrets.discord_token)
        finally:
            await http.close()


def invite_url(application_id: int) -> str:
    """The link that adds the bot to a server with the permissions it needs, and its slash commands."""
    return discord.utils.oauth_url(application_id, permissions=INVITE_PERMISSIONS, scopes=("bot", "applications.commands"))


async def _token_checks(http: HTTPClient, config: DiscordConfig, token: str) -> list[CheckResult]:
    try:
        me = await http.static_login(token)
        application = await http.application_info()
    except discord.LoginFailure:
        return [CheckResult("Discord token", False, "Discord refused DISCORD_TOKEN (401 Unauthorized)",
                            fix=f"reset the bot token at {PORTAL} and export the new one")]
    except (discord.HTTPException, aiohttp.ClientError, OSError) as error:
        return [CheckResult("Discord token", False, f"could not reach Discord: {type(error).__name__}: {error}",
                            fix="check the network, or [discord] api_url")]
    results = [CheckResult("Discord token", True, f"logged in as {me['username']} ({me['id']})"),
               CheckResult("Discord invite URL", True, invite_url(int(application["id"])), required=False)]
    if config.message_content_intent:
        enabled = bool(int(application.get("flags") or 0) & MESSAGE_CONTENT_FLAGS)
        results.append(CheckResult(
            "Discord message content intent", enabled,
            "enabled: a mention reads the channel's earlier messages" if enabled else "not enabled for this application",
            fix=f"enable Message Content Intent at {PORTAL} (Bot), or set message_content_intent = false"))
    else:
        results.append(CheckResult(
            "Discord thread reading", False, "off: without the message content intent a mention runs on the request alone",
            fix=f"enable Message Content Intent at {PORTAL} (Bot) and set [discord] message_content_intent = true",
            required=False))
    results.append(_servers(config, bool(application.get("bot_public"))))
    return results


def _servers(config: DiscordConfig, public: bool) -> CheckResult:
    """Which servers the bot serves: none until they are listed (anyone may add a public bot to their own)."""
    listed = served(config)
    if listed:
        return CheckResult("Discord servers", True, f"serves {len(listed)} listed server(s)")
    if config.any_server:
        return CheckResult("Discord servers", not public,
                           "any_server = true: every server the bot is in" + (
                               ", and it is public: anyone may add it to their own" if public else ""),
                           fix=f"list your servers in [discord] allowed_guilds, or turn Public Bot off at {PORTAL} (Bot)")
    return CheckResult("Discord servers", False, "no server listed: the bot serves none",
                       fix="put your servers' ids in [discord] allowed_guilds (or sync_guilds)")
