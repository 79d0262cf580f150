"""What a chat platform may read back of its stored conversations, to show them again: a person's list of
conversations, a conversation's runs, one run's record and its events in order. Read only (``bot.store.sqlite.Store``
is one); adapters get it from the service and never write through it."""

from __future__ import annotations

from typing import Protocol

from agents.events import Event
from bot.store.sqlite import ConversationSummary, RunRecord, RunSummary


class History(Protocol):
    async def conversations(self, platform: str, user_id: str, limit: int = 50) -> list[ConversationSummary]: ...

    async def conversation_runs(self, platform: str, thread_key: str) -> list[RunSummary]: ...

    async def run(self, run_id: str) -> RunRecord | None: ...

    async def timeline(self, run_id: str) -> list[Event]: ...
