"""What the bot does with a ``/code`` command, a message and a Stop press: Discord's events turned into
calls to the service, and its answers into Discord's ways of saying them (an ephemeral reply, a
reaction, a thread). Which messages to take, who may do what and how a run looks are the core's.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol, cast

import discord

from adapters.discord.earlier import read_earlier
from adapters.discord.platform import PLATFORM, interaction_place, message_place, thread_key
from adapters.discord.text import readable, thread_name, without_mention
from adapters.discord.thread import ChannelPace, DiscordThread
from agents.errors import UserInputError
from agents.types import Attachment
from bot.chat.thread import ChatPlatform
from bot.config.sections import DiscordConfig, InputConfig
from bot.runs.attachments import check_size, to_attachment
from bot.runs.service import Arrival, Prepared, Service
from bot.safety.redact import Redactor

log = logging.getLogger(__name__)

INTERNAL_ERROR = "Something went wrong on the bot's side; the details are in its log."
NO_THREAD_PERMISSION = ("The bot may not open a thread here: give it Create Public Threads and Send Messages in "
                        "Threads in this channel.")
REFUSED_REACTION = "⛔"
HEADER_TASK_CHARS = 1500  # of the task quoted in the message a thread starts from
USER_MESSAGE_TYPES = (discord.MessageType.default, discord.MessageType.reply)


@dataclass(frozen=True)
class Context:
    """What the handlers share: the service, Discord as the core sees it, and the settings."""

    service: Service
    platform: ChatPlatform
    config: DiscordConfig
    redact: Redactor
    max_attachment_bytes: int
    pace: ChannelPace  # Discord's write rate per channel, for every thread the bot writes in
    limits: InputConfig = field(default_factory=InputConfig)  # how much of a thread a mention reads


class HasContext(Protocol):
    codegen: Context


def context_of(client: Any) -> Context:
    return cast(HasContext, client).codegen


async def on_code(ctx: Context, interaction: discord.Interaction, task: str, file: discord.Attachment | None) -> None:
    """Refusals come first and privately; then a deferral, inside Discord's three seconds."""
    arrival = Arrival(f"interaction:{interaction.id}", thread_key(interaction.channel), interaction_place(interaction),
                      task, addressed=True)

    async def prepare() -> Prepared | None:
        await interaction.response.defer(thinking=True)
        try:
            attachments = await read_attachments([file] if file else [], ctx)
        except UserInputError as error:
            await interaction.edit_original_response(content=_said(ctx, error))
            return None
        header = ctx.platform.markup.text(f"**{interaction.user.display_name}** asked the team:\n>>> {_excerpt(task)}")
        message = await interaction.edit_original_response(content=ctx.redact(header))
        try:
            thread = await thread_for(ctx, interaction.channel, message, task)
        except UserInputError as error:
            await interaction.followup.send(_said(ctx, error), ephemeral=True)
            return None
        return Prepared(dataclasses.replace(arrival.request(PLATFORM, str(thread.id), attachments), link=thread.jump_url),
                        DiscordThread(thread, arrival.place.user, ctx.pace))

    try:
        if file:
            check_size(file.filename, file.size, ctx.max_attachment_bytes)
        taken = await ctx.service.take(arrival, ctx.platform, prepare)
    except UserInputError as error:  # refused before the deferral: privately, as the reply
        await interaction.response.send_message(_said(ctx, error, warn=False), ephemeral=True)
        return
    if taken.refusal:
        await interaction.response.send_message(taken.refusal, ephemeral=True)


async def on_message(ctx: Context, me: discord.ClientUser, message: discord.Message) -> None:
    """A mention starts a run in a new thread; a message in a thread the bot works in continues it."""
    if message.author.bot or message.author.id == me.id or message.type not in USER_MESSAGE_TYPES:
        return  # never answer a bot, least of all ourselves (Discord echoes our own messages back)
    # People often pick the bot's role from the mention list rather than the bot itself: both count.
    own_role = message.guild.self_role if message.guild else None
    mentioned = any(user.id == me.id for user in message.mentions) or (own_role in message.role_mentions)
    task = readable(without_mention(message.content, me.id, own_role.id if own_role else None), message)
    arrival = Arrival(f"message:{message.id}", thread_key(message.channel), message_place(message), task, mentioned)

    async def prepare() -> Prepared:
        attachments = await read_attachments(message.attachments, ctx)
        thread = await thread_for(ctx, message.channel, message, task)
        limits = ctx.limits
        earlier = partial(read_earlier, message, me, limits.thread_messages, ctx.max_attachment_bytes,
                          limits.max_attachments, ctx.config.message_content_intent)
        return Prepared(dataclasses.replace(arrival.request(PLATFORM, str(thread.id), attachments), link=thread.jump_url),
                        DiscordThread(thread, arrival.place.user, ctx.pace), earlier)

    try:
        taken = await ctx.service.take(arrival, ctx.platform, prepare)
    except UserInputError as error:
        await message.reply(_said(ctx, error))
        return
    if taken.refusal:
        await message.add_reaction(REFUSED_REACTION)  # a channel is no place for a private refusal


async def on_stop(ctx: Context, interaction: discord.Interaction, run_id: str) -> None:
    why_not = await ctx.service.stop(run_id, interaction_place(interaction), ctx.platform)
    if why_not:
        await interaction.response.send_message(why_not, ephemeral=True)
    else:  # the run's last message and the button's removal come from its renderer, in order
        await interaction.response.defer()


async def thread_for(ctx: Context, channel: object, start: discord.Message, task: str) -> discord.Thread:
    """The thread the work happens in: the one asked from, else a new one started from ``start``."""
    if isinstance(channel, discord.Thread):
        return channel
    try:
        minutes = ctx.config.thread_archive_minutes
        return await start.create_thread(name=thread_name(task), auto_archive_duration=minutes)  # type: ignore[arg-type]
    except discord.Forbidden:
        raise UserInputError(NO_THREAD_PERMISSION) from None


async def read_attachments(files: Sequence[discord.Attachment], ctx: Context) -> tuple[Attachment, ...]:
    """Text files only, size-checked before download; anything else is refused with a reason."""
    attachments = []
    for file in files:
        check_size(file.filename, file.size, ctx.max_attachment_bytes)
        attachments.append(to_attachment(file.filename, await file.read(), ctx.max_attachment_bytes))
    return tuple(attachments)


def _said(ctx: Context, error: UserInputError, warn: bool = True) -> str:
    """A refusal as the person sees it: it may quote what they sent (a file name), so in Discord's markup."""
    return ("⚠️ " if warn else "") + ctx.platform.markup.text(str(error))


def _excerpt(task: str) -> str:
    return task if len(task) <= HEADER_TASK_CHARS else task[:HEADER_TASK_CHARS].rstrip() + " …"
