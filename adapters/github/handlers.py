"""A comment on a pull request in, a run on its branch out. In order, each check cheaper than the next:

    the bot's own words, a bot account, no mention of the bot    ignored (never a loop)
    the author has no write access (asked of the API, a "no"      ignored, logged
    remembered for a while: ``adapters.github.outsiders``)
    the pull request is closed or carries the opt-out label       ignored, logged
    the pull request comes from a fork                            said once on the pull request, then ignored
    "@BOT stop"                                                   the run under way (or waiting) there stopped, on
                                                                  whichever replica runs it (its starter's); else said
    "address the review" with no review thread waiting            said, no run
    the day's runs for this pull request are spent                said once a day, then ignored
    then ``Service.take``: the pull request is the conversation, so a second request waits for the first.

The run works on the pull request's branch when the bot opened it (a follow-up on its own branch), else on a
branch of its own from the pull request's head, proposed back to it: the bot never pushes to a branch it did
not make. The reply goes where the request was made: the conversation, or the review thread. "Address the
review" gathers the review threads the bot has not answered into the request and answers each when the run ends.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import time
from functools import partial

from adapters.github.api import PullFacts, PullRequestApi, ReviewThread
from adapters.github.budget import take_slot, today
from adapters.github.events import MARKER, REVIEW, REVIEW_COMMENT, Comment, request_in
from adapters.github.outsiders import Outsiders
from adapters.github.platform import PLATFORM, platform, repository_argument
from adapters.github.thread import GitHubThread
from agents.errors import CodegenError, UserInputError
from agents.events import RunFinished
from agents.types import ThreadContext
from bot.chat.access import Place
from bot.chat.thread import ChatPlatform
from bot.chat.words import where_text
from bot.config.sections import Config
from bot.repos.opening import BRANCH_PREFIX
from bot.runs.service import Arrival, ChatRequest, Prepared, Service
from bot.runs.thread_context import Earlier, EarlierMessage, thread_context

log = logging.getLogger(__name__)

ADDRESS_REVIEW = re.compile(r"\baddress\b.{0,20}\b(?:review|comments|feedback)\b", re.IGNORECASE)
STOP = re.compile(r"^\s*stop\W*$", re.IGNORECASE)
MAX_COMMENT_AGE_S = 12 * 3600.0  # well inside the day the store remembers a delivery for
NO_REVIEWS = "No review thread on this pull request is waiting for an answer, so there is nothing to address."
FORK = ("This pull request comes from a fork. The bot works only on branches of this repository (its token "
        "cannot push to a fork, and a fork's code is not run with this repository's access), so it does not "
        "take requests here.")


class GitHubBot:
    def __init__(self, service: Service, config: Config, api: PullRequestApi) -> None:
        self._service, self._config, self._api = service, config, api
        self._settings = config.github
        self._platform = platform(config.github)
        self._outsiders = Outsiders()

    @property
    def platform(self) -> ChatPlatform:
        return self._platform

    def thread(self, conversation: str, review_thread: int = 0) -> GitHubThread:
        repository, _, number = conversation.rpartition("#")
        return GitHubThread(self._api, repository, int(number), review_thread, self._settings.bot_login)

    def asks(self, comment: Comment) -> str | None:
        """What a comment asks of the bot; None for one that asks nothing of it (most comments), or the bot's own."""
        login = self._settings.bot_login
        task = request_in(comment.body, login)
        if task is None or comment.by_bot or comment.login.lower() in (login.lower(), f"{login.lower()}[bot]"):
            return None
        return task

    async def on_comment(self, comment: Comment, replayed: bool = False) -> None:
        """Take a comment (called by the webhook endpoint, which has answered GitHub already); ``replayed``: one a
        replica kept and did not finish taking, taken again here."""
        task = self.asks(comment)
        if task is None:
            return
        age = time.time() - comment.written_at
        if comment.written_at and age > MAX_COMMENT_AGE_S:
            # GitHub delivers within seconds; an old comment is a delivery sent again, maybe by someone who kept it,
            # after the store forgot it was seen (a day): it starts or stops nothing.
            log.info("github: %s was written %.0f h ago; not taken", comment.key, age / 3600)
            return
        try:
            await self._take(comment, task, replayed)
        except CodegenError as error:  # GitHub refused a call: the log says which, nobody else is waiting
            log.warning("github: %s: %s", comment.key, error)
        except Exception:
            log.exception("github: taking %s failed", comment.key)

    async def _take(self, comment: Comment, task: str, replayed: bool = False) -> None:
        pull = await self._open_to(comment)
        if pull is None:
            return
        thread = self.thread(comment.conversation, comment.thread_root if comment.event == REVIEW_COMMENT else 0)
        if STOP.match(task):
            await self._stop(comment, thread)
            return
        await self._react(comment)
        reviews: list[ReviewThread] = []
        repository, number = comment.repository, comment.number
        arrival = Arrival(key=comment.key, thread_key=comment.conversation, place=Place(comment.login, repository),
                          text=task, addressed=True)

        async def prepare() -> Prepared | None:
            request = self._request(comment, task, pull)
            if ADDRESS_REVIEW.search(task):
                reviews.extend(t for t in await self._api.review_threads(repository, number) if t.waiting)
                if not reviews:
                    await self._say_once(comment, thread, NO_REVIEWS)
                    return None
                request = dataclasses.replace(request, thread=_review_context(reviews, task, self._config))
            if not await take_slot(self._service.first_sighting, comment.conversation,
                                   self._settings.runs_per_pr_per_day, comment.key, replayed):
                await self._say_budget_spent(comment, thread)
                return None
            return Prepared(request, thread, earlier=None if reviews else partial(self._earlier, comment))

        try:
            taken = await self._service.take(arrival, self._platform, prepare, replayed)
        except UserInputError as error:
            await self._say_once(comment, thread, f"⚠️ {error}")
            return
        if taken.refusal:
            await self._say_once(comment, thread, taken.refusal)
        if taken.run is not None and reviews:
            await self._answer(comment, reviews, await taken.run.wait())

    async def _open_to(self, comment: Comment) -> PullFacts | None:
        """The pull request, when the bot may take this comment on it: the author with write access, open, not
        opted out, not from a fork (said once); else None. Whoever lacks write access costs one lookup a while."""
        repository = comment.repository
        if not await self._may_write(comment):
            log.info("github: %s has no write access to %s; %s ignored", comment.login, repository, comment.key)
            return None
        pull = await self._api.pull(repository, comment.number)
        if pull.state != "open" or self._settings.opt_out_label in pull.labels:
            log.info("github: %s is %s; %s ignored", comment.conversation,
                     pull.state if pull.state != "open" else f"labelled {self._settings.opt_out_label!r}", comment.key)
            return None
        if pull.from_fork(repository):
            if await self._service.first_sighting(f"github:fork:{comment.conversation}"):
                await self.thread(comment.conversation).post(self._platform.markup.text(FORK))
            return None
        return pull

    async def _may_write(self, comment: Comment) -> bool:
        """Whether the author has write access, as the API says; a "no" is remembered a while (from the lookup,
        not from their latest comment), so asking again and again costs the bot nothing."""
        if self._outsiders.known(comment.repository, comment.login):
            return False
        if await self._api.may_write(comment.repository, comment.login):
            return True
        self._outsiders.add(comment.repository, comment.login)
        return False

    async def _earlier(self, comment: Comment) -> Earlier:
        """What was said before the request: the pull request's description and conversation, or for a review
        comment its review thread. The bot's own comments and other bots' are marked, and left out there."""
        limit = self._config.input.thread_messages
        if comment.event == REVIEW_COMMENT:
            threads = await self._api.review_threads(comment.repository, comment.number)
            found = next((t for t in threads if t.root_id == comment.thread_root), None)
            before = [s for s in (found.comments if found else ()) if s.id < comment.comment_id]
            said, more = before[-limit:], len(before) > limit
        elif comment.event == REVIEW:
            said, more = await self._api.conversation(comment.repository, comment.number, limit,
                                                      written_by=comment.written_at)
        else:
            said, more = await self._api.conversation(comment.repository, comment.number, limit, comment.comment_id)
        return Earlier(tuple(EarlierMessage(s.login, s.body, by_bot=s.by_bot or MARKER in s.body) for s in said),
                       more_before=more)

    def _request(self, comment: Comment, task: str, pull: PullFacts) -> ChatRequest:
        """A run on the pull request's branch when it is the bot's own, else from it on a branch of the bot's."""
        own = pull.head_ref.startswith(BRANCH_PREFIX)
        return ChatRequest(PLATFORM, comment.conversation, comment.login, task,
                           repo=repository_argument(comment.repository, self._config.repos.git_url),
                           base=pull.base_ref if own else pull.head_ref,
                           branch=pull.head_ref if own else "", link=comment.link,
                           places=(f"{PLATFORM}:{comment.repository}", PLATFORM))

    async def _answer(self, comment: Comment, reviews: list[ReviewThread], finished: RunFinished) -> None:
        """One reply in each review thread the run took up: how it ended and where the change is."""
        where = where_text(finished.checkin) if finished.checkin else "nothing was checked in"
        text = self._platform.markup.text(f"Taken up in run `{finished.run_id}` ({finished.status.value}): {where}.")
        for review in reviews:
            try:
                await self._api.reply(comment.repository, comment.number, review.root_id, f"{text}\n\n{MARKER}")
            except CodegenError as error:
                log.warning("github: could not answer review thread %d: %s", review.root_id, error)

    async def _stop(self, comment: Comment, thread: GitHubThread) -> None:
        # A comment stops once, whether a run was under way then or not: the same comment delivered again (a
        # replayed delivery under a new id) must not stop the runs that came after it.
        if not await self._service.first_sighting(f"github:stop:{comment.key}"):
            log.info("github: %s asked for a stop already; not taken again", comment.key)
            return
        why_not = await self._service.stop_in(comment.conversation, Place(comment.login, comment.repository),
                                              self._platform)
        if why_not:
            await thread.post(self._platform.markup.text(why_not))

    async def _say_once(self, comment: Comment, thread: GitHubThread, text: str) -> None:
        """Why a comment starts no run, said once: the same comment taken again (by another replica, after this one
        stopped while taking it) says nothing more."""
        if await self._service.first_sighting(f"github:said:{comment.key}"):
            await thread.post(self._platform.markup.text(text))

    async def _say_budget_spent(self, comment: Comment, thread: GitHubThread) -> None:
        per_day = self._settings.runs_per_pr_per_day
        if await self._service.first_sighting(f"github:budget-said:{comment.conversation}:{today()}"):
            await thread.post(self._platform.markup.text(
                f"This pull request has had its {per_day} runs for today ([github] runs_per_pr_per_day); "
                "ask again tomorrow (UTC)."))
        log.info("github: %s is out of runs for today; %s ignored", comment.conversation, comment.key)

    async def _react(self, comment: Comment) -> None:
        """👀 on the request, so the person sees at once that it was taken (a review has no reactions)."""
        if comment.event == "pull_request_review":
            return
        try:
            await self._api.react(comment.repository, comment.number, comment.comment_id,
                                  comment.event == REVIEW_COMMENT, "eyes")
        except CodegenError as error:
            log.info("github: no reaction on %s: %s", comment.key, error)

    async def shutdown(self, grace_s: float) -> None:
        await self._service.stop_all(PLATFORM, grace_s)


def _review_context(reviews: list[ReviewThread], task: str, config: Config) -> ThreadContext:
    """The review threads as the messages before the request: quoted material for the team, never orders."""
    earlier = [EarlierMessage(said.login, f"On `{review.path}`{f' line {review.line}' if review.line else ''}:\n{said.body}")
               for review in reviews for said in review.people]
    return thread_context(earlier, task, config.input)
