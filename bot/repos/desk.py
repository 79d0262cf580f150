"""``RepoDesk``: what the run service asks of the repository work, in three calls: which repository a request
is for (``target``: a sentence when it may not be used, before any model call), opening it for a run, and the
publisher that checks the run in there (a pull request, with the run's usual check-in as the fallback)."""

from __future__ import annotations

import asyncio
import importlib
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from agents.errors import UserInputError
from agents.protocols import Publisher
from bot.checkin.fallback import FallbackPublisher
from bot.config.sections import Config, ConfigError, ReposConfig, Secrets
from bot.repos import people
from bot.repos.git import Git, GitAccess, GitFailed
from bot.repos.names import RepoName, RepoTarget, from_argument, named_in, resolve
from bot.repos.opening import OpenedRepo, open_repo
from bot.repos.pull_request import PullRequestPublisher

if TYPE_CHECKING:
    from bot.repos.github import GitHubApp, GitHubRepos


async def check_folder(name: RepoName, config: ReposConfig) -> None:
    """A local folder (``--repo PATH``) is the top of a git work tree and has the base branch, else a
    ``UserInputError`` before the run starts. Asked as the run's fetch asks, through ``git upload-pack`` in a
    home of its own: nothing of the folder's own config runs."""
    access = GitAccess(f"file://{quote(name.path)}", local=True)
    wanted = ["HEAD", f"refs/heads/{name.base}"] if name.base else ["HEAD"]
    with tempfile.TemporaryDirectory(prefix="codegen-repo-check-") as home:
        git = Git(access, Path(home), config.clone_timeout_s)
        try:
            done = await git.run(["ls-remote", "--symref", "--", access.url, *wanted], Path(home))
        except GitFailed as error:
            raise UserInputError(f"--repo {name.path}: {_folder_problem(error)}") from None
    refs = {line.partition("\t")[2] for line in done.stdout.decode("utf-8", "replace").splitlines()}
    if name.base and f"refs/heads/{name.base}" not in refs:
        raise UserInputError(f"--repo {name.path} has no branch {name.base!r} to start from (--base).")


def _folder_problem(error: GitFailed) -> str:
    said = error.stderr.lower()
    if "does not appear to be a git repository" in said or "not a git repository" in said:
        return ("the folder is not the top of a git repository; --repo takes the folder holding .git (or the top "
                "of a worktree).")
    if "dubious ownership" in said:
        return ("the folder belongs to another user, and git refuses to read it (its safe.directory rule); run the "
                "bot as the folder's owner.")
    return f"the folder could not be read as a git repository: {str(error).partition(': ')[2] or error}"


@dataclass(frozen=True)
class AppCredentials:
    app_id: str
    private_key: str
    installation_id: int

    @classmethod
    def from_secrets(cls, secrets: Secrets) -> AppCredentials | None:
        """The GitHub App's credentials when all three are set (``GITHUB_APP_*``); ``ConfigError`` when only some."""
        given = (secrets.github_app_id, secrets.github_app_private_key, secrets.github_app_installation_id)
        if not any(given):
            return None
        if not all(given) or not secrets.github_app_installation_id.isdigit():
            raise ConfigError("GITHUB_APP_ID, GITHUB_APP_PRIVATE_KEY and GITHUB_APP_INSTALLATION_ID (a number) go "
                              "together: set all three for a GitHub App, or none")
        return cls(secrets.github_app_id, secrets.github_app_private_key, int(secrets.github_app_installation_id))


class RepoDesk:
    def __init__(self, config: Config, token: str, github: GitHubRepos | None = None,
                 app: AppCredentials | None = None) -> None:
        self._config, self._token = config, token
        self._github = github  # made at first use when there is a token
        self._app = app  # a GitHub App's: each run mints its own installation token (then used instead)

    def target(self, text: str, argument: str, base: str, places: Sequence[str], user: str,
               previous: str = "", platform: str = "terminal") -> RepoTarget | None:
        """The repository the request is for: ``argument`` (``--repo``), else one its text names, else the
        conversation's (``previous``), else the place's default. ``UserInputError`` when it is not allowed."""
        repos = self._config.repos
        named: RepoName | None = from_argument(argument, base, repos.git_url) if argument else named_in(text, repos)
        if named is None and previous:
            named = RepoName(path=previous) if previous.startswith("/") else RepoName(full_name=previous)
        return resolve(named, repos, places, user, terminal="terminal" in places, platform=platform)

    async def open(self, target: RepoTarget, run_id: str, task: str, continue_branch: str = "",
                   user: str = "", mask: Callable[[str], str] = str, platform: str = "terminal",
                   own_branch: str = "", restart_when_gone: bool = True) -> OpenedRepo:
        token, github = self._token, None
        if not target.name.path:
            token, github = await self._credentials()
        co_author = people.co_author(target.settings.co_authors, platform, user)
        return await open_repo(target, self._config.repos, token, github, run_id, task, continue_branch, co_author,
                               mask, own_branch, restart_when_gone)

    async def _credentials(self) -> tuple[str, GitHubRepos | None]:
        """The token git and GitHub get for one run: a GitHub App's fresh installation token, else the token."""
        if self._app is None:
            return self._token, await self._client()
        module = await asyncio.to_thread(importlib.import_module, "bot.repos.github")
        app: GitHubApp = module.GitHubApp(self._app.app_id, self._app.private_key, self._app.installation_id)
        token = await app.installation_token(self._config.checkin)
        return token, module.GitHubRepos.with_token(self._config.checkin, token)

    async def github(self) -> GitHubRepos | None:
        """A GitHub client for the work that follows a run (its pull request's CI): the token's, or one with a
        fresh installation token of the GitHub App; None when neither is set."""
        if not self._token and self._app is None:
            return None
        _, github = await self._credentials()
        return github

    def publisher(self, repo: OpenedRepo, fallback: Publisher, link: str = "", pull: int = 0) -> Publisher:
        """``pull``: the one pull request the run may update (a fix round's); none is opened."""
        return FallbackPublisher(PullRequestPublisher(repo, self._config.repos, link, pull=pull,
                                                      inline_review=self._config.github.inline_review), fallback)

    async def _client(self) -> GitHubRepos | None:
        """PyGithub is imported (in a worker thread) at the first repository run, not at the bot's start."""
        if self._github is None and self._token:
            module = await asyncio.to_thread(importlib.import_module, "bot.repos.github")
            self._github = module.GitHubRepos.with_token(self._config.checkin, self._token)
        return self._github
