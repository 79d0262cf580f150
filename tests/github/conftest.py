"""The pull-request platform against loopback fakes: a GitHub that serves the REST calls and sends signed
webhooks, a real git host, the scripted model server, and the real service, store and ``adapters.github.serve``
listening on a port of its own, as in production."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

import adapters.github
from agents.types import TestJob, TestReport, TestStatus
from bot.ci.rounds import CiRounds
from bot.config.sections import Config, ReposConfig, RepoSettings, Secrets
from bot.model.client import OpenAIChatModel
from bot.repos.desk import AppCredentials, RepoDesk
from bot.runs.service import Service
from bot.safety.redact import Redactor
from bot.store.protocol import Store
from bot.store.sqlite import SQLiteStore
from codegen_chat.build import publisher_factory, taking_jobs
from tests.ci.conftest import TOKEN, git_host, github  # noqa: F401  (fixtures: GitHub reads heads from git)
from tests.conftest import with_changes
from tests.fakes.git_server import FakeGitHost
from tests.fakes.github_server import Comment, FakeGitHub
from tests.fakes.loopback import free_port, listening
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.team_script import ScriptedSandbox
from tests.repos.fixtures import PYTHON_PROJECT, git, make_repo
from tests.repos.test_pull_request_docker import CODE, PLAN, TESTS

SECRET = "webhook-secret-0123456789"
REPO = "acme/app"
PR = 7  # a person's pull request, from acme/app's branch "feature" into main
AUTHOR = "alice"  # has write access
FINAL_WORDS = ("✅ Passed:", "❌ Failed:", "⏹️ Stopped:", "⚠️ Error:")
README = "# Retries\n\n`fetch` tries again on ConnectionError.\n"


def passing(job: TestJob) -> TestReport:
    return TestReport(TestStatus.PASSED, 0, 0.1, 3, 0, "3 passed")


def script_team(server: FakeOpenAI, runs: int = 1) -> None:
    for role, reply in {"planner": PLAN, "programmer": CODE, "tester": TESTS, "optimizer": "VERDICT: APPROVE",
                        "checkin": README}.items():
        server.script(role, *[reply] * runs)


@dataclass
class RunningBot:
    service: Service
    url: str  # the webhook's URL
    task: asyncio.Task[None]
    fake: FakeGitHub
    closing: contextlib.AsyncExitStack = field(default_factory=contextlib.AsyncExitStack, repr=False)

    async def stop(self) -> None:
        """Stop serving (its runs stopped as at a shutdown), then what it holds: its job worker, its model client."""
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task
        await self.closing.aclose()

    async def deliver(self, event: str, payload: dict[str, Any], **kw: Any) -> tuple[int, str]:
        return await self.fake.send_webhook(self.url, event, payload, SECRET, **kw)

    async def comment(self, comment: Comment, **kw: Any) -> tuple[int, str]:
        """GitHub's delivery of a new comment."""
        return await self.deliver(*self.fake.comment_payload(comment), **kw)


@pytest.fixture
def github_config(config: Config, github: FakeGitHub, git_host: FakeGitHost) -> Config:  # noqa: F811
    repos = ReposConfig(git_url=git_host.url, allowed={REPO: RepoSettings()})
    changed = with_changes(config, github={"enabled": True, "host": "127.0.0.1", "port": free_port(),
                                           "update_interval_s": 0.05},
                           checkin={"github_api_url": github.url, "write_interval_s": 0})
    return dataclasses.replace(changed, repos=repos)


@pytest.fixture
def github_secrets(secrets: Secrets) -> Secrets:
    return dataclasses.replace(secrets, github_token=TOKEN, github_webhook_secret=SECRET)


@pytest.fixture
def pull_request(github: FakeGitHub, git_host: FakeGitHost) -> None:  # noqa: F811
    """acme/app with a branch "feature", pull request #7 from it, and alice with write access."""
    bare = make_repo(git_host.root, REPO, PYTHON_PROJECT)
    git("branch", "feature", "main", cwd=bare)
    github.add_repo(REPO)
    github.add_pull_request(REPO, PR, "feature")
    github.grant(REPO, AUTHOR, "write")


@pytest.fixture
async def start_bot(store: SQLiteStore, github: FakeGitHub,  # noqa: F811
                    github_secrets: Secrets) -> AsyncIterator[Callable[..., Any]]:
    """``await start_bot(config, secrets=None, own_store=None, follow_ci=False, durable=False)``:
    ``adapters.github.serve`` listening on its port (a replica of its own when given a store of its own; following
    its pull requests' CI; its runs durable jobs on that store's queue, as ``serve`` makes them on PostgreSQL)."""
    running: list[RunningBot] = []

    async def start(config: Config, secrets: Secrets | None = None, own_store: Store | None = None,
                    follow_ci: bool = False, durable: bool = False) -> RunningBot:
        secrets = secrets or github_secrets
        closing = contextlib.AsyncExitStack()
        model = OpenAIChatModel(config, secrets)
        closing.push_async_callback(model.close)
        desk = RepoDesk(config, secrets.github_token, app=AppCredentials.from_secrets(secrets))
        ci = CiRounds(desk.github, config.ci, max_tokens=config.budget.max_tokens) if follow_ci else None
        service = Service(config, own_store or store, model, ScriptedSandbox(verdict=passing),
                          publisher_factory(config, secrets, store), redact=Redactor(secrets.values()),
                          repos=desk, ci=ci)
        if durable:
            await closing.enter_async_context(taking_jobs(service, own_store or store, config))
        task = asyncio.create_task(adapters.github.serve(service, config, secrets))
        settings = config.github
        try:
            await listening(settings.port, task)
            if task.done():
                task.result()  # serve failed to start: show why
        except BaseException:
            await closing.aclose()
            raise
        bot = RunningBot(service, f"http://127.0.0.1:{settings.port}{settings.path}", task, github, closing)
        running.append(bot)
        return bot

    yield start
    for bot in running:
        await bot.stop()


def finals(comments: list[Comment]) -> list[Comment]:
    return [c for c in comments if c.body.startswith(FINAL_WORDS)]


async def eventually(predicate: Callable[[], Any], within: float = 20.0) -> Any:
    """Poll ``predicate`` until it holds (the fake records what the bot did; nothing signals it)."""
    async with asyncio.timeout(within):
        while not (value := predicate()):
            await asyncio.sleep(0.02)
        return value
