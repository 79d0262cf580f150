"""A repository run taken over from a lost replica keeps its branch: the replica that resumes it continues the branch
the lost one made (and pushed, if it got that far), updates that branch's pull request, and names nothing after the
"(Resumed after a restart...)" line its team is told."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest

from agents.types import RunStatus
from bot.config.sections import CheckinConfig, Config, ReposConfig, RepoSettings
from bot.repos.desk import RepoDesk
from bot.repos.opening import branch_name
from bot.runs.service import ChatRequest, Service, _job_json
from bot.safety.redact import masked_url
from bot.store.postgres import PostgresStore
from bot.store.postgres_queue import Limits
from codegen_chat.build import taking_jobs
from tests.ci.conftest import TOKEN, git_host, github  # noqa: F401  (the fixtures)
from tests.ci.test_fix_rounds import APPROVE, CODE, PLAN, TESTS, passing
from tests.fakes.chat_thread import RecordingThread, platform
from tests.fakes.github_server import OpenedPull
from tests.fakes.team_script import ScriptedModel, ScriptedSandbox
from tests.repos.fixtures import PYTHON_PROJECT, branch_files, git, make_repo

TASK = "add retries to the client in acme/billing"
RUN = "deadbeef"
BRANCH = branch_name(TASK, RUN)


async def lost_replica_left(db_url: str, thread: RecordingThread, pushed: Path | None) -> None:
    """What a replica leaves when it dies mid-run: the job claimed once, its branch recorded as the run opened the
    repository, its status message drawn; ``pushed``: a clone it had pushed the branch from, its pull request open."""
    store = await PostgresStore.open(db_url, masked_url(db_url))
    try:
        conversation = await store.conversation("chat", "T1")
        request = ChatRequest("chat", "T1", "ann", TASK)
        await store.queue.enqueue(RUN, conversation, TASK, "ann", [], "", _job_json(request), "chat:m1")
        await store.queue.publish(RUN, await thread.post(f"⏳ Working on `{RUN}`"))
        (claimed,) = await store.queue.claim(Limits(8, 8), ["chat"], 1)
        await store.set_repository(RUN, "acme/billing", BRANCH)
        if pushed is not None:
            git("push", "-q", "origin", BRANCH, cwd=pushed)
        await store.queue.release([claimed.run_id])  # lost: the next claim takes it over
    finally:
        await store.close()


def pushed_before_dying(bare: Path, tmp_path: Path) -> Path:
    """The lost replica's round, committed: the very files the team writes again once resumed."""
    work = tmp_path / "lost-replica"
    git("clone", "-q", str(bare), str(work), cwd=tmp_path)
    git("checkout", "-qb", BRANCH, cwd=work)
    for reply in (CODE.format(extra="pass"), TESTS):
        path, content = reply.split("path=", 1)[1].split("\n", 1)
        (work / path).write_text(content.rsplit("```", 1)[0])
    git("add", "-A", cwd=work)
    git("commit", "-qm", "Round 1: add retries to the client in acme/billing (2 passed)", cwd=work)
    return work


@pytest.mark.parametrize("pushed", [True, False], ids=["after-its-push", "before-its-push"])
async def test_a_run_taken_over_continues_its_own_branch_and_pull_request(git_host, github, db_url,  # noqa: F811
                                                                         tmp_path: Path, pushed: bool):
    bare = make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing")
    thread = RecordingThread()
    clone = pushed_before_dying(bare, tmp_path) if pushed else None
    if pushed:
        github.opened.append(OpenedPull(1, "acme/billing", BRANCH, "main", TASK, "", True))
    await lost_replica_left(db_url, thread, clone)
    model = ScriptedModel({"planner": [PLAN], "programmer": [CODE.format(extra="pass")], "optimizer": [APPROVE],
                           "tester": [TESTS], "checkin": ["# retries\n"]})
    config = Config(repos=ReposConfig(git_url=git_host.url, allowed={"acme/billing": RepoSettings()}),
                    checkin=CheckinConfig(github_api_url=github.url, write_interval_s=0, backoff_s=0.01, max_retries=1),
                    storage=dataclasses.replace(Config().storage, url=db_url, heartbeat_s=0.3))
    store = await PostgresStore.open(db_url, masked_url(db_url))
    service = Service(config, store, model, ScriptedSandbox(passing), repos=RepoDesk(config, TOKEN))
    try:
        async with taking_jobs(service, store, config):
            async def open_thread(key: str) -> RecordingThread:
                return thread
            await service.online(platform(name="chat"), open_thread)

            async def ended() -> None:
                while (await store.runs(5))[0].status == RunStatus.RUNNING:
                    await asyncio.sleep(0.05)
            await asyncio.wait_for(ended(), 60)
            (run,) = await store.runs(5)
    finally:
        await store.close()
    assert "Resumed after a restart" in model.user_prompt("planner")  # the team is told
    assert run.status == RunStatus.PASSED, run.reason
    assert git("branch", "--list", "codegen-chat/*", cwd=bare).split() == [BRANCH]  # no second branch
    (pull,) = github.opened
    assert (pull.number, pull.head, pull.base, pull.title) == (1, BRANCH, "main", TASK)
    assert f"- {TASK}\n" in pull.body and "Resumed" not in pull.body
    assert run.checkin is not None and run.checkin.location.endswith("/pull/1") and run.branch == BRANCH
    assert "attempts=3" in branch_files(bare, BRANCH)["billing/client.py"]
    if pushed:  # what the lost replica pushed stays under what this one adds: nothing was forced over it
        assert "Round 1" in git("log", "--format=%s", f"main..{BRANCH}", cwd=bare)
