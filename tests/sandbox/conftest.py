"""Fixtures of the sandbox tests; Docker itself comes from ``tests/docker_support.py``."""

from __future__ import annotations

import dataclasses
import os
import socket

import pytest

from bot.config.sections import SandboxConfig
from bot.sandbox import DockerSandbox
from tests.docker_support import TEST_CONFIG


@pytest.fixture
def sandbox_config() -> SandboxConfig:
    return TEST_CONFIG


@pytest.fixture
async def sandbox(docker_client, sandbox_config):
    async with DockerSandbox(sandbox_config, client=docker_client) as box:
        yield box


def configured(**changes) -> SandboxConfig:
    return dataclasses.replace(TEST_CONFIG, **changes)


@pytest.fixture
def own_host(monkeypatch) -> str:
    """This process as a host of its own: other checkouts on the same engine reap their own host's orphans,
    so theirs never race with the orphans a test leaves on purpose."""
    name = f"codegen-test-{os.getpid()}"
    monkeypatch.setattr(socket, "gethostname", lambda: name)
    return name
