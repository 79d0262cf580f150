"""Following the bot's own pull requests to green: after a run pushes to its pull request, that commit's CI is
followed (``bot.ci.follow``) and drawn as a step of the run's status message; when a check fails, a fix round
(a follow-up run on the same branch, told what failed) pushes again, and CI is followed again. At most
``[ci] max_fix_attempts`` fix rounds, while the run and its fix rounds together stay within ``[budget]
max_tokens``; then the bot says so in the thread and in one pull request comment, and stops.

Loop guards: the bot's own status never counts (``bot.ci.checks``); a fix round that does not pass its own
tests (or is stopped) ends the chain; a later run checking in on the same branch (a person's follow-up) takes
over from the chain following the older commit; a check no change can fix (cancelled, waiting for approval) is
said, not fixed. The pull request is read again on each look and just before a fix round: once a person has
closed or merged it, or pushed to its branch, the chain ends, saying why; a fix round updates that pull request
only, never opening another. Chains live in the process: one a restart ends says so in its step (docs/ci.md).
"""

from __future__ import annotations

import asyncio
import contextlib
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
from bot.repos.github_markdown import code, comment

if TYPE_CHECKING:  # PyGithub: imported when a pull request's CI is first followed
    from bot.ci.checks import Check, Verdict
    from bot.ci.rest import CiRest, OpenPull
    from bot.repos.github import GitHubRepos

log = logging.getLogger(__name__)

CLOSE_WAIT_S = 5.0
SUPERSEDED = "followed no more: a newer push to the branch is followed instead"
CLOSING = "followed no more: the bot restarted (a reply in the thread continues the work)"


class RunView(Protocol):
    """A finished run's thread, as CI following draws in it (``bot.chat.renderer.RunRenderer``)."""

    async def after(self, event: CiChecked) -> None: ...

    async def say(self, markdown: str) -> None: ...


@dataclass(frozen=True)
class Pushed:
    """A run that has ended, and its thread."""

    finished: RunFinished
    view: RunView
    link: str = ""  # the thread's own address, when its platform gives one (a pull request comment's, say)


@dataclass(frozen=True)
class Fix:
    """A fix round to start: its task, the failing output it is shown (quoted), and the pull request it works on."""

    task: str
    failing: ThreadContext
    repository: str  # "acme/billing"
    base: str  # the pull request's base branch
    pull: int  # the pull request's number: the fix round updates it, and never opens another


StartFix = Callable[[Fix], Awaitable["Pushed | None"]]  # None: the fix round could not start
GitHubFor = Callable[[], Awaitable["GitHubRepos | None"]]


class CiRounds:
    """Every CI chain of one process."""

    def __init__(self, github: GitHubFor, config: CiConfig, max_tokens: int = 0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.github, self.config, self.clock = github, config, clock
        self.max_tokens = max_tokens  # the run's [budget] max_tokens, for the run and its fix rounds together; 0: none
        self._chains: dict[asyncio.Task[None], _Chain] = {}
        self._by_branch: dict[tuple[str, str], asyncio.Task[None]] = {}
        self._closing = False

    def follow(self, run: Awaitable[Pushed], fix: StartFix, nudges: CiNudges) -> asyncio.Task[None]:
        """Once ``run`` has ended, follow the CI of what it pushed to a pull request (nothing else is followed),
        looking again whenever ``nudges`` (the webhook endpoint's) says that commit changed."""
        chain = _Chain(self, fix, nudges)
        task = asyncio.create_task(self._guarded(chain, run), name="ci-chain")
        self._chains[task] = chain
        task.add_done_callback(lambda done: self._chains.pop(done, None))
        return task

    async def settled(self) -> None:
        """Wait until no chain is under way (each has ended: green, given up, or nothing to follow)."""
        while self._chains:
            await asyncio.wait(list(self._chains))

    async def close(self) -> None:
        """Stop following (the bot is shutting down): a restarted bot does not pick the chains up again."""
        self._closing = True
        for task in list(self._chains):
            task.cancel()
        if self._chains:
            await asyncio.wait(list(self._chains), timeout=CLOSE_WAIT_S)

    def claim(self, checkin: CheckInResult) -> None:
        """The calling chain follows this branch now: one following an older commit of it stops, saying why."""
        key = (checkin.repository.lower(), checkin.branch)
        current = asyncio.current_task()
        older = self._by_branch.get(key)
        if older is not None and older is not current and not older.done():
            chain = self._chains.get(older)
            if chain is not None:
                chain.superseded = True
            older.cancel()
        if current is not None:
            self._by_branch[key] = current
            current.add_done_callback(lambda task: self._by_branch.pop(key, None)
                                      if self._by_branch.get(key) is task else None)

    async def _guarded(self, chain: _Chain, run: Awaitable[Pushed]) -> None:
        try:
            await chain.run(run)
        except asyncio.CancelledError:
            why = SUPERSEDED if chain.superseded else CLOSING if self._closing else ""
            if why:
                with contextlib.suppress(Exception):  # the thread may be gone; the chain ends either way
                    await asyncio.wait_for(chain.ended(why), CLOSE_WAIT_S)
            if not chain.superseded:
                raise
        except Exception:
            log.exception("following a pull request's CI failed")


class _Chain:
    """One pull request followed from a run through its fix rounds."""

    def __init__(self, rounds: CiRounds, fix: StartFix, nudges: CiNudges) -> None:
        self._rounds, self._fix, self._config, self._nudges = rounds, fix, rounds.config, nudges
        self.attempt = 0
        self.tokens = 0  # what the run and its fix rounds have spent
        self.superseded = False
        self._pending: tuple[RunView, str, str] | None = None  # a CI step drawn pending: its view, run, link

    async def run(self, first: Awaitable[Pushed]) -> None:
        pushed: Pushed | None = await first
        while pushed is not None and (checkin := _followed(pushed.finished)) is not None:
            self.tokens += pushed.finished.usage.total_tokens
            self._rounds.claim(checkin)
            pushed = await self._follow(pushed, checkin)

    async def ended(self, why: str) -> None:
        """A pending CI step says why it is followed no more."""
        if self._pending is not None:
            view, run_id, url = self._pending
            await view.after(CiChecked(run_id, "ended", why, url))

    async def _follow(self, pushed: Pushed, checkin: CheckInResult) -> Pushed | None:
        """Follow one pushed commit's CI; the fix round it leads to, or None: the chain is done."""
        from bot.ci.follow import CiFollower
        from bot.ci.rest import CiRest

        github = await self._rounds.github()
        if github is None:
            return None
        rest = CiRest(github, self._config.log_max_bytes)
        repo, sha = checkin.repository, checkin.head
        try:
            pull = await rest.open_pull(repo, checkin.branch)
        except CheckInError as error:
            await self._show(pushed, "ended", f"not followed: {error}")
            return None
        if pull is None:
            return None  # a branch with no pull request (a failing run's): nothing to follow
        url = f"{pull.url}/checks"

        async def pending(verdict: Verdict) -> None:
            await self._show(pushed, "pending", verdict.detail(), url)

        async def left() -> str:
            why = _left(await rest.pull(repo, pull.number), sha)
            return f"followed no more: {why}" if why else ""

        follower = CiFollower(rest, self._nudges, self._config, self._rounds.clock)
        outcome = await follower.follow(repo, sha, pull.base, pending, left)
        verdict = outcome.verdict
        if outcome.reason or verdict is None:
            await self._show(pushed, "ended", outcome.reason, url)
            return None
        if not verdict.failed:
            await self._show(pushed, "passed", verdict.detail(), url)
            return None
        await self._show(pushed, "failed", verdict.detail(), verdict.failed[0].url or url)
        return await self._fix_round(rest, repo, pull, pushed, verdict, sha)

    async def _fix_round(self, rest: CiRest, repo: str, pull: OpenPull, pushed: Pushed, verdict: Verdict,
                         sha: str) -> Pushed | None:
        from bot.ci.failure import failure_context, fix_task

        try:
            pull = await rest.pull(repo, pull.number)
        except CheckInError as error:
            await pushed.view.say(f"⚠️ No fix round: the pull request could not be read again ({error}).")
            return None
        if why := _left(pull, sha):
            await pushed.view.say(f"⏹️ CI failed, but {why}, so no fix round runs and the bot stops following this "
                                  "pull request's CI.")
            return None
        fixable = [c for c in verdict.failed if c.fixable]
        if not fixable:
            await pushed.view.say(f"⚠️ CI failed in a way no change to the code answers ({_named(verdict.failed)}: "
                                  "cancelled, or waiting for someone's approval); the bot leaves it to a person.")
            return None
        budget = self._rounds.max_tokens
        if self.attempt >= self._config.max_fix_attempts or (budget and self.tokens >= budget):
            await self._give_up(rest, repo, pull, pushed, fixable)
            return None
        self.attempt += 1
        context = await failure_context(rest, repo, fixable, self._config.log_chars)
        task = fix_task(fixable, sha, self.attempt, self._config.max_fix_attempts)
        following = await self._fix(Fix(task, context, repo, pull.base, pull.number))
        if following is None:
            return None
        if following.finished.status is not RunStatus.PASSED:
            await following.view.say(f"⚠️ The fix round ended {following.finished.status}, so the bot stops "
                                     "following this pull request's CI; a reply here continues the work.")
            return None
        if _followed(following.finished) is None:
            await following.view.say("⚠️ The fix round pushed no new commit, so CI stays as it was and the bot "
                                     "stops following it; a reply here continues the work.")
            return None
        return following

    async def _give_up(self, rest: CiRest, repo: str, pull: OpenPull, pushed: Pushed, failed: list[Check]) -> None:
        """Say once, in the thread and on the pull request, that the attempts are spent (once in all when the
        thread is the pull request's own conversation)."""
        attempt, budget = self.attempt, self._rounds.max_tokens
        rounds = f"{attempt} fix round{'' if attempt == 1 else 's'}" if attempt else "no fix round"
        if attempt >= self._config.max_fix_attempts:
            why = f"`[ci] max_fix_attempts` is {self._config.max_fix_attempts}"
        else:
            why = f"the run and its fix rounds have spent {self.tokens:,} tokens of `[budget] max_tokens` = {budget:,}"
        text = f"CI still fails after {rounds} ({_named(failed)}); {why}, so the bot stops here and leaves it to a person."
        await pushed.view.say(f"🛑 {text}")
        if pushed.link == pull.url or pushed.link.startswith(f"{pull.url}#"):
            return  # the thread is the pull request: what was said there is its comment
        try:
            await rest.comment(repo, pull.number, comment(f"{text}\n\n_codegen-chat: the failing checks are on the Checks tab._"))
        except CheckInError as error:
            await pushed.view.say(f"⚠️ The pull request could not be told: {error}")

    async def _show(self, pushed: Pushed, state: str, detail: str, url: str = "") -> None:
        run_id = pushed.finished.run_id
        self._pending = (pushed.view, run_id, url) if state == "pending" else None
        await pushed.view.after(CiChecked(run_id, state, detail, url))


def _followed(finished: RunFinished) -> CheckInResult | None:
    """What a run pushed to a branch of a GitHub repository: its pull request's CI is followed."""
    checkin = finished.checkin
    if checkin is None or not checkin.head or not checkin.branch or not checkin.repository:
        return None
    if checkin.repository.startswith("/") or checkin.kind not in ("pull_request", "branch"):
        return None
    return checkin


def _left(pull: OpenPull, sha: str) -> str:
    """Why the pull request is no longer the one whose commit ``sha`` is followed: closed, merged, or its branch
    moved on (a push the chain did not make); empty while it is still open at ``sha``."""
    if pull.state != "open":
        return f"pull request #{pull.number} was {pull.state}"
    if pull.head != sha:
        return f"its branch moved on to {pull.head[:12]}, pushed after {sha[:12]}"
    return ""


def _named(checks: list[Check] | tuple[Check, ...]) -> str:
    return ", ".join(code(c.shown) for c in checks)
