"""Discord: ``/code`` and mentions open a thread where the team works.

``serve`` runs the bot until cancelled; ``doctor_checks`` checks the token. The handlers live in
``adapters.discord_handlers``; ``adapters.discord_thread`` is the thread the run renderer draws in.

Intents, smallest first:
- none at all are needed for ``/code`` and the Stop button (interactions always arrive);
- ``guilds`` keeps channels and threads cached: which thread is the bot's, a thread's parent channel, roles;
- ``guild_messages`` delivers messages, so a mention of the bot starts a run (a message that mentions the
  bot carries its content and files even without the privileged intent);
- ``message_content`` (privileged, ``[discord] message_content_intent = true`` plus the switch in the
  Developer Portal) lets any message in the bot's thread continue the work; without it a follow-up has to
  mention the bot.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator

import aiohttp
import discord
import yarl
from discord import app_commands
from discord.gateway import DiscordWebSocket
from discord.http import HTTPClient, Route

from adapters.discord_handlers import INTERNAL_ERROR, PLATFORM, Context, context_of, on_code, on_message, on_stop
from adapters.discord_thread import StopButton
from bot.config import Config, ConfigError, DiscordConfig, Secrets
from bot.doctor_types import CheckResult
from bot.redact import Redactor
from bot.service import Service
from bot.store import Store

log = logging.getLogger(__name__)

SHUTDOWN_GRACE_S = 10.0  # for stopped runs to post their last message before the connection closes
MESSAGE_CONTENT_FLAGS = (1 << 18) | (1 << 19)  # GATEWAY_MESSAGE_CONTENT(_LIMITED) in the application's flags
PORTAL = "https://discord.com/developers/applications"
# What the bot does in a channel: read it, open threads from messages, post and attach files in them,
# reply to a message (needs its history) and react with a refusal.
INVITE_PERMISSIONS = discord.Permissions(
    view_channel=True, send_messages=True, create_public_threads=True, send_messages_in_threads=True,
    attach_files=True, read_message_history=True, add_reactions=True)


class CodegenBot(discord.Client):
    def __init__(self, context: Context) -> None:
        # Mentions in model output (or a quoted task) must never ping anyone.
        super().__init__(intents=intents_for(context.config), allowed_mentions=discord.AllowedMentions.none())
        self.codegen = context
        self.tree = app_commands.CommandTree(self)
        self.tree.add_command(code_command())
        self.tree.on_error = _command_failed  # type: ignore[method-assign]

    async def setup_hook(self) -> None:
        self.add_dynamic_items(StopButton)
        await sync_commands(self.tree, self.codegen.config.sync_guilds)

    async def stop_pressed(self, interaction: discord.Interaction, run_id: str) -> None:
        await on_stop(self.codegen, interaction, run_id)

    async def on_message(self, message: discord.Message) -> None:
        if self.user is None:
            return
        try:
            await on_message(self.codegen, self.user, message)
        except Exception:
            log.exception("message %s in channel %s could not be handled", message.id, message.channel.id)
            with contextlib.suppress(discord.HTTPException):
                await message.reply(f"⚠️ {INTERNAL_ERROR}")


def intents_for(config: DiscordConfig) -> discord.Intents:
    intents = discord.Intents.none()
    intents.guilds = True
    intents.guild_messages = True
    intents.message_content = config.message_content_intent
    return intents


def code_command() -> app_commands.Command:
    @app_commands.command(name="code", description="Ask the team to write, test and check in code")
    @app_commands.describe(task="What the code should do", file="A text file to work from (optional)")
    @app_commands.guild_only()
    async def code(interaction: discord.Interaction, task: str, file: discord.Attachment | None = None) -> None:
        await on_code(context_of(interaction.client), interaction, task, file)

    return code


async def sync_commands(tree: app_commands.CommandTree, guilds: tuple[int, ...]) -> None:
    """Guilds see a guild sync at once; a global sync can take Discord a while to show everywhere."""
    if not guilds:
        await tree.sync()
        return
    for guild_id in guilds:
        guild = discord.Object(guild_id)
        tree.copy_global_to(guild=guild)
        await tree.sync(guild=guild)


async def _command_failed(interaction: discord.Interaction, error: app_commands.AppCommandError) -> None:
    log.error("/%s failed", interaction.command.name if interaction.command else "?", exc_info=error)
    with contextlib.suppress(discord.HTTPException):
        if interaction.response.is_done():
            await interaction.followup.send(f"⚠️ {INTERNAL_ERROR}", ephemeral=True)
        else:
            await interaction.response.send_message(f"⚠️ {INTERNAL_ERROR}", ephemeral=True)


@contextlib.contextmanager
def endpoints(config: DiscordConfig) -> Iterator[None]:
    """Point discord.py at ``api_url`` and ``gateway_url`` (a Discord-compatible server, a test fake).

    discord.py takes no base URL; its REST routes and webhooks all read ``Route.BASE`` and the gateway
    starts from ``DiscordWebSocket.DEFAULT_GATEWAY`` (the library's own ``_set_api_version`` sets the
    first the same way). Both are process-wide, which suits one bot per process; they are put back after.
    """
    saved = Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY
    if config.api_url:
        Route.BASE = config.api_url.rstrip("/")
        DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(config.gateway_url)
    try:
        yield
    finally:
        Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY = saved


def make_bot(service: Service, store: Store, config: Config, secrets: Secrets) -> CodegenBot:
    max_bytes = min(config.discord.max_attachment_bytes, config.input.max_attachment_bytes)
    return CodegenBot(Context(service, store, config.discord, Redactor(secrets.values()), max_bytes))


async def serve(service: Service, store: Store, config: Config, secrets: Secrets) -> None:
    """Run the bot until cancelled; on the way out, stop the runs under way and say so in their threads."""
    secrets.require("discord_token")
    with endpoints(config.discord):
        bot = make_bot(service, store, config, secrets)
        try:
            await bot.start(secrets.discord_token)
        except discord.LoginFailure:
            raise ConfigError(f"DISCORD_TOKEN was refused by Discord: reset the bot token at {PORTAL}") from None
        except discord.PrivilegedIntentsRequired:
            raise ConfigError(
                "[discord] message_content_intent = true needs the Message Content intent: enable it at "
                f"{PORTAL} (Bot, Privileged Gateway Intents), or set it to false") from None
        finally:
            await service.stop_all(PLATFORM, SHUTDOWN_GRACE_S)
            await bot.close()


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
            "Discord message content intent", enabled, "enabled" if enabled else "not enabled for this application",
            fix=f"enable Message Content Intent at {PORTAL} (Bot), or set message_content_intent = false"))
    return results
