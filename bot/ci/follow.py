"""Following one commit's CI until it ends: the REST API read again whenever a webhook nudges
(``bot.ci.nudges``), else after a pause that doubles from ``[ci] poll_first_s`` to ``poll_max_s``, within
``max_wait_s`` in all. A commit with no check or status after ``no_checks_s`` has no CI to follow.

Each look reads the commit's statuses and check runs itself: a webhook's payload is never taken as the result,
so a forged or stale delivery can at most cause one more read.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from agents.errors import CheckInError
from bot.ci.checks import CheckState, Verdict, judge
from bot.ci.nudges import CiNudges
from bot.ci.rest import CiRest
from bot.config.sections import CiConfig

log = logging.getLogger(__name__)

MAX_READ_FAILURES = 3  # looks in a row GitHub refuses (after its retries) before the follower gives up
Changed = Callable[[Verdict], Awaitable[None]]
Left = Callable[[], Awaitable[str]]  # why the commit is no longer worth following (its pull request moved on), or ""


@dataclass(frozen=True)
class Outcome:
    verdict: Verdict | None  # None: nothing to judge (no CI on the commit, or GitHub could not be read)
    reason: str = ""  # why it was followed no further: "no check or status appeared ...", "CI was still running ..."

    @property
    def state(self) -> CheckState | None:
        return self.verdict.state if self.verdict is not None and not self.reason else None


class CiFollower:
    def __init__(self, rest: CiRest, nudges: CiNudges, config: CiConfig,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._rest, self._nudges, self._config, self._clock = rest, nudges, config, clock

    async def follow(self, full_name: str, sha: str, base: str, changed: Changed, left: Left | None = None) -> Outcome:
        """Look until the commit's CI ends (or the time bounds say stop); ``changed`` hears each new pending picture;
        ``left``, asked at each look while CI runs, ends the following early with its reason."""
        with self._nudges.watching(full_name, sha):  # a nudge between two looks is kept for the next wait
            return await self._follow(full_name, sha, base, changed, left)

    async def _follow(self, full_name: str, sha: str, base: str, changed: Changed, left: Left | None) -> Outcome:
        config = self._config
        required = await self._required(full_name, base)
        started, pause, failures = self._clock(), config.poll_first_s, 0
        shown: Verdict | None = None
        while True:
            verdict: Verdict | None
            try:
                verdict = judge(await self._rest.checks(full_name, sha), required)
                failures = 0
            except CheckInError as error:
                failures += 1
                if failures >= MAX_READ_FAILURES:
                    return Outcome(shown, f"GitHub could not be read: {error}")
                verdict = shown
            if verdict is not None and verdict.state is not CheckState.PENDING:
                return Outcome(verdict)
            if left is not None and (why := await _asked(left)):
                return Outcome(shown, why)
            if verdict is not None and verdict != shown:
                shown = verdict
                await changed(verdict)
            spent = self._clock() - started
            if (shown is None or not shown.seen) and spent >= config.no_checks_s:  # a required one may never come
                awaited = f" (required: {', '.join(shown.missing)})" if shown and shown.missing else ""
                return Outcome(shown, f"no check or status appeared on the commit in {_minutes(spent)}{awaited}")
            if spent >= config.max_wait_s:
                return Outcome(shown, f"CI was still running after {_minutes(spent)}")
            nudged = await self._nudges.wait(full_name, sha, min(pause, config.max_wait_s - spent))
            if not nudged:
                pause = min(pause * 2, config.poll_max_s)

    async def _required(self, full_name: str, base: str) -> frozenset[str] | None:
        try:
            return await self._rest.required(full_name, base)
        except CheckInError as error:
            log.warning("the required checks of %s@%s could not be read (every check counts): %s", full_name, base,
                        error)
            return None


async def _asked(left: Left) -> str:
    try:
        return await left()
    except CheckInError as error:  # the next look asks again
        log.warning("the pull request could not be read again: %s", error)
        return ""


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"
