"""Fixtures of the sandbox tests; Docker itself comes from ``tests/docker_support.py``."""

from __future__ import annotations

import dataclasses

import pytest

from bot.config import SandboxConfig
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
