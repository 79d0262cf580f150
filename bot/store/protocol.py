"""What the bot asks of a store, whatever keeps it: SQLite on one machine (``bot.store.sqlite``), a database
server when several replicas share the work (``bot.store.postgres``). Every method is async, and every failure leaves it as
``bot.store.errors.StoreError``.

    History  what a chat platform may read back to show its conversations again (read only)
    Store    everything: conversations, runs, their events as they happen, redeliveries, health probes
"""

from __future__ import annotations

from typing import Protocol

from agents.events import Event
from agents.types import PriorWork, ThreadContext
from bot.store.records import ConversationSummary, Interrupted, RunRecord, RunSummary


class History(Protocol):
    async def conversations(self, platform: str, user_id: str, limit: int = 50) -> list[ConversationSummary]: ...

    async def conversation_runs(self, platform: str, thread_key: str) -> list[RunSummary]: ...

    async def run(self, run_id: str) -> RunRecord | None: ...

    async def timeline(self, run_id: str) -> list[Event]: ...


class Store(History, Protocol):
    location: str  # where it lives, as a person would name it in a message (a file, a URL without its password)

    async def close(self) -> None: ...

    # conversations and runs
    async def conversation(self, platform: str, thread_key: str) -> int:
        """The id of the conversation living in ``platform``/``thread_key``, created if new."""
        ...

    async def has_conversation(self, platform: str, thread_key: str) -> bool: ...

    async def conversation_of(self, run_id: str) -> tuple[str, str] | None: ...

    async def create_run(self, run_id: str, conversation_id: int, task: str, user_id: str,
                         attachments: list[str], thread: ThreadContext | None = None) -> None: ...

    async def prior_work(self, conversation_id: int, before_run: str) -> PriorWork | None: ...

    async def record(self, event: Event) -> None:
        """One event of a run (a sink of the runner), recorded whole or not at all."""
        ...

    async def runs(self, limit: int = 20) -> list[RunSummary]: ...

    # runs a stopped or crashed process left
    async def mark_interrupted(self) -> int: ...

    async def set_status_message(self, run_id: str, message_id: str) -> None: ...

    async def set_repository(self, run_id: str, repository: str, branch: str) -> None:
        """The repository and branch a run works on, kept from its start (a follow-up continues there)."""
        ...

    async def untold_interrupted(self, platform: str) -> list[Interrupted]: ...

    async def told_interrupted(self, run_id: str) -> None: ...

    # check-in and redeliveries
    async def gist_for(self, conversation_key: str) -> str | None: ...

    async def remember(self, conversation_key: str, gist_id: str) -> None: ...

    async def first_sighting(self, key: str) -> bool:
        """True the first time ``key`` is seen (a platform event id), False for every redelivery."""
        ...

    # health
    async def check(self) -> None:
        """Every record readable and a write to be had, else ``StoreError`` (for ``doctor``)."""
        ...

    async def check_writable(self, timeout_s: float) -> None:
        """``StoreError`` unless the store takes a write now (for ``/readyz``)."""
        ...
