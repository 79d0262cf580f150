"""The messages before a mention, read from Discord: the recent history of the thread or channel it was made
in (back to ``[input] thread_messages``), the message that starts the thread, and the message it replies to
(``message.reference``), each with its author's display name and its attachments read as files. The core
decides what to keep (``bot.runs.thread_context``)."""

from __future__ import annotations

import logging

import aiohttp
import discord

from adapters.discord.text import readable
from agents.errors import UserInputError
from agents.types import Attachment
from bot.runs.attachments import check_size, to_attachment
from bot.runs.thread_context import Earlier, EarlierMessage

log = logging.getLogger(__name__)

NO_INTENT = ("The bot cannot read the earlier messages here: Discord's Message Content intent is off "
             "([discord] message_content_intent); it works from your request alone.")
NOT_READ = "The bot could not read the earlier messages here ({error}); it works from your request alone."
NO_ACCESS = ("The bot could not read the earlier messages here (Discord refused: it needs Read Message History "
             "in this channel); it works from your request alone.")


async def read_earlier(message: discord.Message, me: discord.abc.User, max_messages: int, max_bytes: int,
                       max_files: int, content_intent: bool) -> Earlier:
    """The messages before ``message`` in its channel or thread, oldest first."""
    if not content_intent:  # Discord sends other messages' text empty without it
        return Earlier(withheld=NO_INTENT)
    channel = message.channel
    try:
        recent = [m async for m in channel.history(limit=max_messages, before=message)] if max_messages else []
        starter = await _thread_starter(channel)
        replied = await _replied_to(message)
    except discord.Forbidden:
        log.warning("discord: reading the history of %s was refused", channel.id)
        return Earlier(withheld=NO_ACCESS)
    except (discord.HTTPException, aiohttp.ClientError, TimeoutError, OSError) as error:  # Discord did not answer
        log.warning("discord: reading the history of %s failed: %s", channel.id, type(error).__name__)
        return Earlier(withheld=NOT_READ.format(error=type(error).__name__))
    chosen = {m.id: m for m in [*recent, *(x for x in (starter, replied) if x is not None)]}
    ordered = sorted(chosen.values(), key=lambda m: m.id)
    notes: list[str] = []
    files_left = max_files
    earlier: list[EarlierMessage] = []
    for item in reversed(ordered):  # newest first, so the files read are the newest ones
        by_bot = item.author.bot or item.author.id == me.id
        files: tuple[Attachment, ...] = ()
        if item.attachments and files_left > 0 and not by_bot:
            files = (await _files(item, max_bytes, notes))[:files_left]
            files_left -= len(files)
        earlier.append(EarlierMessage(item.author.display_name, readable(item.content, item), files, by_bot,
                                      replied_to=replied is not None and item.id == replied.id))
    return Earlier(tuple(earlier[::-1]), tuple(notes), more_before=len(recent) == max_messages)


async def _thread_starter(channel: object) -> discord.Message | None:
    """The message a thread was started from, with the thread's id: in the parent channel for a thread started
    from a message there, in the thread itself for a forum's post (a forum holds no messages of its own)."""
    if not isinstance(channel, discord.Thread) or channel.parent is None:
        return None
    holder = channel.parent if isinstance(channel.parent, discord.TextChannel) else channel
    try:
        return await holder.fetch_message(channel.id)
    except discord.NotFound:
        return None


async def _replied_to(message: discord.Message) -> discord.Message | None:
    reference = message.reference
    if reference is None or reference.message_id is None:
        return None
    if isinstance(reference.resolved, discord.Message):
        return reference.resolved
    try:
        return await message.channel.fetch_message(reference.message_id)
    except discord.NotFound:
        return None


async def _files(item: discord.Message, max_bytes: int, notes: list[str]) -> tuple[Attachment, ...]:
    """The message's text files; one a person could not attach today is left out with a line saying why."""
    read: list[Attachment] = []
    for file in item.attachments:
        try:
            check_size(file.filename, file.size, max_bytes)
            read.append(to_attachment(file.filename, await file.read(), max_bytes))
        except UserInputError as error:
            notes.append(f"A file in the thread was not read: {error}")
        except discord.HTTPException as error:
            notes.append(f"A file in the thread was not read: {file.filename} could not be downloaded ({error.status}).")
    return tuple(read)
