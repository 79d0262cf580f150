"""Which Gist belongs to which conversation, so a follow-up publishes a new revision of the same Gist.

The store implements ``GistIndex`` for real; ``MemoryGistIndex`` serves tests and runs without a store.
"""

from __future__ import annotations

from typing import Protocol


class GistIndex(Protocol):
    async def gist_for(self, conversation_key: str) -> str | None:
        """The id of the Gist this conversation published last, or ``None``."""
        ...

    async def remember(self, conversation_key: str, gist_id: str) -> None:
        """Record (or replace) the conversation's Gist."""
        ...


class MemoryGistIndex:
    """A ``GistIndex`` in a dict: forgotten when the process ends."""

    def __init__(self) -> None:
        self._gists: dict[str, str] = {}

    async def gist_for(self, conversation_key: str) -> str | None:
        return self._gists.get(conversation_key)

    async def remember(self, conversation_key: str, gist_id: str) -> None:
        self._gists[conversation_key] = gist_id
