"""Docker for every test marked ``docker``: the real engine, or a clear skip (a failure when CI requires
Docker, ``CODEGEN_REQUIRE_DOCKER=1``), and no sandbox container of this process left behind afterwards.

Registered for the whole suite by ``tests/conftest.py``."""

from __future__ import annotations

import os

import docker
import pytest

from bot.config.sections import SandboxConfig
from bot.sandbox.hardening import LABEL, LABEL_PID
from bot.sandbox.images import image_present
from bot.sandbox.languages import DEFAULT_LANGUAGES, image_for

REQUIRE_ENV = "CODEGEN_REQUIRE_DOCKER"

# Small limits keep the hostile tests quick; everything else is the shipped hardening.
TEST_CONFIG = SandboxConfig(use_offline_images=True, timeout_s=120.0, setup_timeout_s=120.0, memory_mb=256,
                            max_output_bytes=200_000, concurrency=4)


def _unavailable(reason: str) -> None:
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{reason} ({REQUIRE_ENV}=1: Docker tests must run here)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def docker_client():
    """A client whose engine answered, with every offline language image present."""
    try:
        client = docker.from_env(timeout=30)
        client.ping()
    except Exception as error:
        _unavailable(f"no Docker engine answers ({str(error)[:120]}): start dockerd to run the sandbox tests")
    missing = sorted(name for name in _images() if not image_present(client, name))
    if missing:
        _unavailable(f"offline images missing: {', '.join(missing)}; run `codegen-chat sandbox build --offline`")
    yield client
    client.close()


def _images() -> set[str]:
    return {image_for(lang, TEST_CONFIG) for lang in DEFAULT_LANGUAGES.values()}


def our_containers(client: docker.DockerClient) -> list:
    """Sandbox containers this test process started (running or not)."""
    return client.containers.list(all=True, sparse=True,
                                  filters={"label": [f"{LABEL}=1", f"{LABEL_PID}={os.getpid()}"]})


@pytest.fixture(autouse=True)
def _docker_gate(request):
    """Docker-marked tests get the engine (or skip); afterwards none of their containers may remain."""
    if request.node.get_closest_marker("docker") is None:
        yield
        return
    client = request.getfixturevalue("docker_client")
    yield
    left = our_containers(client)
    for container in left:
        container.remove(force=True)
    assert not left, f"sandbox containers left behind: {[c.short_id for c in left]}"
