"""What the bot does with a ``/code`` command, a message and a Stop press: check, then run in a thread.

Translation only: access and input checks turn into refusals, everything else into a ``ChatRequest``
for the service, which draws the run in the thread. Refusals cost no model call.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast

import discord

from adapters.discord_access import Place, place_of, refusal
from adapters.discord_text import thread_name, without_mention
from adapters.discord_thread import DiscordMarkup, DiscordThread
from agents.errors import UserInputError
from agents.types import Attachment
from bot.attachments import to_attachment
from bot.chat.thread import ChatPlatform, ThreadStyle
from bot.config import DiscordConfig
from bot.redact import Redactor
from bot.service import ChatRequest, Service
from bot.store import Store

log = logging.getLogger(__name__)

PLATFORM = "discord"
INTERNAL_ERROR = "Something went wrong on the bot's side; the details are in its log."
NO_THREAD_PERMISSION = ("The bot may not open a thread here: give it Create Public Threads and Send Messages in "
                        "Threads in this channel.")
REFUSED_REACTION = "⛔"
HEADER_TASK_CHARS = 1500  # of the task quoted in the message a thread starts from
USER_MESSAGE_TYPES = (discord.MessageType.default, discord.MessageType.reply)


@dataclass(frozen=True)
class Context:
    """What the handlers share: the core and the settings."""

    service: Service
    store: Store
    config: DiscordConfig
    redact: Redactor
    max_attachment_bytes: int

    @property
    def platform(self) -> ChatPlatform:
        """Discord as the run renderer draws in it."""
        return ChatPlatform(PLATFORM, DiscordMarkup(), ThreadStyle(
            max_message_chars=self.config.max_message_chars, update_interval_s=self.config.update_interval_s,
            max_inline_code_chars=self.config.inline_code_max_chars))


class HasContext(Protocol):
    codegen: Context


def context_of(client: Any) -> Context:
    return cast(HasContext, client).codegen


# -- /code ----------------------------------------------------------------------------------------


async def on_code(ctx: Context, interaction: discord.Interaction, task: str, file: discord.Attachment | None) -> None:
    """Refusals come first and privately; then a deferral, inside Discord's three seconds."""
    request = ChatRequest(PLATFORM, "", str(interaction.user.id), task)
    refused = refusal(ctx.config, interaction_place(interaction)) or _precheck(ctx, request, file)
    if refused:
        await interaction.response.send_message(refused, ephemeral=True)
        return
    await interaction.response.defer(thinking=True)
    try:
        request = dataclasses.replace(request, attachments=await read_attachments([file] if file else [], ctx))
    except UserInputError as error:
        await interaction.edit_original_response(content=f"⚠️ {error}")
        return
    header = f"**{interaction.user.display_name}** asked the team:\n>>> {_excerpt(task)}"
    message = await interaction.edit_original_response(content=ctx.redact(header))
    try:
        thread = await thread_for(ctx, interaction.channel, message, task)
    except UserInputError as error:
        await interaction.followup.send(f"⚠️ {error}", ephemeral=True)
        return
    await run_in_thread(ctx, thread, dataclasses.replace(request, thread_key=str(thread.id)))


def _precheck(ctx: Context, request: ChatRequest, file: discord.Attachment | None) -> str | None:
    try:
        if file:
            _check_size(file, ctx.max_attachment_bytes)
        ctx.service.check(request)
    except UserInputError as error:
        return str(error)
    return None


def interaction_place(interaction: discord.Interaction) -> Place:
    channel = interaction.channel
    parent = channel.parent_id if isinstance(channel, discord.Thread) else None
    return place_of(interaction.guild_id, interaction.channel_id or 0, parent, _role_ids(interaction.user))


# -- messages: mentions, and follow-ups in the bot's threads --------------------------------------


async def on_message(ctx: Context, me: discord.ClientUser, message: discord.Message) -> None:
    if message.author.bot or message.author.id == me.id or message.type not in USER_MESSAGE_TYPES:
        return  # never answer a bot, least of all ourselves (Discord echoes our own messages back)
    # People often pick the bot's role from the mention list rather than the bot itself: both count.
    own_role = message.guild.self_role if message.guild else None
    mentioned = any(user.id == me.id for user in message.mentions) or (own_role in message.role_mentions)
    channel = message.channel
    ours = isinstance(channel, discord.Thread) and channel.owner_id == me.id
    task = without_mention(message.content, me.id, own_role.id if own_role else None)
    # Without the message content intent a follow-up that does not mention the bot arrives empty.
    if not (mentioned or ours) or not (task or message.attachments):
        return
    if not await ctx.store.first_sighting(f"discord:message:{message.id}"):
        return  # delivered twice (a resumed gateway session)
    if refusal(ctx.config, message_place(message)):
        await message.add_reaction(REFUSED_REACTION)  # a channel is no place for a private refusal
        return
    try:
        attachments = await read_attachments(message.attachments, ctx)
        request = ChatRequest(PLATFORM, "", str(message.author.id), task, attachments)
        ctx.service.check(request)
        thread = await thread_for(ctx, channel, message, task)
    except UserInputError as error:
        await message.reply(f"⚠️ {error}")
        return
    await run_in_thread(ctx, thread, dataclasses.replace(request, thread_key=str(thread.id)))


def message_place(message: discord.Message) -> Place:
    channel = message.channel
    parent = channel.parent_id if isinstance(channel, discord.Thread) else None
    return place_of(message.guild.id if message.guild else None, channel.id, parent, _role_ids(message.author))


# -- a run in a thread ----------------------------------------------------------------------------


async def thread_for(ctx: Context, channel: object, start: discord.Message, task: str) -> discord.Thread:
    """The thread the work happens in: the one asked from, else a new one started from ``start``."""
    if isinstance(channel, discord.Thread):
        return channel
    try:
        minutes = ctx.config.thread_archive_minutes
        return await start.create_thread(name=thread_name(task), auto_archive_duration=minutes)  # type: ignore[arg-type]
    except discord.Forbidden:
        raise UserInputError(NO_THREAD_PERMISSION) from None


async def run_in_thread(ctx: Context, thread: discord.Thread, request: ChatRequest) -> None:
    """Hand the request to the service, which draws the run in the thread; a refusal is said there."""
    try:
        await ctx.service.start(request, DiscordThread(thread), ctx.platform)
    except UserInputError as error:  # the queue filled up since the check
        await thread.send(f"⚠️ {error}")


async def on_stop(ctx: Context, interaction: discord.Interaction, run_id: str) -> None:
    refused = refusal(ctx.config, interaction_place(interaction)) or _not_starter(ctx, run_id, interaction.user)
    if refused:
        await interaction.response.send_message(refused, ephemeral=True)
    elif ctx.service.cancel(run_id):
        # The run's last message and the button's removal come from its renderer, in order.
        await interaction.response.defer()
    else:
        await interaction.response.edit_message(content=f"Run `{run_id}` is no longer running.", view=None)


def _not_starter(ctx: Context, run_id: str, user: discord.abc.User) -> str | None:
    starter = ctx.service.starter(run_id)
    if starter is None or starter == str(user.id):
        return None
    return f"Only <@{starter}> (who started this run) can stop it."


# -- shared pieces --------------------------------------------------------------------------------


async def read_attachments(files: Sequence[discord.Attachment], ctx: Context) -> tuple[Attachment, ...]:
    """Text files only, size-checked before download; anything else is refused with a reason."""
    attachments = []
    for file in files:
        _check_size(file, ctx.max_attachment_bytes)
        attachments.append(to_attachment(file.filename, await file.read(), ctx.max_attachment_bytes))
    return tuple(attachments)


def _check_size(file: discord.Attachment, max_bytes: int) -> None:
    if file.size > max_bytes:
        raise UserInputError(f"{file.filename} is {file.size:,} bytes; attachments are limited to {max_bytes:,} bytes.")


def _role_ids(user: discord.abc.User) -> list[int]:
    return [role.id for role in user.roles] if isinstance(user, discord.Member) else []


def _excerpt(task: str) -> str:
    return task if len(task) <= HEADER_TASK_CHARS else task[:HEADER_TASK_CHARS].rstrip() + " …"
