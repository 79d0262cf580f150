"""Wake-ups for whatever follows a commit's CI: "something changed on this commit, look again".

A webhook delivery (``status``, ``check_run``, ``check_suite``, ``workflow_run``) only nudges; the follower
then reads the commit's statuses and check runs from GitHub's REST API itself, so a payload is never taken
as the result, and polling (a timeout with no nudge) and webhooks end in the same code path.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict


class CiNudges:
    """Per (repository, commit) wake-ups, shared by the webhook endpoint and the CI follower of one process."""

    def __init__(self) -> None:
        self._events: defaultdict[tuple[str, str], asyncio.Event] = defaultdict(asyncio.Event)

    def nudge(self, full_name: str, sha: str) -> None:
        """Something changed on ``sha`` in ``full_name`` (``owner/name``): wake whoever waits on it."""
        self._events[(full_name.lower(), sha)].set()

    async def wait(self, full_name: str, sha: str, within_s: float) -> bool:
        """Wait up to ``within_s`` seconds for a nudge on that commit: True when nudged, False on the timeout
        (then the follower polls). A nudge that came before the wait counts, and is used up by it."""
        key = (full_name.lower(), sha)
        event = self._events[key]
        try:
            await asyncio.wait_for(event.wait(), within_s)
            return True
        except TimeoutError:
            return False
        finally:
            self._events.pop(key, None)
