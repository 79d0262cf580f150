"""Pushing the run's branch: never to the base or a protected branch, never with force. A branch that moved
under the bot (someone pushed to it meanwhile) is refused by git itself, and the bot stops and says so; so is a
base branch rewritten under it (force-pushed), whose removed commits the run's branch would bring back."""

from __future__ import annotations

from bot.repos.errors import PushRefused
from bot.repos.git import GitFailed
from bot.repos.opening import BRANCH_PREFIX, OpenedRepo

BASE_NOW = "refs/codegen-chat/base"  # the base branch as the remote has it now, fetched to compare


async def push(repo: OpenedRepo) -> str:
    """Push the workspace's head to its branch; returns the commit pushed."""
    workspace = repo.workspace
    branch = workspace.branch
    if not branch.startswith(BRANCH_PREFIX) or branch == repo.base:
        raise PushRefused(f"The bot pushes only to branches of its own ({BRANCH_PREFIX}...), not to {branch}.")
    if repo.github is not None and await repo.github.protected(repo.target.name.full_name, branch):
        raise PushRefused(f"{branch} is a protected branch; the bot does not push to it.")
    await _refuse_a_rewritten_base(repo)
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


async def _refuse_a_rewritten_base(repo: OpenedRepo) -> None:
    """A run that started from the base branch pushes only while the commit it started from is still in that
    branch. Someone who force-pushed the base meanwhile took commits out of it (a leaked secret, a bad merge): the
    run's branch still holds them, and its pull request would bring them back. A base that only moved on (new
    commits on top) is fine: its new commits and trees are fetched (no file contents) to tell the two apart."""
    workspace, base = repo.workspace, repo.base
    checkout = workspace.checkout
    if checkout.branch != base:
        return  # a follow-up's: it continues the bot's branch, which started from the base before
    git_dir = checkout.git_dir
    try:
        listed = await workspace.git.run(["ls-remote", "--heads", "origin", f"refs/heads/{base}"], git_dir)
        now = listed.stdout.decode("utf-8", "replace").split("\t", 1)[0].strip()
        if now == checkout.head:
            return
        if not now:
            raise PushRefused(f"The base branch {base} is no longer in the repository, so nothing was pushed.")
        await workspace.git.run(["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--recurse-submodules=no",
                                 "--filter=blob:none", "origin", f"+refs/heads/{base}:{BASE_NOW}"], git_dir,
                                watch=git_dir, max_bytes=workspace.limits.max_bytes)
    except GitFailed as error:
        raise PushRefused(f"The base branch {base} could not be read again before the push: {error}") from None
    kept = await workspace.git.run(["merge-base", "--is-ancestor", checkout.head, BASE_NOW], git_dir, check=False)
    if kept.code > 1:  # 1: not in it; more: git could not tell
        raise PushRefused(f"The base branch {base} could not be compared with the commit the work started from: "
                          f"{GitFailed('merge-base', kept.code, kept.stderr)}")
    if kept.code == 1:
        raise PushRefused(f"The base branch {base} was rewritten (force-pushed) while the team worked: the commit "
                          f"the work started from, {checkout.head[:12]}, is no longer in it, and pushing the work "
                          "would bring back what was taken out. Nothing was pushed; ask again to start from the "
                          "branch as it is now.")
