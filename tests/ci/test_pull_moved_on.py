"""A pull request that moves on while the bot follows its CI: a person closes or merges it, or pushes to its
branch. The chain ends, says why once, and no fix round runs; a fix round under way updates its own pull request
only, never opening another (the loopback GitHub reads each pull request's head from the git host)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path

import pytest

from agents.types import Message, Usage
from tests.ci.test_fix_rounds import APPROVE, CODE, FIX_PLAN, PLAN, TESTS, ask, lint_ci, start_bot, status_messages, until
from tests.fakes.github_ci import Job
from tests.fakes.team_script import ScriptedModel
from tests.repos.fixtures import PYTHON_PROJECT, git, make_repo


def lint_until_finished(bare: Path):
    """A lint job that stays in progress on a commit whose client prints (until the test finishes it), and passes
    at once on any other."""
    def decide(sha: str) -> list[Job]:
        failing = "print(" in git("show", f"{sha}:billing/client.py", cwd=bare)
        return [Job("lint", "success", log="ok", pending_reads=None if failing else 0)]
    return decide


def script() -> dict[str, list[str]]:
    """The run (its client prints: lint fails) and one fix round (which drops the print)."""
    return {"planner": [PLAN, FIX_PLAN], "programmer": [CODE.format(extra="print('retry')"), CODE.format(extra="pass")],
            "optimizer": [APPROVE] * 2, "tester": [TESTS] * 2, "checkin": ["# retries\n"] * 2}


def team() -> ScriptedModel:
    return ScriptedModel(script())


async def bot_on_lint(git_host, github, tmp_path: Path, **following: float):
    """The repository (its bare copy), with the lint job above, and the bot following CI with ``following``'s
    timing."""
    bare = make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing")
    github.ci.on_commit("acme/billing", lint_until_finished(bare))
    return bare, await start_bot(git_host, github, tmp_path, team(), **following)


def pull_posts(github) -> int:
    return sum(r.method == "POST" and r.path.endswith("/pulls") for r in github.requests)


@pytest.mark.parametrize("merged", [False, True])
async def test_a_pull_request_a_person_closes_while_its_ci_runs_gets_no_fix_round_when_the_ci_fails(
        git_host, github, tmp_path, merged):
    bare, bot = await bot_on_lint(git_host, github, tmp_path, poll_first_s=600)  # a look only when nudged
    try:
        await ask(bot, "add retries to the client in acme/billing", settle=False)
        await until(lambda: any("⏳ CI" in t for t in status_messages(bot.thread)))
        (pull,) = github.opened
        pull.state, pull.merged = "closed", merged
        sha = git("rev-parse", pull.head, cwd=bare).strip()
        github.ci.finish("acme/billing", sha, "lint", "failure")
        bot.service.nudges.nudge("acme/billing", sha)
        await asyncio.wait_for(bot.ci.settled(), 30)
        runs = await bot.store.runs(5)
    finally:
        await bot.store.close()
    assert len(runs) == 1 and len(github.opened) == 1 and pull_posts(github) == 1
    (status,) = status_messages(bot.thread)
    assert "❌ CI — failed: lint" in status
    said = [t for t in bot.thread.texts() if t.startswith("⏹️ CI failed, but")]
    assert said == [f"⏹️ CI failed, but pull request #1 was {'merged' if merged else 'closed'}, so no fix round "
                    "runs and the bot stops following this pull request's CI."]
    assert github.ci.comments == []


async def test_a_pull_request_closed_while_its_ci_runs_is_followed_no_more_at_the_next_look(
        git_host, github, tmp_path):
    _, bot = await bot_on_lint(git_host, github, tmp_path, max_wait_s=3600, poll_first_s=0.05)  # CI never ends by itself
    try:
        await ask(bot, "add retries to the client in acme/billing", settle=False)
        await until(lambda: any("⏳ CI" in t for t in status_messages(bot.thread)))
        github.opened[0].state = "closed"
        await asyncio.wait_for(bot.ci.settled(), 10)  # long before max_wait_s
        runs = await bot.store.runs(5)
    finally:
        await bot.store.close()
    assert len(runs) == 1 and len(github.opened) == 1
    (status,) = status_messages(bot.thread)
    assert "⏹️ CI — followed no more: pull request #1 was closed" in status


def person_pushes(bare: Path, branch: str, work: Path) -> str:
    """A person fixes the bot's branch themselves (drops the print), pushing with git; the new head."""
    git("clone", "-q", "-b", branch, str(bare), str(work), cwd=work.parent)
    client = work / "billing/client.py"
    client.write_text(client.read_text().replace("print('retry')", "pass"))
    git("-c", "user.name=Ann", "-c", "user.email=ann@example.com", "commit", "-qam", "drop the print", cwd=work)
    git("push", "-q", "origin", branch, cwd=work)
    return git("rev-parse", branch, cwd=bare).strip()


async def test_a_person_s_push_to_the_branch_ends_the_chain_of_the_older_commit_without_a_fix_round(
        git_host, github, tmp_path):
    bare, bot = await bot_on_lint(git_host, github, tmp_path, poll_first_s=600)  # a look only when nudged
    try:
        await ask(bot, "add retries to the client in acme/billing", settle=False)
        await until(lambda: any("⏳ CI" in t for t in status_messages(bot.thread)))
        (pull,) = github.opened
        old = git("rev-parse", pull.head, cwd=bare).strip()
        new = person_pushes(bare, pull.head, tmp_path / "ann")
        github.ci.finish("acme/billing", old, "lint", "failure")  # the older commit's CI ends red
        bot.service.nudges.nudge("acme/billing", old)
        await asyncio.wait_for(bot.ci.settled(), 30)
        runs = await bot.store.runs(5)
    finally:
        await bot.store.close()
    assert len(runs) == 1 and git("rev-parse", pull.head, cwd=bare).strip() == new  # nothing pushed over it
    said = [t for t in bot.thread.texts() if t.startswith("⏹️ CI failed, but")]
    assert said == [f"⏹️ CI failed, but its branch moved on to {new[:12]}, pushed after {old[:12]}, so no fix "
                    "round runs and the bot stops following this pull request's CI."]


async def test_a_person_s_push_while_ci_runs_ends_the_following_at_the_next_look(git_host, github, tmp_path):
    bare, bot = await bot_on_lint(git_host, github, tmp_path, max_wait_s=3600, poll_first_s=0.05)
    try:
        await ask(bot, "add retries to the client in acme/billing", settle=False)
        await until(lambda: any("⏳ CI" in t for t in status_messages(bot.thread)))
        (pull,) = github.opened
        old = git("rev-parse", pull.head, cwd=bare).strip()
        new = person_pushes(bare, pull.head, tmp_path / "ann")
        await asyncio.wait_for(bot.ci.settled(), 10)
        runs = await bot.store.runs(5)
    finally:
        await bot.store.close()
    assert len(runs) == 1
    (status,) = status_messages(bot.thread)
    assert f"⏹️ CI — followed no more: its branch moved on to {new[:12]}, pushed after {old[:12]}" in status


class ClosingModel(ScriptedModel):
    """The team's model; while the fix round's Programmer writes, a person closes the pull request."""

    def __init__(self, close: Callable[[], None]) -> None:
        super().__init__(script())
        self._close = close

    async def stream(self, role: str, messages: Sequence[Message],
                     temperature: float | None = None) -> AsyncIterator[str | Usage]:
        if role == "programmer" and self._count("programmer") == 1:
            self._close()
        async for part in super().stream(role, messages, temperature):
            yield part


async def test_a_fix_round_whose_pull_request_is_closed_meanwhile_opens_no_other(git_host, github, tmp_path):
    bare = make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing")
    github.ci.on_commit("acme/billing", lint_ci(bare))

    def close() -> None:
        github.opened[0].state = "closed"
    bot = await start_bot(git_host, github, tmp_path, ClosingModel(close))
    try:
        await ask(bot, "add retries to the client in acme/billing")
        runs = await bot.store.runs(5)
    finally:
        await bot.store.close()
    assert len(runs) == 2 and len(github.opened) == 1 and pull_posts(github) == 1
    (pull,) = github.opened
    assert "print(" not in git("show", f"{pull.head}:billing/client.py", cwd=bare)  # the fix is on the branch
    assert any("pull request #1 is no longer open, so none was updated or opened" in t for t in bot.thread.texts())
