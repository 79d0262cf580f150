"""The web conversations this process shows, and the pages watching them.

A conversation started here lives in memory while it is drawn; one from the store (an earlier process's, or
one dropped from memory) is drawn again on first sight (``history.draw_again``). Idle conversations beyond
``KEEP_IDLE`` are dropped from memory, oldest first, and drawn again when reopened. Each person sees only the
conversations they started: for anyone else a conversation does not exist.

Whenever a conversation changes in a lasting way, its side panel is read again from the store and sent to its
pages, and the person's list of conversations too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets as random_tokens
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from adapters.web.conversation import Conversation, Op, Watcher
from adapters.web.history import draw_again
from adapters.web.panel import Panel, build_panel
from adapters.web.platform import PLATFORM
from adapters.web.relay import Relay
from agents.language import BUILT_IN, Languages
from agents.types import RunStatus
from bot.chat.renderer import Redact
from bot.chat.thread import ChatPlatform
from bot.runs.fanout import Fanout
from bot.store.protocol import History

log = logging.getLogger(__name__)

KEEP_IDLE = 200  # conversations kept in memory with no page watching and no run under way
LIST_LENGTH = 50


def new_key() -> str:
    return random_tokens.token_urlsafe(16)  # unguessable: a conversation's address is no secret, but no hint either


class Hub:
    def __init__(self, history: History, platform: ChatPlatform, redact: Redact, busy: Callable[[str], bool],
                 languages: Languages = BUILT_IN, fanout: Fanout | None = None) -> None:
        self._history, self._platform, self._redact = history, platform, redact
        self._languages = languages  # a reopened conversation's code blocks are named as the live run named them
        self._busy = busy  # whether a conversation has a run under way (or queued)
        self._open: OrderedDict[str, Conversation] = OrderedDict()
        self._loading: dict[str, asyncio.Future[Conversation | None]] = {}
        self._pages: dict[str, set[Watcher]] = {}  # person -> their pages
        self._refreshing: dict[str, bool] = {}  # conversation -> changed again while being refreshed
        self._tasks: set[asyncio.Task[None]] = set()
        # Replicas on PostgreSQL: a page here follows a run under way on another replica (``adapters.web.relay``)
        self._relay = Relay(fanout, self._open.get, busy, self._changed) if fanout is not None else None

    # -- conversations ------------------------------------------------------------------------

    def new(self, key: str, owner: str) -> Conversation:
        conversation = Conversation(key, owner)
        conversation.changed = self._changed
        self._relayed(conversation)
        self._open[key] = conversation
        self._evict()
        return conversation

    def forget(self, conversation: Conversation) -> None:
        """Drop a conversation whose first task was refused: nothing of it was stored."""
        if self._open.get(conversation.key) is conversation:
            del self._open[conversation.key]

    async def open(self, key: str, user: str) -> Conversation | None:
        """The person's conversation ``key``, drawn from the store if need be; None when it is not theirs."""
        conversation = self._open.get(key)
        if conversation is None:
            loading = self._loading.get(key)
            if loading is None:  # one drawing per conversation, however many pages ask at once
                loading = asyncio.ensure_future(self._load(key))
                self._loading[key] = loading
                loading.add_done_callback(lambda _: self._loading.pop(key, None))
            conversation = await asyncio.shield(loading)
        if conversation is None or conversation.owner != user:
            return None
        self._open.move_to_end(key)
        return conversation

    def with_run(self, run_id: str, user: str) -> Conversation | None:
        """The person's conversation whose messages carry run ``run_id``'s Stop control."""
        for conversation in self._open.values():
            if conversation.owner == user and any(m.stop == run_id for m in conversation.messages.values()):
                return conversation
        return None

    async def _load(self, key: str) -> Conversation | None:
        runs = await self._history.conversation_runs(PLATFORM, key)
        if not runs:
            return None
        conversation = Conversation(key, runs[0].user_id)
        await draw_again(conversation, self._history, runs, self._platform, self._redact, self._languages)
        conversation.panel = await self.panel(key)
        conversation.changed = self._changed  # from now on: the drawing above changed nothing lasting
        self._relayed(conversation)
        self._open[key] = conversation
        self._evict()
        if self._relay is not None and runs[-1].status == RunStatus.RUNNING:  # under way, maybe on another replica
            self._relay.want(key)
        return conversation

    def _relayed(self, conversation: Conversation) -> None:
        if self._relay is not None:
            conversation.relay = self._relay.sent

    def _evict(self) -> None:
        idle = [key for key, c in self._open.items() if not c.watchers and not self._busy(key)]
        for key in idle[: max(0, len(self._open) - KEEP_IDLE)]:
            del self._open[key]

    # -- pages --------------------------------------------------------------------------------

    def watch(self, user: str, conversation: Conversation | None) -> Watcher:
        watcher = Watcher(user)
        self._pages.setdefault(user, set()).add(watcher)
        if conversation is not None:
            conversation.watchers.add(watcher)
        return watcher

    def unwatch(self, watcher: Watcher, conversation: Conversation | None) -> None:
        pages = self._pages.get(watcher.user, set())
        pages.discard(watcher)
        if not pages:
            self._pages.pop(watcher.user, None)
        if conversation is not None:
            conversation.watchers.discard(watcher)

    async def conversations(self, user: str) -> list[Op]:
        listed = await self._history.conversations(PLATFORM, user, LIST_LENGTH)
        return [{"key": c.thread_key, "title": self._redact(c.title), "status": c.status, "updated": c.updated_at,
                 "runs": c.runs} for c in listed]

    async def panel(self, key: str) -> Panel:
        runs = await self._history.conversation_runs(PLATFORM, key)
        records = [record for run in runs if (record := await self._history.run(run.id)) is not None]
        return build_panel(key, records, self._redact)

    async def close(self) -> None:
        """End every page's stream (they reconnect to whoever serves next) and the pending refreshes."""
        for pages in list(self._pages.values()):
            for watcher in list(pages):
                watcher.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task

    # -- keeping pages current ----------------------------------------------------------------

    def _changed(self, conversation: Conversation) -> None:
        if conversation.key in self._refreshing:
            self._refreshing[conversation.key] = True
            return
        self._refreshing[conversation.key] = False
        task = asyncio.get_running_loop().create_task(self._refresh(conversation))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _refresh(self, conversation: Conversation) -> None:
        """Read the panel again, once per burst of changes, and send what is new."""
        key = conversation.key
        try:
            while True:
                await asyncio.sleep(0)  # the rest of a burst (a turn's messages) lands first
                self._refreshing[key] = False
                panel = await self.panel(key)
                old, conversation.panel = conversation.panel, panel
                if panel != old:
                    for watcher in list(conversation.watchers):
                        watcher.send({"type": "panel", "panel": _news(old, panel)})
                if (old.get("status"), len(old.get("runs", []))) != (panel.get("status"), len(panel.get("runs", []))):
                    await self._send_list(conversation.owner)
                if not self._refreshing[key]:
                    return
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("bringing the web pages of conversation %s up to date failed", key)
        finally:
            self._refreshing.pop(key, None)

    async def _send_list(self, user: str) -> None:
        pages = self._pages.get(user)
        if pages:
            listed = await self.conversations(user)
            for watcher in list(pages):
                watcher.send({"type": "conversations", "conversations": listed})


def _news(old: Panel, new: Panel) -> dict[str, Any]:
    """The panel, without its files when they did not change (they are the largest part of it)."""
    return {name: value for name, value in new.items() if name != "files" or value != old.get("files")}
