"""Opening a run's repository: facts from GitHub (access, default branch, size) before anything is fetched,
then the branch fetched into the run's own folder, its test command found, the run's branch named."""

from __future__ import annotations

import asyncio
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from agents.repository import named_files
from agents.types import RepoTests
from bot.config.sections import ReposConfig
from bot.repos.checkout import Limits, default_branch, fetch, has_branch
from bot.repos.errors import RepoError, TooLarge
from bot.repos.git import Git, GitAccess
from bot.repos.names import RepoTarget
from bot.repos.test_command import PYTEST, detect
from bot.repos.workspace import RepoWorkspace

if TYPE_CHECKING:
    from bot.repos.github import GitHubRepos  # PyGithub: imported at the first repository run only

BRANCH_PREFIX = "codegen-chat/"
SLUG_WORDS = 5


@dataclass
class OpenedRepo:
    """A run's repository: the workspace, how to reach it again (push) and where its PR goes."""

    workspace: RepoWorkspace
    target: RepoTarget
    access: GitAccess
    base: str  # the branch the pull request goes into
    folder: Path
    github: GitHubRepos | None
    said: str = ""  # what the thread is told about where the work starts, when it is not where it was asked to

    async def close(self) -> None:
        """Stop any fetch still going and remove the run's folder (the clone and its files)."""
        await self.workspace.close()
        await asyncio.to_thread(shutil.rmtree, self.folder, True)


def branch_name(task: str, run_id: str) -> str:
    """``codegen-chat/<a few words of the task>-<run id>``."""
    words = re.findall(r"[a-z0-9]+", task.lower())[:SLUG_WORDS]
    return f"{BRANCH_PREFIX}{'-'.join(words)[:40].strip('-') or 'work'}-{run_id}"


async def open_repo(target: RepoTarget, config: ReposConfig, token: str, github: GitHubRepos | None,
                    run_id: str, task: str, continue_branch: str = "", co_author: str = "",
                    mask: Callable[[str], str] = str, own_branch: str = "",
                    restart_when_gone: bool = True) -> OpenedRepo:
    """The repository's tree fetched, the files the first prompts show fetched, the rest on its way;
    ``RepoError`` with a sentence when it cannot be. ``continue_branch``: a follow-up's, fetched instead of the base
    (when it is gone, the base on a branch of the run's own, unless ``restart_when_gone`` is false: a fix round
    updates its pull request's branch or nothing).
    ``own_branch``: the branch a resumed run worked on before it was interrupted, kept: continued when the remote has
    it (what it pushed then is its own work), else made again from the base."""
    local = bool(target.name.path)
    url = f"file://{quote(target.name.path)}" if local else f"{config.git_url.rstrip('/')}/{target.name.full_name}.git"
    access = GitAccess(url, "" if local else token, local=local)
    base = target.base
    if github is not None and not local:
        facts = await github.facts(target.name.full_name)
        if facts.size_kb * 1024 > config.max_bytes:
            raise TooLarge(f"{facts.full_name} holds about {facts.size_kb * 1024:,} bytes; this bot works on at most "
                           f"{config.max_bytes:,} ([repos] max_bytes).")
        if not facts.can_push:
            raise RepoError(f"The bot's token may read {facts.full_name} but not push to it (a fine-grained token "
                            "needs Contents and Pull requests write access).")
        base = base or facts.default_branch
    folder = Path(tempfile.mkdtemp(prefix=f"codegen-repo-{run_id}-"))
    try:
        home = folder / "home"
        home.mkdir()
        git = Git(access, home, config.clone_timeout_s)
        limits = Limits(config.max_files, config.max_bytes, config.max_file_bytes)
        pushed_before, said = False, ""
        if own_branch and own_branch != continue_branch:
            pushed_before = await has_branch(git, url, own_branch, folder)
            continue_branch = own_branch if pushed_before else ""
        elif continue_branch and restart_when_gone and not await has_branch(git, url, continue_branch, folder):
            # Gone: GitHub deletes a merged pull request's branch where the repository asks it to.
            said = f"The branch {continue_branch} is no longer in the repository, so this run starts from the base."
            continue_branch = ""
        if continue_branch and not base:
            base = await default_branch(git, url, folder)  # the pull request's base, not the branch fetched
        checkout = await fetch(git, url, continue_branch or base, folder / "work", limits)
        base = base or checkout.branch
        tests = detect(checkout.paths, target.settings.test_command) or RepoTests("python", PYTEST, "pytest", "pytest")
        branch = continue_branch or own_branch or branch_name(task, run_id)
        name = f"{target.name.shown}@{base}"
        workspace = RepoWorkspace(name, git, checkout, tests, config.map_chars, limits, branch, co_author, mask)
        if pushed_before:  # its head is the run's own commit: with nothing new, the branch is still checked in
            workspace.commits.append(checkout.head)
        await workspace.prepare(named_files(task, checkout.paths))
        return OpenedRepo(workspace, target, access, base, folder, github, said)
    except BaseException:
        await asyncio.to_thread(shutil.rmtree, folder, True)
        raise
