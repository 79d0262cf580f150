"""``RepoDesk``: what the run service asks of the repository work, in three calls: which repository a request
is for (``target``: a sentence when it may not be used, before any model call), opening it for a run, and the
publisher that checks the run in there (a pull request, with the run's usual check-in as the fallback)."""

from __future__ import annotations

import asyncio
import importlib
from typing import TYPE_CHECKING

from agents.protocols import Publisher
from bot.checkin.fallback import FallbackPublisher
from bot.config.sections import Config
from bot.repos.names import RepoName, RepoTarget, from_argument, named_in, resolve
from bot.repos.opening import OpenedRepo, open_repo

if TYPE_CHECKING:
    from bot.repos.github import GitHubRepos


class RepoDesk:
    def __init__(self, config: Config, token: str, github: GitHubRepos | None = None) -> None:
        self._config, self._token = config, token
        self._github = github  # a bot.repos.github.GitHubRepos; made at first use when there is a token

    def target(self, text: str, argument: str, base: str, place: str, user: str,
               previous: str = "") -> RepoTarget | None:
        """The repository the request is for: ``argument`` (``--repo``), else one its text names, else the
        conversation's (``previous``), else the place's default. ``UserInputError`` when it is not allowed."""
        repos = self._config.repos
        named: RepoName | None = from_argument(argument, base) if argument else named_in(text, repos)
        if named is None and previous:
            named = RepoName(path=previous) if previous.startswith("/") else RepoName(full_name=previous)
        return resolve(named, repos, place, user, terminal=place == "terminal")

    async def open(self, target: RepoTarget, run_id: str, task: str, continue_branch: str = "",
                   user: str = "") -> OpenedRepo:
        github = await self._client() if not target.name.path else None
        co_author = target.settings.co_authors.get(user, "")
        return await open_repo(target, self._config.repos, self._token, github, run_id, task, continue_branch,
                               co_author)

    def publisher(self, repo: OpenedRepo, fallback: Publisher, link: str = "") -> Publisher:
        from bot.checkin.pull_request import PullRequestPublisher

        return FallbackPublisher(PullRequestPublisher(repo, self._config.repos, link), fallback)

    async def _client(self) -> GitHubRepos | None:
        """PyGithub is imported (in a worker thread) at the first repository run, not at the bot's start."""
        if self._github is None and self._token:
            module = await asyncio.to_thread(importlib.import_module, "bot.repos.github")
            self._github = module.GitHubRepos.with_token(self._config.checkin, self._token)
        return self._github
