"""The people found to lack write access to a repository, remembered for a while. On a public repository anyone
may comment, and each comment that mentions the bot would otherwise cost a permission lookup against the bot's
GitHub rate limit: one person commenting again and again (or a few accounts) could spend it, and the bot's real
work (check-ins, CI) would stall. Remembered per process; access granted meanwhile counts once the time is up."""

from __future__ import annotations

import time
from collections.abc import Callable

REMEMBER_S = 600.0  # how long a "no write access" answer is taken as still true


class Outsiders:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._until: dict[tuple[str, str], float] = {}  # (repository, login), lower case -> when to ask again

    def known(self, repository: str, login: str) -> bool:
        """Whether ``login`` was found without write access to ``repository`` within the last ``REMEMBER_S``."""
        return self._until.get(_key(repository, login), 0.0) > self._clock()

    def add(self, repository: str, login: str) -> None:
        now = self._clock()
        self._until = {key: until for key, until in self._until.items() if until > now}  # the stale ones go
        self._until[_key(repository, login)] = now + REMEMBER_S


def _key(repository: str, login: str) -> tuple[str, str]:
    return repository.lower(), login.lower()  # GitHub's names are case-insensitive
