"""A Slack message event as the service sees it: who wrote it where, whether it names the bot, the task."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any

from bot.chat.access import Place
from bot.runs.service import Arrival

# A plain message, one with files, or a thread reply also sent to the channel. Everything else
# (edits, deletions, joins, bot posts) is not someone asking the team for something. An edit that adds the
# bot's mention comes as an ``app_mention`` with no subtype, marked ``edited``: an edit all the same.
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
    team: str = ""  # the sender's workspace, where Slack says it (a shared channel: maybe another organization's)

    @property
    def thread_key(self) -> str:
        return f"{self.channel}:{self.thread_ts}"


def incoming(event: dict[str, Any]) -> Incoming | None:
    """The message in a ``message`` or ``app_mention`` event, or None when it is no one's request."""
    if event.get("subtype", "") not in WORK_SUBTYPES or event.get("bot_id") or not event.get("user") \
            or event.get("edited"):
        return None
    channel, ts = str(event.get("channel", "")), str(event.get("ts", ""))
    if not channel or not ts:
        return None
    direct = event.get("channel_type") == "im" or (channel.startswith("D") and "channel_type" not in event)
    return Incoming(channel=channel, user=str(event["user"]), ts=ts, thread_ts=str(event.get("thread_ts") or ts),
                    text=str(event.get("text") or ""), files=tuple(event.get("files") or ()), direct=direct,
                    team=str(event.get("user_team") or event.get("source_team") or ""))


OUTSIDER = ("This bot takes requests from people of the workspace (or the organization) it is installed in; ask one of "
            "its admins to add you to its list of users ([slack] allowed_users).")


def outsider(message: Incoming, team: str, allowed_users: tuple[str, ...]) -> bool:
    """Whether the sender may belong to another workspace than the bot's (``team``), through a shared channel, and is
    not listed by name: of another organization (Slack Connect), they would run code and spend the budget of a team
    they are not part of (a workspace of the bot's own Enterprise Grid organization is asked about apart). An
    organization-wide install has no workspace of its own (``team`` is empty): everyone the event names a workspace
    for is asked about by organization then."""
    return bool(message.team) and message.team != team and message.user not in allowed_users


def arrival_of(message: Incoming, bot_user: str, mention_event: bool) -> Arrival:
    """The message for the service. One key per message: the ``app_mention`` and ``message`` events one
    mention produces, and Slack's retries of either, are one arrival."""
    return Arrival(
        key=f"{message.channel}:{message.ts}", thread_key=message.thread_key,
        place=Place(message.user, message.channel, direct=message.direct), text=task_text(message.text, bot_user),
        addressed=mention_event or message.direct or mentions(message.text, bot_user),
    )


def task_text(text: str, bot_user: str) -> str:
    """The task as the person wrote it: without the bot's mention, Slack's link markup and escapes."""
    if bot_user:
        text = re.sub(rf"<@{re.escape(bot_user)}(?:\|[^>]*)?>", "", text)
    text = _LINK.sub(r"\1", text)
    return html.unescape(text).strip()  # Slack escapes exactly &, < and > in message text


def mentions(text: str, bot_user: str) -> bool:
    return bool(bot_user) and f"<@{bot_user}" in text
