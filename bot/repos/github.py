"""The GitHub REST calls the repository work makes, and the only module that talks to GitHub for it.

A narrow interface on purpose: a repository's facts, whether a branch is protected, opening or updating the pull
request of a branch, and a commit status on what it pushed; ``call`` lends the client to ``bot.ci.rest`` (a
commit's checks and statuses, read). PyGithub
runs in worker threads, one call at a time per token (GitHub's advice), retried as ``bot.checkin.retry`` judges
(Retry-After honoured). Authentication is a personal or fine-grained token, or a GitHub App installation token (PyGithub's
``Auth.AppInstallationAuth``); ``[checkin] github_api_url`` points it at GitHub Enterprise.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from github import Auth, Github, GithubIntegration
from github.GithubException import GithubException, UnknownObjectException
from github.PullRequest import PullRequest as GithubPullRequest
from github.Repository import Repository

from bot.checkin.gist import USER_AGENT
from bot.checkin.retry import RetryPolicy, Sleep, call_github
from bot.config.sections import CheckinConfig
from bot.repos.errors import RepoError
from bot.repos.inline_review import Request, body_only, diff_lines, place, review_body
from bot.safety.redact import Redactor

T = TypeVar("T")
log = logging.getLogger(__name__)
STATUS_NEEDS = "the token needs Commit statuses read and write on the repository (fine-grained)"
TOKEN_NEEDS = ("the token needs Contents and Pull requests read and write on the repository (fine-grained), the repo "
               "scope (classic), or a GitHub App installation with those permissions")


@dataclass(frozen=True)
class RepoFacts:
    full_name: str
    default_branch: str
    size_kb: int
    can_push: bool


@dataclass(frozen=True)
class PullRequest:
    number: int
    url: str
    created: bool  # False: the branch's open pull request, updated


@dataclass(frozen=True)
class GitHubApp:
    """A GitHub App's credentials: each run works with a fresh installation token (valid for an hour)."""

    app_id: str
    private_key: str
    installation_id: int

    async def installation_token(self, config: CheckinConfig, *, sleep: Sleep = asyncio.sleep) -> str:
        def mint() -> str:
            integration = GithubIntegration(
                auth=Auth.AppAuth(self.app_id, self.private_key), base_url=config.github_api_url.rstrip("/"),
                timeout=max(1, int(config.timeout_s)), retry=None, seconds_between_requests=None,
                seconds_between_writes=None, user_agent=USER_AGENT)
            return integration.get_access_token(self.installation_id).token
        policy = dataclasses.replace(RetryPolicy.from_config(config), subject="an installation token",
                                     hint="the App needs to be installed with the id in GITHUB_APP_INSTALLATION_ID")
        return await call_github(mint, policy, Redactor([self.private_key]), sleep)


class GitHubRepos:
    def __init__(self, config: CheckinConfig, auth: Auth.Auth, secret: str, *, sleep: Sleep = asyncio.sleep) -> None:
        self._client = Github(auth=auth, base_url=config.github_api_url.rstrip("/"),
                              timeout=max(1, int(config.timeout_s)), retry=None, seconds_between_requests=None,
                              seconds_between_writes=config.write_interval_s or None, user_agent=USER_AGENT)
        self._policy = dataclasses.replace(RetryPolicy.from_config(config), subject="the pull request",
                                           hint=TOKEN_NEEDS)
        self._redact = Redactor([secret] if secret else [])
        self._sleep = sleep
        self._lock = threading.Lock()

    @classmethod
    def with_token(cls, config: CheckinConfig, token: str, **kw: Sleep) -> GitHubRepos:
        return cls(config, Auth.Token(token), token, **kw)

    async def facts(self, full_name: str) -> RepoFacts:
        def get() -> RepoFacts:
            try:
                repo = self._client.get_repo(full_name)
            except UnknownObjectException:
                raise RepoError(f"GitHub knows no repository {full_name} that the bot's token can see.") from None
            permissions = repo.permissions
            return RepoFacts(repo.full_name, repo.default_branch, repo.size,
                             bool(permissions and (permissions.push or permissions.admin)))
        return await self._call(get)

    async def protected(self, full_name: str, branch: str) -> bool:
        def get() -> bool:
            try:
                return bool(self._client.get_repo(full_name).get_branch(branch).protected)
            except UnknownObjectException:
                return False  # no such branch yet: the bot's new branch
        return await self._call(get)

    async def open_or_update_pull(self, full_name: str, head: str, base: str, title: str, body: str,
                                  draft: bool, labels: Sequence[str]) -> PullRequest:
        """The branch's open pull request with this body, or a new one; labels added either way."""
        def work() -> PullRequest:
            repo = self._client.get_repo(full_name)
            existing = _open_pulls(repo, full_name, head, base)
            if existing:
                pull = existing[0]
                pull.edit(body=body)
                created = False
            else:
                try:
                    pull = repo.create_pull(base=base, head=head, title=title, body=body, draft=draft)
                except GithubException as error:
                    if error.status == 422 and "already exists" in str(error.data):
                        raise RepoError(f"A pull request for {head} is already open, and GitHub would not "
                                        "show it to the bot's token.") from None
                    raise
                created = True
            if labels:
                pull.add_to_labels(*labels)
            return PullRequest(pull.number, pull.html_url, created)
        return await self._call(work)

    async def update_open_pull(self, full_name: str, head: str, base: str, body: str) -> PullRequest | None:
        """The branch's open pull request given this body, or None when the branch has none (none is opened)."""
        def work() -> PullRequest | None:
            existing = _open_pulls(self._client.get_repo(full_name), full_name, head, base)
            if not existing:
                return None
            existing[0].edit(body=body)
            return PullRequest(existing[0].number, existing[0].html_url, False)
        return await self._call(work)

    async def update_pull(self, full_name: str, number: int, head: str, body: str) -> PullRequest | None:
        """Pull request ``number`` given this body while it is open from the branch ``head``; None when it is not
        (closed, merged): no pull request is opened instead."""
        def work() -> PullRequest | None:
            pull = self._client.get_repo(full_name).get_pull(number)
            if pull.state != "open" or pull.merged or pull.head.ref != head:
                return None
            pull.edit(body=body)
            return PullRequest(pull.number, pull.html_url, False)
        return await self._call(work)

    async def set_status(self, full_name: str, sha: str, state: str, description: str, context: str,
                         target_url: str = "") -> None:
        """A commit status on ``sha`` (``POST /repos/{o}/{r}/statuses/{sha}``); GitHub keeps 140 characters of
        its description."""
        def post() -> None:
            body = {"state": state, "description": description[:140], "context": context}
            if target_url:
                body["target_url"] = target_url
            self._client.requester.requestJsonAndCheck("POST", f"/repos/{full_name}/statuses/{sha}", input=body)
        policy = dataclasses.replace(self._policy, subject=f"the commit status {context}", hint=STATUS_NEEDS)
        await self._call(post, policy)

    async def post_review(self, full_name: str, number: int, sha: str, asked: Sequence[Request]) -> int:
        """One review (event COMMENT) on commit ``sha`` of pull request ``number``: each request on its line when
        the pull request's diff holds it, the rest in the body. A review GitHub refuses with 422 (the diff moved
        under it) is posted again with every request in the body. How many comments went on lines."""
        def work() -> int:
            repo = self._client.get_repo(full_name)
            pull, commit = repo.get_pull(number), repo.get_commit(sha)
            in_diff = {f.filename: diff_lines(f.patch or "") for f in pull.get_files()}
            placed = place(asked, in_diff)
            try:
                pull.create_review(commit=commit, body=review_body(placed, sha), event="COMMENT",
                                   comments=list(placed.comments))  # type: ignore[arg-type]
                return len(placed.comments)
            except GithubException as error:
                if error.status != 422 or not placed.comments:
                    raise
                log.warning("GitHub refused the inline review of %s#%d (%s); posted with every request in its body",
                            full_name, number, self._redact(str(error.data))[:300])
            pull.create_review(commit=commit, body=body_only(asked, sha), event="COMMENT")
            return 0
        policy = dataclasses.replace(self._policy, subject="the inline review",
                                     hint="the token needs Pull requests read and write on the repository")
        return await self._call(work, policy)

    async def call(self, work: Callable[[Github], T], subject: str, hint: str = TOKEN_NEEDS) -> T:
        """Another module's REST calls on this client (``bot.ci.rest``: a commit's checks, its status), run the
        same way: in a worker thread, one at a time, retried; errors name ``subject``."""
        policy = dataclasses.replace(self._policy, subject=subject, hint=hint)
        return await self._call(lambda: work(self._client), policy)

    async def _call(self, call: Callable[[], T], policy: RetryPolicy | None = None) -> T:
        def alone() -> T:
            with self._lock:
                return call()
        return await call_github(alone, policy or self._policy, self._redact, self._sleep)


def _open_pulls(repo: Repository, full_name: str, head: str, base: str) -> list[GithubPullRequest]:
    """The open pull requests from the branch ``head`` of the repository itself into ``base``."""
    owner = full_name.split("/", 1)[0]
    return list(repo.get_pulls(state="open", head=f"{owner}:{head}", base=base))
