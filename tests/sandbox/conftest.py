"""Fixtures of the sandbox tests; Docker itself comes from ``tests/docker_support.py``."""

from __future__ import annotations

import dataclasses
import os
import re
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


def engine_requests(client, monkeypatch) -> list[str]:
    """What ``client`` asks the engine from now on, in order, as "METHOD path" without the API version
    ("POST containers/<id>/exec"): the real requests, recorded on their way."""
    asked: list[str] = []
    send = client.api.send

    def recorded(request, **options):
        asked.append(f"{request.method} {re.sub(r'^/v[0-9.]+/', '', request.path_url.split('?')[0])}")
        return send(request, **options)

    monkeypatch.setattr(client.api, "send", recorded)
    return asked


def without_ids(asked: list[str]) -> list[str]:
    """``engine_requests`` with each container's and exec's id as ``ID``."""
    return [re.sub(r"[0-9a-f]{64}", "ID", request) for request in asked]
