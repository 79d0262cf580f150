"""The store's one error type: whatever the backend, a failing store leaves it as ``StoreError``, whose message
is one sentence naming the database, what broke and what to do, so every command (``run``, ``history``,
``serve``, ``doctor``) can end with one line instead of a traceback. No backend's own errors pass it."""

from __future__ import annotations

from agents.errors import CodegenError


class StoreError(CodegenError):
    """The store could not read or write. A run that cannot be recorded ends with status error."""


class Silenced(StoreError):
    """A durable job goes on elsewhere (``bot.store.postgres_queue``): nothing more of it is recorded or drawn from
    this process, not even how it ended here."""


class Fenced(Silenced):
    """This process's claim on a run is stale: another replica has claimed it since."""


class HandedBack(Silenced):
    """A durable job's write failed (the database away): the job stops here without a word and goes back to the
    queue once the database answers, to be resumed from what it saved by whichever replica claims it."""
