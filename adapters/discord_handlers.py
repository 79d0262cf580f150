"""What the bot does with a ``/code`` command, a message and a Stop press: check, then run in a thread.

Translation only: access and input checks turn into refusals, everything else into a ``ChatRequest``
for the service, whose events a ``ThreadRenderer`` posts. Refusals cost no model call.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

import discord

from adapters.discord_access import Place, place_of, refusal
from adapters.discord_render import ThreadRenderer
from adapters.discord_text import thread_name, without_mention
from agents.errors import UserInputError
from agents.types import Attachment
from bot.attachments import to_attachment
from bot.config import DiscordConfig
from bot.redact import Redactor
from bot.service import ChatRequest, RunHandle, Service, new_run_id
from bot.store import Store

log = logging.getLogger(__name__)

PLATFORM = "discord"
INTERNAL_ERROR = "Something went wrong on the bot's side; the details are in its log."
NO_THREAD_PERMISSION = ("The bot may not open a thread here: give it Create Public Threads and Send Messages in "
                        "Threads in this channel.")
REFUSED_REACTION = "⛔"
HEADER_TASK_CHARS = 1500  # of the task quoted in the message a thread starts from
USER_MESSAGE_TYPES = (discord.MessageType.default, discord.MessageType.reply)


@dataclass
class Context:
    """What the handlers share: the core, the settings and the runs under way in this process."""

    service: Service
    store: Store
    config: DiscordConfig
    redact: Redactor
    max_attachment_bytes: int
    runs: dict[str, RunUnderWay] = field(default_factory=dict)


@dataclass(frozen=True)
class RunUnderWay:
    handle: RunHandle
    renderer: ThreadRenderer
    user_id: str  # who started it: only they may stop it


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


async def run_in_thread(ctx: Context, thread: discord.abc.Messageable, request: ChatRequest) -> None:
    """Post the control message, hand the request to the service, and stay until the last message is out."""
    run_id = new_run_id()
    renderer = ThreadRenderer(thread, ctx.config, ctx.redact)
    view = discord.ui.View(timeout=None)
    view.add_item(StopButton(run_id))
    await renderer.open(run_id, view)
    try:
        handle = await ctx.service.submit(request, renderer, renderer.publisher(), run_id=run_id)
    except UserInputError as error:
        await renderer.refuse(f"⚠️ {error}")
        return
    except Exception:
        log.exception("could not start run %s", run_id)
        await renderer.refuse(f"⚠️ {INTERNAL_ERROR}")
        return
    ctx.runs[run_id] = RunUnderWay(handle, renderer, request.user_id)
    try:
        await renderer.done()
    finally:
        ctx.runs.pop(run_id, None)


class StopButton(discord.ui.DynamicItem[discord.ui.Button[discord.ui.View]], template=r"codegen:stop:(?P<run_id>[0-9a-f]{1,32})"):
    """The Stop button. Its custom_id carries the run id, so it works on any message, also after a restart."""

    def __init__(self, run_id: str) -> None:
        super().__init__(discord.ui.Button(label="Stop", style=discord.ButtonStyle.danger,
                                           custom_id=f"codegen:stop:{run_id}"))
        self.run_id = run_id

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
                             match: Any) -> StopButton:
        return cls(match["run_id"])

    async def callback(self, interaction: discord.Interaction) -> None:
        ctx = context_of(interaction.client)
        refused = refusal(ctx.config, interaction_place(interaction)) or _not_starter(ctx, self.run_id, interaction.user)
        if refused:
            await interaction.response.send_message(refused, ephemeral=True)
        elif ctx.service.cancel(self.run_id):
            # The run's last message and the button's removal come from its renderer, in order.
            await interaction.response.defer()
        else:
            await interaction.response.edit_message(content=f"Run `{self.run_id}` is no longer running.", view=None)


def _not_starter(ctx: Context, run_id: str, user: discord.abc.User) -> str | None:
    run = ctx.runs.get(run_id)
    if run is None or run.user_id == str(user.id):
        return None
    return f"Only <@{run.user_id}> (who started this run) can stop it."


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


async def stop_all(ctx: Context, grace_s: float) -> None:
    """On shutdown: stop the runs under way and give their threads a moment to say so."""
    for run in ctx.runs.values():
        run.handle.cancel()
    pending = [asyncio.ensure_future(run.renderer.done()) for run in ctx.runs.values()]
    if pending:
        await asyncio.wait(pending, timeout=grace_s)
