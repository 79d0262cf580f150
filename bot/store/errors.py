"""The store's one error type: whatever the backend, a failing store leaves it as ``StoreError``, whose message
is one sentence naming the database, what broke and what to do, so every command (``run``, ``history``,
``serve``, ``doctor``) can end with one line instead of a traceback. No backend's own errors pass it."""

from __future__ import annotations

from agents.errors import CodegenError


class StoreError(CodegenError):
    """The store could not read or write. A run that cannot be recorded ends with status error."""


class Fenced(StoreError):
    """This process's claim on a run is stale: another replica has claimed it since (``bot.store.postgres_queue``).
    Nothing more of the run is recorded or drawn from here."""
