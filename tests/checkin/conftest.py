"""A fake GitHub on loopback, a config pointing at it with tiny waits, and a publisher using both."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.checkin import GistPublisher, MemoryGistIndex
from bot.config.sections import CheckinConfig
from tests.checkin.support import TOKEN, SleepLog
from tests.fakes.github_server import FakeGitHub


@pytest.fixture
async def github() -> AsyncIterator[FakeGitHub]:
    async with FakeGitHub(token=TOKEN) as server:
        yield server


@pytest.fixture
def checkin_config(github: FakeGitHub) -> CheckinConfig:
    # No pause between writes and small backoffs: the rules are the same, the test just does not wait.
    return CheckinConfig(github_api_url=github.url, write_interval_s=0, backoff_s=0.01, max_wait_s=120, max_retries=2)


@pytest.fixture
def sleeps() -> SleepLog:
    return SleepLog()


@pytest.fixture
def index() -> MemoryGistIndex:
    return MemoryGistIndex()


@pytest.fixture
def publisher(checkin_config: CheckinConfig, index: MemoryGistIndex, sleeps: SleepLog) -> GistPublisher:
    return GistPublisher(checkin_config, TOKEN, index, sleep=sleeps)
