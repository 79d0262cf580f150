"""Pushing the run's branch: never to the base or a protected branch, never with force. A branch that moved
under the bot (someone pushed to it meanwhile) is refused by git itself, and the bot stops and says so."""

from __future__ import annotations

from bot.repos.errors import PushRefused
from bot.repos.git import GitFailed
from bot.repos.opening import BRANCH_PREFIX, OpenedRepo


async def push(repo: OpenedRepo) -> str:
    """Push the workspace's head to its branch; returns the commit pushed."""
    workspace = repo.workspace
    branch = workspace.branch
    if not branch.startswith(BRANCH_PREFIX) or branch == repo.base:
        raise PushRefused(f"The bot pushes only to branches of its own ({BRANCH_PREFIX}...), not to {branch}.")
    if repo.github is not None and await repo.github.protected(repo.target.name.full_name, branch):
        raise PushRefused(f"{branch} is a protected branch; the bot does not push to it.")
    done = await workspace.git.run(["push", "--porcelain", "--no-verify", "origin",
                                    f"{workspace.head}:refs/heads/{branch}"], workspace.checkout.git_dir, check=False)
    if done.code == 0:
        return workspace.head
    said = done.stdout.decode("utf-8", "replace") + done.stderr  # --porcelain tells each ref's fate on stdout
    if "non-fast-forward" in said or "fetch first" in said or "[rejected]" in said:
        raise PushRefused(f"Someone pushed to {branch} while the team worked; the bot does not force-push over "
                          "commits it did not make, so nothing was pushed.")
    reason = str(GitFailed("push", done.code, said)).removeprefix("git push failed: ")
    raise PushRefused(f"The push to {branch} was refused: {reason}")
