"""Following the bot's own pull requests to green: after a run pushes to its pull request, that commit's CI is
followed (``bot.ci.follow``) and drawn as a step of the run's status message; when a check fails, a fix round
(a follow-up run on the same branch, told what failed) pushes again, and CI is followed again. At most
``[ci] max_fix_attempts`` fix rounds; then the bot says so in the thread and in one pull request comment, and
stops.

Loop guards: the bot's own status never counts (``bot.ci.checks``); a fix round that does not pass its own
tests (or is stopped) ends the chain; a later run checking in on the same branch (a person's follow-up) takes
over from the chain following the older commit; a check no change can fix (cancelled, waiting for approval) is
said, not fixed.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from agents.errors import CheckInError
from agents.events import CiChecked, RunFinished
from agents.types import CheckInResult, RunStatus, ThreadContext
from bot.ci.nudges import CiNudges
from bot.config.sections import CiConfig

if TYPE_CHECKING:  # PyGithub: imported when a pull request's CI is first followed
    from bot.ci.checks import Check, Verdict
    from bot.ci.rest import CiRest, OpenPull
    from bot.repos.github import GitHubRepos

log = logging.getLogger(__name__)

CLOSE_WAIT_S = 5.0


class RunView(Protocol):
    """A finished run's thread, as CI following draws in it (``bot.chat.renderer.RunRenderer``)."""

    async def after(self, event: CiChecked) -> None: ...

    async def say(self, markdown: str) -> None: ...


@dataclass(frozen=True)
class Pushed:
    """A run that has ended, and its thread."""

    finished: RunFinished
    view: RunView


# A fix round: its task, the failing output it is shown, the repository ("acme/billing"); None: it could not start
StartFix = Callable[[str, ThreadContext, str], Awaitable["Pushed | None"]]
GitHubFor = Callable[[], Awaitable["GitHubRepos | None"]]


class CiRounds:
    """Every CI chain of one process. ``nudges`` is where the webhook endpoint wakes them."""

    def __init__(self, github: GitHubFor, config: CiConfig, nudges: CiNudges | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._github, self._config, self._clock = github, config, clock
        self.nudges = nudges or CiNudges()
        self._tasks: set[asyncio.Task[None]] = set()
        self._by_branch: dict[tuple[str, str], asyncio.Task[None]] = {}

    def follow(self, run: Awaitable[Pushed], fix: StartFix) -> asyncio.Task[None]:
        """Once ``run`` has ended, follow the CI of what it pushed to a pull request (nothing else is followed)."""
        task = asyncio.create_task(self._chain(run, fix), name="ci-chain")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def settled(self) -> None:
        """Wait until no chain is under way (each has ended: green, given up, or nothing to follow)."""
        while self._tasks:
            await asyncio.wait(list(self._tasks))

    async def close(self) -> None:
        """Stop following (the bot is shutting down): a restarted bot does not pick the chains up again."""
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=CLOSE_WAIT_S)

    async def _chain(self, run: Awaitable[Pushed], fix: StartFix) -> None:
        try:
            pushed: Pushed | None = await run
            attempt = 0
            while pushed is not None and (checkin := _followed(pushed.finished)) is not None:
                self._claim(checkin)
                pushed, attempt = await self._round(pushed, checkin, attempt, fix)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("following a pull request's CI failed")

    async def _round(self, pushed: Pushed, checkin: CheckInResult, attempt: int,
                     fix: StartFix) -> tuple[Pushed | None, int]:
        """Follow one pushed commit's CI; the fix round it leads to (and the attempts so far), or None: done."""
        from bot.ci.failure import failure_context, fix_task
        from bot.ci.follow import CiFollower
        from bot.ci.rest import CiRest

        github = await self._github()
        if github is None:
            return None, attempt
        rest = CiRest(github, self._config.log_max_bytes)
        view, run_id, repo, sha = pushed.view, pushed.finished.run_id, checkin.repository, checkin.head
        try:
            pull = await rest.open_pull(repo, checkin.branch)
        except CheckInError as error:
            await view.after(CiChecked(run_id, "ended", f"not followed: {error}"))
            return None, attempt
        if pull is None:
            return None, attempt
        checks_url = f"{pull.url}/checks"

        async def pending(verdict: Verdict) -> None:
            await view.after(CiChecked(run_id, "pending", verdict.detail(), checks_url))

        outcome = await CiFollower(rest, self.nudges, self._config, self._clock).follow(repo, sha, pull.base, pending)
        verdict = outcome.verdict
        if outcome.reason or verdict is None:
            await view.after(CiChecked(run_id, "ended", outcome.reason, checks_url))
            return None, attempt
        if not verdict.failed:
            await view.after(CiChecked(run_id, "passed", verdict.detail(), checks_url))
            return None, attempt
        await view.after(CiChecked(run_id, "failed", verdict.detail(), verdict.failed[0].url or checks_url))
        fixable = [c for c in verdict.failed if c.fixable]
        if not fixable:
            await view.say(f"⚠️ CI failed in a way no change to the code answers ({_named(verdict.failed)}: "
                           "cancelled, or waiting for someone's approval); the bot leaves it to a person.")
            return None, attempt
        if attempt >= self._config.max_fix_attempts:
            await self._give_up(rest, repo, pull, view, fixable, attempt)
            return None, attempt
        attempt += 1
        context = await failure_context(rest, repo, fixable, self._config.log_chars)
        following = await fix(fix_task(fixable, sha, attempt, self._config.max_fix_attempts), context, repo)
        if following is not None and following.finished.status is not RunStatus.PASSED:
            await following.view.say(f"⚠️ The fix round ended {following.finished.status}, so the bot stops "
                                     "following this pull request's CI; a reply here continues the work.")
            return None, attempt
        return following, attempt

    async def _give_up(self, rest: CiRest, repo: str, pull: OpenPull, view: RunView, failed: list[Check],
                       attempt: int) -> None:
        """Say once, in the thread and on the pull request, that the attempts are spent."""
        rounds = f"{attempt} fix round{'' if attempt == 1 else 's'}" if attempt else "no fix round"
        text = (f"CI still fails after {rounds} ({_named(failed)}); `[ci] max_fix_attempts` is "
                f"{self._config.max_fix_attempts}, so the bot stops here and leaves it to a person.")
        await view.say(f"🛑 {text}")
        try:
            await rest.comment(repo, pull.number,
                               f"{text}\n\n_codegen-chat: the failing checks are on the Checks tab._")
        except CheckInError as error:
            await view.say(f"⚠️ The pull request could not be told: {error}")

    def _claim(self, checkin: CheckInResult) -> None:
        """This chain follows the branch now: one following an older commit of it stops."""
        key = (checkin.repository.lower(), checkin.branch)
        current = asyncio.current_task()
        older = self._by_branch.get(key)
        if older is not None and older is not current and not older.done():
            older.cancel()
        if current is not None:
            self._by_branch[key] = current
            current.add_done_callback(lambda task: self._by_branch.pop(key, None)
                                      if self._by_branch.get(key) is task else None)


def _followed(finished: RunFinished) -> CheckInResult | None:
    """What a run pushed to a pull request of a GitHub repository: its CI is followed."""
    checkin = finished.checkin
    if checkin is None or not checkin.head or not checkin.branch or not checkin.repository:
        return None
    if checkin.repository.startswith("/") or checkin.kind not in ("pull_request", "branch"):
        return None
    return checkin


def _named(checks: list[Check] | tuple[Check, ...]) -> str:
    return ", ".join(f"`{c.name}`" for c in checks)
