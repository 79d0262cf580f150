"""Text shaping particular to Discord: thread names, the bot's mention, and mentions read as names."""

from __future__ import annotations

import re

import discord

from bot.chat.badges import cut_at_word
from bot.safety.redact import mask_pasted_secrets

THREAD_NAME_LIMIT = 100  # Discord's limit on a channel or thread name
DEFAULT_THREAD_NAME = "codegen run"


def thread_name(task: str) -> str:
    """The task's first line, cut at a word to what Discord allows."""
    first = next((line.strip() for line in task.splitlines() if line.strip()), "")
    first = re.sub(r"<@[!&]?\d+>", "", first).strip()  # mentions read badly in a thread list
    first = mask_pasted_secrets(first)[0]  # a token pasted into the task is not repeated in the thread list
    return cut_at_word(first, THREAD_NAME_LIMIT) or DEFAULT_THREAD_NAME


def without_mention(text: str, user_id: int, role_id: int | None = None) -> str:
    """The message with the bot's mention taken out: the user (both forms) and the bot's own role."""
    text = re.sub(rf"<@!?{user_id}>", "", text)
    return (re.sub(rf"<@&{role_id}>", "", text) if role_id else text).strip()


_MARKUP = re.compile(r"<@!?(?P<user>\d+)>|<@&(?P<role>\d+)>|<#(?P<channel>\d+)>|<a?:(?P<emoji>\w+):\d+>")


def readable(text: str, message: discord.Message) -> str:
    """``text`` of ``message`` as people see it in Discord: mentions of people, roles and channels by their names
    (from what the message resolves; a name Discord did not give stays ``@id``), custom emoji by their names."""
    people = {str(u.id): u.display_name for u in message.mentions}
    roles = {str(r.id): r.name for r in message.role_mentions}
    guild = message.guild

    def named(match: re.Match[str]) -> str:
        if match["user"]:
            return "@" + people.get(match["user"], match["user"])
        if match["role"]:
            return "@" + roles.get(match["role"], match["role"])
        if match["channel"]:
            channel = guild.get_channel_or_thread(int(match["channel"])) if guild else None
            return "#" + (channel.name if channel else match["channel"])
        return f":{match['emoji']}:"

    return _MARKUP.sub(named, text)
