"""How many runs one pull request may start in a UTC day (``[github] runs_per_pr_per_day``): a guard against a
loop of comments, and against one pull request taking the whole bot. Each run takes a numbered slot of the day
through the store's first sighting, so the count holds across restarts and across replicas sharing a store."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

FirstSighting = Callable[[str], Awaitable[bool]]


def today() -> str:
    return time.strftime("%Y-%m-%d", time.gmtime())


async def take_slot(first_sighting: FirstSighting, conversation: str, per_day: int, owner: str,
                    again: bool = False, day: str = "") -> bool:
    """Take one of the day's ``per_day`` slots for ``conversation`` on behalf of ``owner`` (a comment); False when all
    are taken. A slot is marked with its owner, so the same comment taken ``again`` (a replica stopped while taking
    it, another takes it over) finds the slot it took rather than spending another."""
    day = day or today()
    for slot in range(per_day):
        key = f"github:runs:{conversation}:{day}:{slot}"
        if await first_sighting(key):
            await first_sighting(f"{key}:{owner}")
            return True
        if again and not await first_sighting(f"{key}:{owner}"):  # taken, by this comment before
            return True
    return False
