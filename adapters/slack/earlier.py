"""The messages before a mention, read from Slack: the whole thread it was made in (``conversations.replies``,
every page), or, for a mention in the channel itself, the messages just above it (``conversations.history``,
back to ``[input] thread_messages``). Each becomes an ``EarlierMessage`` with its author's display name,
its text as the person wrote it, and its shared files read as attachments; the core decides the rest
(``bot.runs.thread_context``)."""

from __future__ import annotations

import html
import logging
import re
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.files import read_shared_files
from adapters.slack.messages import WORK_SUBTYPES, Incoming
from agents.errors import UserInputError
from agents.types import Attachment
from bot.runs.thread_context import Earlier, EarlierMessage

log = logging.getLogger(__name__)

PAGE_SIZE = 200  # Slack's largest page for both methods
# Slack's answers when the app may not read a conversation's history: the scope is not granted, or the
# bot is not a member of the (private) channel. Either way the run goes on with the request alone.
WITHHELD = frozenset({"missing_scope", "not_in_channel", "channel_not_found", "not_allowed_token_type"})
NO_HISTORY = ("The bot could not read the earlier messages here (Slack said {error}: the app needs the "
              "channels:history and groups:history scopes, and to be in the channel); it works from your request alone.")
NOT_READ = "The bot could not read the earlier messages here ({error}); it works from your request alone."
_MENTION = re.compile(r"<@([UW][A-Z0-9]+)(?:\|([^>]*))?>")
_LINK = re.compile(r"<((?:https?|mailto):[^|>]+)(?:\|[^>]*)?>")
_CHANNEL = re.compile(r"<#[A-Z0-9]+\|([^>]*)>")


async def read_earlier(client: AsyncWebClient, message: Incoming, bot_user: str, max_messages: int,
                       downloads: aiohttp.ClientSession, api_url: str, max_bytes: int, max_files: int) -> Earlier:
    """The messages before ``message`` in its thread (or above it in its channel), oldest first."""
    in_thread = message.thread_ts != message.ts
    try:
        raw, more = (await _replies(client, message) if in_thread
                     else await _history(client, message, max_messages))
    except SlackApiError as error:
        code = str(error.response.get("error") or "")
        log.warning("slack: reading %s in %s was refused (%s)", message.thread_ts, message.channel, code)
        return Earlier(withheld=(NO_HISTORY if code in WITHHELD else NOT_READ).format(error=code))
    except (SlackClientError, aiohttp.ClientError, TimeoutError, OSError) as error:  # Slack did not answer
        log.warning("slack: reading %s in %s failed: %s", message.thread_ts, message.channel, type(error).__name__)
        return Earlier(withheld=NOT_READ.format(error=type(error).__name__))
    before = [m for m in raw if float(m.get("ts") or 0) < float(message.ts)]
    names = _Names(client)
    notes: list[str] = []
    files_left = max_files
    earlier = []
    people = 0
    for item in reversed(before):  # newest first
        by_bot, text = _by_bot(item, bot_user), str(item.get("text") or "")
        if by_bot or people >= max_messages:  # left out, or beyond the bound: counted for the cut's line only
            earlier.append(EarlierMessage(str(item.get("user") or ""), text, by_bot=by_bot))
            continue
        people += 1
        files: tuple[Attachment, ...] = ()
        if item.get("files") and files_left > 0:
            files = (await _files(item, client, downloads, api_url, max_bytes, notes))[-files_left:]
            files_left -= len(files)
        earlier.append(EarlierMessage(await names.of(item), await _text(text, names), files, by_bot=by_bot))
    return Earlier(tuple(earlier[::-1]), tuple(notes), more)


async def _replies(client: AsyncWebClient, message: Incoming) -> tuple[list[dict[str, Any]], bool]:
    found: list[dict[str, Any]] = []
    cursor = ""
    while True:
        page = await client.conversations_replies(channel=message.channel, ts=message.thread_ts, limit=PAGE_SIZE,
                                                  cursor=cursor or None)
        found += list(page.get("messages") or [])
        cursor = str((page.get("response_metadata") or {}).get("next_cursor") or "")
        if not cursor:
            return _unique(found), False


async def _history(client: AsyncWebClient, message: Incoming, wanted: int) -> tuple[list[dict[str, Any]], bool]:
    """The channel's messages just above ``message``, newest pages first, until ``wanted`` are in hand."""
    found: list[dict[str, Any]] = []
    cursor, more = "", False
    while len(found) < wanted:
        page = await client.conversations_history(channel=message.channel, latest=message.ts, inclusive=False,
                                                  limit=min(PAGE_SIZE, wanted - len(found)), cursor=cursor or None)
        found += list(page.get("messages") or [])
        more = bool(page.get("has_more"))
        cursor = str((page.get("response_metadata") or {}).get("next_cursor") or "")
        if not cursor:
            break
    return sorted(_unique(found), key=lambda m: float(m.get("ts") or 0)), more


def _unique(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for item in messages:
        seen.setdefault(str(item.get("ts")), item)
    return list(seen.values())


def _by_bot(item: dict[str, Any], bot_user: str) -> bool:
    """Another app's message or the bot's own, and anything that is not a person writing (joins, edits)."""
    return (bool(item.get("bot_id")) or item.get("user") == bot_user or not item.get("user")
            or str(item.get("subtype") or "") not in WORK_SUBTYPES)


async def _files(item: dict[str, Any], client: AsyncWebClient, downloads: aiohttp.ClientSession, api_url: str,
                 max_bytes: int, notes: list[str]) -> tuple[Attachment, ...]:
    """The message's text files; one a person could not attach today is left out with a line saying why."""
    read: list[Attachment] = []
    for file in item.get("files") or []:
        try:
            read += await read_shared_files([file], client, downloads, api_url, max_bytes)
        except UserInputError as error:
            notes.append(f"A file in the thread was not read: {error}")
    return tuple(read)


async def _text(text: str, names: _Names) -> str:
    """The message as its author wrote it: mentions by name, links as URLs, Slack's escapes undone, and a
    code block's fences on lines of their own (Slack puts the code right after the ```)."""
    for user in {m.group(1) for m in _MENTION.finditer(text)}:
        text = re.sub(rf"<@{user}(?:\|[^>]*)?>", "@" + await names.named(user), text)
    text = _CHANNEL.sub(r"#\1", _LINK.sub(r"\1", text))
    return _fences_on_own_lines(html.unescape(text))


def _fences_on_own_lines(text: str) -> str:
    """Slack writes ```code``` inline; a fence opens and closes a line of its own in what the team reads. A
    first line that is one word (```python) is kept as the block's language, as a pasted Markdown block has it."""
    parts = text.split("```")
    if len(parts) < 3:
        return text
    out = [parts[0]]
    for index, part in enumerate(parts[1:], start=1):
        if out[-1] and not out[-1].endswith("\n"):
            out[-1] += "\n"
        opening = index % 2 == 1 and index < len(parts) - 1
        first = part.split("\n", 1)[0]
        if opening and part and not part.startswith("\n") and not (_INFO.fullmatch(first) and "\n" in part):
            part = "\n" + part
        if not opening and part and not part.startswith("\n"):
            part = "\n" + part
        out += ["```", part]
    return "".join(out)


_INFO = re.compile(r"[\w+#.-]+(?:[ :][\w./=\"-]+)?")


class _Names:
    """Display names by user id: from the message's own profile, else ``users.info`` (once per person)."""

    def __init__(self, client: AsyncWebClient) -> None:
        self._client = client
        self._known: dict[str, str] = {}

    async def of(self, item: dict[str, Any]) -> str:
        profile = item.get("user_profile") or {}
        name = str(profile.get("display_name") or profile.get("real_name") or "")
        user = str(item.get("user") or item.get("username") or "someone")
        if name:
            self._known.setdefault(user, name)
            return name
        return await self.named(user)

    async def named(self, user: str) -> str:
        if user not in self._known:
            self._known[user] = await self._look_up(user)
        return self._known[user]

    async def _look_up(self, user: str) -> str:
        try:
            response = await self._client.users_info(user=user)
        except SlackApiError as error:  # without users:read the id stands in for the name
            log.info("slack: users.info %s: %s", user, error.response.get("error"))
            return user
        profile = (response.get("user") or {}).get("profile") or {}
        return str(profile.get("display_name") or profile.get("real_name") or (response.get("user") or {}).get("name")
                   or user)
