"""One Discord thread as the run renderer writes to it (``bot.chat.thread.ChatThread``), and Discord's
markup: messages sent and edited through discord.py, the Stop button as a persistent component, files
as attachments."""

from __future__ import annotations

import asyncio
import io
import logging
import re
import time
from collections import deque
from collections.abc import Mapping
from typing import Any, Protocol, cast

import discord

from agents.errors import CheckInError
from agents.fences import segments
from bot.chat.progress import Progress
from bot.chat.thread import MessageGone
from bot.safety.inert import in_written_order

log = logging.getLogger(__name__)

FILES_PER_MESSAGE = 10  # Discord's limit on attachments in one message
WINDOW_S = 5.0  # Discord counts a channel's message writes over five seconds
# What Discord reads as a mention: @everyone, @here, <@user>, <@!user>, <@&role>, <#channel>, </command:id>.
_MENTION = re.compile(r"(?<![\w.])@(everyone|here)\b|<(@[!&]?|#|/)(?=[^<>\s]*>)")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)


def mentions_only(user_id: str) -> discord.AllowedMentions:
    """No one is pinged by what the bot sends but, where it names them, the person it answers."""
    users = [discord.Object(int(user_id))] if user_id.isdigit() else False
    return discord.AllowedMentions(everyone=False, roles=False, users=users, replied_user=False)


def without_mentions(markdown: str) -> str:
    """Markdown with every mention shown as written, not as a name (a zero-width space after ``@`` or
    ``<``), outside code, where Discord shows it as written anyway."""
    out: list[str] = []
    for part in segments(markdown):
        if not isinstance(part, str):
            out.append(part.source)
            continue
        pieces, position = [], 0
        for span in _CODE_SPAN.finditer(part):
            pieces.append(_MENTION.sub(_broken, part[position:span.start()]))
            pieces.append(span.group())
            position = span.end()
        pieces.append(_MENTION.sub(_broken, part[position:]))
        out.append("".join(pieces))
    return "".join(out)


def _broken(match: re.Match[str]) -> str:
    return f"@\u200b{match.group(1)}" if match.group(1) else f"<\u200b{match.group(2)}"


class StopHandler(Protocol):
    """The client that handles a press of the Stop button."""

    async def stop_pressed(self, interaction: discord.Interaction, run_id: str) -> None: ...


class StopButton(discord.ui.DynamicItem[discord.ui.Button[discord.ui.View]], template=r"codegen:stop:(?P<run_id>[0-9a-f]{1,32})"):
    """The Stop button. Its custom_id carries the run id, so it works on any message, also after a restart;
    the client decides what a press does."""

    def __init__(self, run_id: str) -> None:
        super().__init__(discord.ui.Button(label="Stop", style=discord.ButtonStyle.danger,
                                           custom_id=f"codegen:stop:{run_id}"))
        self.run_id = run_id

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
                             match: Any) -> StopButton:
        return cls(match["run_id"])

    async def callback(self, interaction: discord.Interaction) -> None:
        await cast(StopHandler, interaction.client).stop_pressed(interaction, self.run_id)


class ChannelPace:
    """Discord's per-channel write rate, shared by everything that writes to a channel (several runs in one
    thread): at most ``writes`` posts and edits in any five seconds; a write beyond that waits its turn,
    rather than being refused with a 429 and retried."""

    def __init__(self, writes: int) -> None:
        self._writes = writes
        self._recent: dict[int, deque[float]] = {}
        self._locks: dict[int, asyncio.Lock] = {}

    async def wait(self, channel_id: int) -> None:
        async with self._locks.setdefault(channel_id, asyncio.Lock()):
            recent = self._recent.setdefault(channel_id, deque())
            while recent and time.monotonic() - recent[0] >= WINDOW_S:
                recent.popleft()
            if len(recent) >= self._writes:
                await asyncio.sleep(recent[0] + WINDOW_S - time.monotonic())
                recent.popleft()
            recent.append(time.monotonic())


class DiscordThread:
    def __init__(self, channel: discord.Thread, user_id: str = "", pace: ChannelPace | None = None) -> None:
        self._channel = channel
        self._mentions = mentions_only(user_id)  # who the run answers: the only one a message may ping
        self._pace = pace

    async def _turn(self) -> None:
        if self._pace is not None:
            await self._pace.wait(self._channel.id)

    async def post(self, text: str, stop: str = "", progress: Progress | None = None) -> str:
        await self._turn()
        message = await self._channel.send(text, view=_stop_view(stop) or discord.utils.MISSING,
                                           allowed_mentions=self._mentions)
        return str(message.id)

    async def edit(self, message_id: str, text: str, stop: str = "", progress: Progress | None = None) -> None:
        await self._turn()
        try:
            await self._channel.get_partial_message(int(message_id)).edit(content=text, view=_stop_view(stop),
                                                                          allowed_mentions=self._mentions)
        except discord.NotFound:
            raise MessageGone(message_id) from None

    async def working(self, text: str) -> None:
        """Discord's typing indicator: it shows for ten seconds, or until the bot's next message."""
        if text:
            await self._channel.typing()

    async def upload(self, files: Mapping[str, str], comment: str) -> str:
        """The files attached in as many messages as Discord's limit needs; the link to the first."""
        items = list(files.items())
        first = ""
        try:
            for start in range(0, len(items), FILES_PER_MESSAGE):
                batch = [discord.File(io.BytesIO(content.encode("utf-8")), filename=name)
                         for name, content in items[start:start + FILES_PER_MESSAGE]]
                await self._turn()
                message = await self._channel.send(comment if not start else None, files=batch,
                                                   allowed_mentions=self._mentions)
                first = first or message.jump_url
        except discord.HTTPException as error:
            log.warning("attaching %d file(s) in thread %s failed: %s", len(items), self._channel.id, error)
            raise CheckInError(f"Discord did not take the files ({error.status} {error.text or 'error'}).") from None
        return first


def _stop_view(run_id: str) -> discord.ui.View | None:
    if not run_id:
        return None
    view = discord.ui.View(timeout=None)
    view.add_item(StopButton(run_id))
    return view


class DiscordMarkup:
    """Discord reads the models' Markdown as it is, but for mentions: they are shown as written (and no
    message allows them to ping anyone but the person answered)."""

    def text(self, markdown: str) -> str:
        return without_mentions(in_written_order(markdown))

    def mention(self, user_id: str) -> str:
        return f"<@{user_id}>"
