"""Wake-ups for whatever follows a commit's CI: "something changed on this commit, look again".

A webhook delivery (``status``, ``check_run``, ``check_suite``, ``workflow_run``) only nudges; the follower
then reads the commit's statuses and check runs from GitHub's REST API itself, so a payload is never taken
as the result, and polling (a timeout with no nudge) and webhooks end in the same code path.

Only the commits someone follows are kept (``watching``): a delivery for any other commit (every push to every
branch of the repository sends some) is dropped, so what the endpoint holds is bounded by what is followed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Iterator

Key = tuple[str, str]


class CiNudges:
    """Per (repository, commit) wake-ups, shared by the webhook endpoint and the CI follower of one process."""

    def __init__(self) -> None:
        self._events: dict[Key, asyncio.Event] = {}
        self._watchers: Counter[Key] = Counter()

    @property
    def watched(self) -> int:
        """How many commits are watched (and so kept)."""
        return len(self._events)

    @contextlib.contextmanager
    def watching(self, full_name: str, sha: str) -> Iterator[None]:
        """While the block runs, nudges on that commit are kept for the next ``wait``, even one that comes
        between two waits (while the follower reads the API)."""
        key = (full_name.lower(), sha)
        self._watchers[key] += 1
        self._events.setdefault(key, asyncio.Event())
        try:
            yield
        finally:
            self._watchers[key] -= 1
            if self._watchers[key] <= 0:
                del self._watchers[key]
                self._events.pop(key, None)

    def nudge(self, full_name: str, sha: str) -> None:
        """Something changed on ``sha`` in ``full_name`` (``owner/name``): wake whoever watches it; a commit
        nobody watches is not kept."""
        event = self._events.get((full_name.lower(), sha))
        if event is not None:
            event.set()

    async def wait(self, full_name: str, sha: str, within_s: float) -> bool:
        """Wait up to ``within_s`` seconds for a nudge on that commit: True when nudged, False on the timeout
        (then the follower polls). A nudge that came while the commit was watched, before the wait, counts, and is
        used up by it."""
        with self.watching(full_name, sha):
            event = self._events[(full_name.lower(), sha)]
            try:
                await asyncio.wait_for(event.wait(), within_s)
                return True
            except TimeoutError:
                return False
            finally:
                event.clear()
