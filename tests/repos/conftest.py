"""A git host and a GitHub on loopback, with the fixture repositories the tests need."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.fakes.git_server import FakeGitHost
from tests.fakes.github_server import FakeGitHub

TOKEN = "ghp_git_token_0123456789"


@pytest.fixture
async def git_host(tmp_path: Path) -> AsyncIterator[FakeGitHost]:
    root = tmp_path / "git-root"
    root.mkdir()
    async with FakeGitHost(root, token=TOKEN) as host:
        yield host


@pytest.fixture
async def github() -> AsyncIterator[FakeGitHub]:
    async with FakeGitHub(token=TOKEN) as server:
        yield server
