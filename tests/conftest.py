"""Fixtures shared by the whole suite: the scripted model server, configs pointing at it, a store."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from bot.config.sections import Config, LLMConfig, Secrets, StorageConfig
from bot.store.sqlite import SQLiteStore
from tests.fakes.openai_server import FakeOpenAI
from tests.postgres_support import Cluster, running_cluster

# Docker fixtures for every test marked ``docker``; a finished run always ends (tests/exit_watch.py)
pytest_plugins = ["tests.docker_support", "tests.exit_watch"]


@pytest.fixture
async def model_server():
    async with FakeOpenAI(models=("gpt-4o-mini", "gpt-4o")) as server:
        yield server


@pytest.fixture
def config(tmp_path, model_server) -> Config:
    """A config whose model endpoint is the scripted server and whose store is in a temp dir."""
    return Config(
        llm=LLMConfig(base_url=model_server.base_url, request_timeout_s=5.0, max_retries=2, backoff_s=0.01,
                      max_backoff_s=0.05),
        storage=StorageConfig(path=str(tmp_path / "codegen.sqlite3")),
    )


@pytest.fixture
def secrets() -> Secrets:
    return Secrets(openai_api_key="sk-test-0123456789abcdef")


@pytest.fixture
async def store(config):
    store = await SQLiteStore.open(config.db_path())
    yield store
    await store.close()


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[Cluster]:
    """One throwaway PostgreSQL server for the session (skipped without one, unless CODEGEN_REQUIRE_POSTGRES=1);
    ``tests.postgres_support.fresh_database`` gives each test a database of its own on it."""
    with running_cluster() as cluster:
        yield cluster


def with_changes(config: Config, **sections) -> Config:
    """``config`` with some fields of some sections replaced: ``with_changes(c, budget={"max_rounds": 2})``."""
    changes = {name: dataclasses.replace(getattr(config, name), **fields) for name, fields in sections.items()}
    return dataclasses.replace(config, **changes)
