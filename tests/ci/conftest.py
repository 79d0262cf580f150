"""The loopback git host and GitHub of the repository tests, for CI following: the GitHub reads the heads of the
bot's pull requests from the git host, as GitHub does."""

from collections.abc import AsyncIterator

import pytest

from tests.fakes.git_server import FakeGitHost
from tests.fakes.github_server import FakeGitHub
from tests.repos.conftest import TOKEN, git_host

__all__ = ["TOKEN", "git_host", "github"]


@pytest.fixture
async def github(git_host: FakeGitHost) -> AsyncIterator[FakeGitHub]:
    async with FakeGitHub(token=TOKEN) as server:
        server.serve_diffs_from(git_host.root)
        yield server
