"""A pull request's CI followed when its run was a durable job (PostgreSQL): the replica whose worker claimed and
ran the job follows the CI of what it pushed, and a red check gets its fix round there, as in one process."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

from agents.types import RunStatus
from bot.chat.access import Place
from bot.ci.rounds import CiRounds
from bot.config.sections import CheckinConfig, CiConfig, Config, ReposConfig, RepoSettings
from bot.repos.desk import RepoDesk
from bot.runs.service import Arrival, Prepared, Service
from bot.safety.redact import masked_url
from bot.store.postgres import PostgresStore
from codegen_chat.build import taking_jobs
from tests.ci.conftest import TOKEN, git_host, github  # noqa: F401  (the fixtures)
from tests.ci.test_fix_rounds import APPROVE, CODE, FIX_PLAN, PLAN, TESTS, lint_ci, passing, status_messages
from tests.fakes.chat_thread import RecordingThread, platform
from tests.fakes.team_script import ScriptedModel, ScriptedSandbox
from tests.repos.fixtures import PYTHON_PROJECT, branch_files, git, make_repo


async def test_a_durable_jobs_failing_check_is_fixed_and_green_after_the_push(git_host, github, db_url,  # noqa: F811
                                                                               tmp_path: Path):
    bare = make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing")
    github.ci.on_commit("acme/billing", lint_ci(bare))
    model = ScriptedModel({"planner": [PLAN, FIX_PLAN], "programmer": [CODE.format(extra="print('retry')"),
                                                                      CODE.format(extra="pass")],
                           "optimizer": [APPROVE] * 2, "tester": [TESTS] * 2, "checkin": ["# retries\n"] * 2})
    config = Config(
        repos=ReposConfig(git_url=git_host.url, allowed={"acme/billing": RepoSettings()}),
        checkin=CheckinConfig(github_api_url=github.url, write_interval_s=0, backoff_s=0.01, max_retries=1),
        storage=dataclasses.replace(Config().storage, url=db_url, heartbeat_s=0.3),
        ci=CiConfig(poll_first_s=0.01, poll_max_s=0.05),
    )
    store = await PostgresStore.open(db_url, masked_url(db_url))
    desk = RepoDesk(config, TOKEN)
    rounds = CiRounds(desk.github, config.ci, max_tokens=config.budget.max_tokens)
    service = Service(config, store, model, ScriptedSandbox(passing), repos=desk, ci=rounds)
    thread, chat = RecordingThread(), platform(name="chat")
    try:
        async with taking_jobs(service, store, config):
            async def open_thread(key: str) -> RecordingThread:
                return thread
            await service.online(chat, open_thread)
            message = Arrival("m1", "", Place("ann", "C1"), "add retries to the client in acme/billing", addressed=True)

            async def prepare() -> Prepared:
                return Prepared(message.request("chat", "T1"), thread)

            taken = await service.take(message, chat, prepare)
            assert not taken.refusal
            async def two_runs_ended() -> None:
                while not (len(runs := await store.runs(5)) == 2 and all(r.status is not RunStatus.RUNNING for r in runs)):
                    await asyncio.sleep(0.05)
            await asyncio.wait_for(two_runs_ended(), 60)
            await asyncio.wait_for(rounds.settled(), 60)
            runs = await store.runs(5)
    finally:
        await store.close()
    assert [r.status for r in runs] == [RunStatus.PASSED, RunStatus.PASSED]
    (pull,) = github.opened
    assert len(git("log", "--format=%H", f"main..{pull.head}", cwd=bare).split()) == 2  # the job's, then the fix's
    assert "print(" not in branch_files(bare, pull.head)["billing/client.py"]
    first_status, fix_status = status_messages(thread)[:2]
    assert "❌ CI — failed: lint" in first_status and "✅ CI — 2 checks passed" in fix_status
