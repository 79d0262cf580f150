"""Messages to every replica: what the web chat's live updates travel by when replicas share a PostgreSQL
(``bot.store.postgres_listen.PostgresFanout``: ``NOTIFY``/``LISTEN``). One process (SQLite) has none: its pages
are all its own."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol


class Fanout(Protocol):
    def publish(self, channel: str, payload: str) -> None:
        """Send ``payload`` (at most ``MAX_PAYLOAD`` bytes) to every subscriber of ``channel``, in publishing order."""
        ...

    def subscribe(self, channel: str, heard: Callable[[str], None]) -> None: ...


MAX_PAYLOAD = 7_900  # bytes: PostgreSQL refuses a NOTIFY payload of 8000 or more
