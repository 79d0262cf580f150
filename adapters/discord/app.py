"""``serve``: the Discord bot until cancelled, its ``/code`` command and its events handed to the handlers.

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

import contextlib
import logging

import discord
from discord import app_commands

from adapters.discord.endpoints import PORTAL, endpoints
from adapters.discord.handlers import INTERNAL_ERROR, Context, context_of, on_code, on_message, on_stop
from adapters.discord.interactions import command_problem, guard_parsers, refuse
from adapters.discord.platform import PLATFORM, platform
from adapters.discord.thread import ChannelPace, DiscordThread, StopButton
from bot.config.sections import Config, ConfigError, DiscordConfig, Secrets
from bot.runs.service import Service
from bot.safety.redact import Redactor

log = logging.getLogger(__name__)

SHUTDOWN_GRACE_S = 10.0  # for stopped runs to post their last message before the connection closes


class CodegenBot(discord.Client):
    def __init__(self, context: Context) -> None:
        # Mentions in model output (or a quoted task) must never ping anyone.
        super().__init__(intents=intents_for(context.config), allowed_mentions=discord.AllowedMentions.none())
        self.codegen = context
        guard_parsers(self._connection.parsers)  # one malformed event must not end the bot
        self.tree = CodeCommands(self)
        self.tree.add_command(code_command())
        self.tree.on_error = _command_failed  # type: ignore[method-assign]
        self._online = False

    async def setup_hook(self) -> None:
        self.add_dynamic_items(StopButton)
        await sync_commands(self.tree, self.codegen.config.sync_guilds)

    async def on_ready(self) -> None:
        """Connected (also after a reconnect): the core learns how to reach this bot's threads again."""
        if not self._online:
            self._online = True
            await self.codegen.service.online(self.codegen.platform, self.thread_of, self.connected)

    def connected(self) -> bool:
        return self.is_ready() and not self.is_closed()

    async def thread_of(self, thread_key: str) -> DiscordThread:
        channel = self.get_channel(int(thread_key)) or await self.fetch_channel(int(thread_key))
        if not isinstance(channel, discord.Thread):
            raise LookupError(f"channel {thread_key} is not a thread")
        return DiscordThread(channel, pace=self.codegen.pace)

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


class CodeCommands(app_commands.CommandTree):
    """The bot's one command; an interaction that is not a well-formed ``/code`` is refused here, before
    discord.py reads its options (an autocomplete gets no suggestions)."""

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        why = command_problem(interaction)
        if interaction.type is discord.InteractionType.autocomplete:
            why = why or "there is nothing to suggest"
        if why:
            await refuse(interaction, why)
            return False
        return True


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


def make_bot(service: Service, config: Config, secrets: Secrets) -> CodegenBot:
    max_bytes = min(config.discord.max_attachment_bytes, config.input.max_attachment_bytes)
    redact = Redactor(secrets.values(), patterns=True)  # a /code header quotes the task, pasted tokens and all
    return CodegenBot(Context(service, platform(config.discord), config.discord, redact, max_bytes,
                              ChannelPace(config.discord.channel_writes_per_5s), config.input))


async def serve(service: Service, config: Config, secrets: Secrets) -> None:
    """Run the bot until cancelled; on the way out, stop the runs under way and say so in their threads."""
    secrets.require("discord_token")
    with endpoints(config.discord):
        bot = make_bot(service, config, secrets)
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
