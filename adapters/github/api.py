"""The GitHub REST calls the pull-request adapter makes, through PyGithub in worker threads (retried as
``bot.checkin.retry`` judges, Retry-After honoured):

    GET  /repos/{o}/{r}/pulls/{n}                               what the pull request is (branch, fork, labels)
    GET  /repos/{o}/{r}/collaborators/{user}/permission         whether the author may write to the repository
    GET  /repos/{o}/{r}/pulls/{n}/comments                      review comments, grouped into threads
    POST|PATCH /repos/{o}/{r}/issues/{n}/comments, issues/comments/{id}              conversation comments
    POST /repos/{o}/{r}/pulls/{n}/comments/{id}/replies, PATCH pulls/comments/{id}  replies in a review thread
    POST .../issues/comments/{id}/reactions, .../pulls/comments/{id}/reactions      "seen" on a request

Repository objects are made lazily (no request until one is needed); PyGithub's own retries are off.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from github import Auth, Github
from github.GithubException import UnknownObjectException

from adapters.github.events import MARKER
from bot.checkin.gist import USER_AGENT
from bot.checkin.retry import RetryPolicy, call_github
from bot.config.sections import CheckinConfig
from bot.safety.redact import Redactor

T = TypeVar("T")
WRITE_PERMISSIONS = frozenset({"admin", "maintain", "write"})
NEEDS = ("the token needs Pull requests and Issues read and write, and Metadata read, on the repository "
         "(a GitHub App: the same permissions)")


@dataclass(frozen=True)
class PullFacts:
    """A pull request as the API says it is."""

    number: int
    head_ref: str  # its branch
    head_repository: str  # owner/name of the branch's repository; "" when the fork is gone
    base_ref: str
    labels: frozenset[str]
    state: str

    def from_fork(self, repository: str) -> bool:
        return self.head_repository.lower() != repository.lower()


@dataclass(frozen=True)
class Said:
    """A comment as the bot reads it back: who wrote it (a bot account or not) and what."""

    login: str
    body: str
    by_bot: bool
    id: int = 0  # a review comment's: a review thread's replies are numbered in the order they were written


@dataclass(frozen=True)
class ReviewThread:
    """A review comment and its replies, oldest first."""

    root_id: int
    path: str
    line: int | None
    comments: tuple[Said, ...]

    @property
    def people(self) -> tuple[Said, ...]:
        """What people wrote in it: not the bot (its replies carry the marker), nor other bots (a reviewing app),
        whose words are read nowhere."""
        return tuple(said for said in self.comments if not said.by_bot and MARKER not in said.body)

    @property
    def waiting(self) -> bool:
        """A person has written in it since the bot last answered: that is waiting for the team."""
        for said in reversed(self.comments):
            if MARKER in said.body:
                return False
            if not said.by_bot:
                return True
        return False


@dataclass(frozen=True)
class Posted:
    id: int
    url: str


class PullRequestApi:
    def __init__(self, config: CheckinConfig, auth: Auth.Auth, secret: str = "") -> None:
        self._client = Github(auth=auth, base_url=config.github_api_url.rstrip("/"),
                              timeout=max(1, int(config.timeout_s)), retry=None, seconds_between_requests=None,
                              seconds_between_writes=config.write_interval_s or None, user_agent=USER_AGENT,
                              per_page=100, lazy=True)  # no request until an object's data is needed
        self._policy = dataclasses.replace(RetryPolicy.from_config(config), subject="the pull request's comments",
                                           hint=NEEDS)
        self._redact = Redactor([secret] if secret else [])

    async def pull(self, repository: str, number: int) -> PullFacts:
        def get() -> PullFacts:
            pull = self._repo(repository).get_pull(number)
            head = pull.head.repo
            return PullFacts(pull.number, pull.head.ref, head.full_name if head is not None else "", pull.base.ref,
                             frozenset(label.name for label in pull.labels), pull.state)
        return await self._call(get)

    async def may_write(self, repository: str, login: str) -> bool:
        """Whether ``login`` has write access (write, maintain or admin) to the repository, as GitHub says."""
        def get() -> bool:
            try:
                return self._repo(repository).get_collaborator_permission(login) in WRITE_PERMISSIONS
            except UnknownObjectException:
                return False  # not a collaborator at all
        return await self._call(get)

    async def review_threads(self, repository: str, number: int) -> list[ReviewThread]:
        def get() -> list[ReviewThread]:
            threads: dict[int, list[Any]] = {}
            for comment in self._repo(repository).get_pull(number).get_review_comments():
                # Read from the listing itself: the attribute is absent on a thread's first comment, and
                # PyGithub would fetch each such comment again to look for it.
                root = comment._rawData.get("in_reply_to_id") or comment.id
                threads.setdefault(root, []).append(comment)
            return [ReviewThread(root, found[0].path, found[0]._rawData.get("line"),
                                 tuple(_said(c.user, c.body, c.id) for c in found))
                    for root, found in threads.items()]
        return await self._call(get)

    async def conversation(self, repository: str, number: int, limit: int, before: int = 0,
                           written_by: float = 0.0) -> tuple[list[Said], bool]:
        """The pull request's description and its conversation comments older than comment ``before`` (a
        conversation comment's id) or, for a review, written by ``written_by`` (Unix time: GitHub numbers reviews
        apart from comments, so a review's id says nothing of which comments came first); the newest ``limit`` of
        them, oldest first; and whether older ones were left out."""
        def earlier(comment: Any) -> bool:
            if before:
                return bool(comment.id < before)
            return not written_by or comment.created_at.timestamp() <= written_by

        def get() -> tuple[list[Said], bool]:
            pull = self._repo(repository).get_pull(number)
            said = [_said(pull.user, pull.body)] if pull.body else []
            comments = [_said(c.user, c.body) for c in pull.get_issue_comments() if earlier(c)]
            kept = comments[-limit:] if limit else []
            return said + kept, len(kept) < len(comments)
        return await self._call(get)

    async def comment(self, repository: str, number: int, body: str) -> Posted:
        def post() -> Posted:
            made = self._repo(repository).get_issue(number).create_comment(body)
            return Posted(made.id, made.html_url)
        return await self._call(post)

    async def edit_comment(self, repository: str, comment_id: int, body: str) -> bool:
        """False when the comment is gone (someone deleted it)."""
        def patch() -> bool:
            # Any issue number will do: a comment's URL hangs off the repository's issues, not off its issue.
            return _edited(lambda: self._repo(repository).get_issue(0).get_comment(comment_id).edit(body))
        return await self._call(patch)

    async def reply(self, repository: str, number: int, root_id: int, body: str) -> Posted:
        """A reply in the review thread that starts with comment ``root_id``."""
        def post() -> Posted:
            made = self._repo(repository).get_pull(number).create_review_comment_reply(root_id, body)
            return Posted(made.id, made.html_url)
        return await self._call(post)

    async def edit_reply(self, repository: str, comment_id: int, body: str) -> bool:
        """False when the reply is gone (someone deleted it)."""
        def patch() -> bool:
            # As above: a review comment's URL hangs off the repository's pulls.
            return _edited(lambda: self._repo(repository).get_pull(0).get_review_comment(comment_id).edit(body))
        return await self._call(patch)

    async def react(self, repository: str, number: int, comment_id: int, review_comment: bool, content: str) -> None:
        def post() -> None:
            pull = self._repo(repository).get_pull(number)
            target = pull.get_review_comment(comment_id) if review_comment else \
                self._repo(repository).get_issue(number).get_comment(comment_id)
            target.create_reaction(content)
        await self._call(post)

    def _repo(self, repository: str) -> Any:
        return self._client.get_repo(repository)

    async def _call(self, call: Callable[[], T]) -> T:
        return await call_github(call, self._policy, self._redact, asyncio.sleep)


def _edited(edit: Callable[[], object]) -> bool:
    """Whether the edit landed; False when GitHub no longer has the comment (404)."""
    try:
        edit()
    except UnknownObjectException:
        return False
    return True


def _said(user: Any, body: str | None, comment_id: int = 0) -> Said:
    return Said(user.login if user else "", body or "", bool(user) and user.type == "Bot", comment_id)
