"""Which Slack messages are for the bot, who may use it, and what a message asks of the team."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any

from bot.config import SlackConfig

# A plain message, one with files, or a thread reply also sent to the channel. Everything else
# (edits, deletions, joins, bot posts) is not someone asking the team for something.
WORK_SUBTYPES = frozenset({"", "file_share", "thread_broadcast"})
_LINK = re.compile(r"<((?:https?|mailto):[^|>]+)(?:\|[^>]*)?>")


@dataclass(frozen=True)
class Incoming:
    """A person's message the bot may act on."""

    channel: str
    user: str
    ts: str
    thread_ts: str  # the thread to answer in: the one the message is in, else a new one on the message
    text: str
    files: tuple[dict[str, Any], ...]
    direct: bool  # a DM with the bot

    @property
    def thread_key(self) -> str:
        return f"{self.channel}:{self.thread_ts}"

    @property
    def in_thread(self) -> bool:
        return self.thread_ts != self.ts


def incoming(event: dict[str, Any]) -> Incoming | None:
    """The message in a ``message`` or ``app_mention`` event, or None when it is no one's request."""
    if event.get("subtype", "") not in WORK_SUBTYPES or event.get("bot_id") or not event.get("user"):
        return None
    channel, ts = str(event.get("channel", "")), str(event.get("ts", ""))
    if not channel or not ts:
        return None
    direct = event.get("channel_type") == "im" or (channel.startswith("D") and "channel_type" not in event)
    return Incoming(channel=channel, user=str(event["user"]), ts=ts, thread_ts=str(event.get("thread_ts") or ts),
                    text=str(event.get("text") or ""), files=tuple(event.get("files") or ()), direct=direct)


def refusal(settings: SlackConfig, channel: str, user: str, direct: bool) -> str | None:
    """Why this user may not use the bot here, in a sentence for them; None when they may."""
    if direct and not settings.direct_messages:
        return "This bot does not take direct messages; mention it in a channel where it is enabled."
    if not direct and settings.allowed_channels and channel not in settings.allowed_channels:
        return "This bot is not enabled in this channel; use one where it is, or ask an admin to add this one."
    if settings.allowed_users and user not in settings.allowed_users:
        return "You are not on this bot's list of users; ask an admin to add you (slack.allowed_users)."
    return None


def task_text(text: str, bot_user: str) -> str:
    """The task as the person wrote it: without the bot's mention, Slack's link markup and escapes."""
    if bot_user:
        text = re.sub(rf"<@{re.escape(bot_user)}(?:\|[^>]*)?>", "", text)
    text = _LINK.sub(r"\1", text)
    return html.unescape(text).strip()  # Slack escapes exactly &, < and > in message text


def mentions(text: str, bot_user: str) -> bool:
    return bool(bot_user) and f"<@{bot_user}" in text
