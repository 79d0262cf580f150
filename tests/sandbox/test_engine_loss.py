"""Losing the Docker engine at each step of a run: one sentence saying so, never a traceback.

The sandbox talks to the engine through a relay (``engine_proxy.py``) that is cut when the run reaches
the step under test, as when dockerd stops or restarts.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path

import docker
import pytest

from agents.errors import SandboxError
from agents.types import FileSet, TestJob, TestStatus
from bot.sandbox import DockerSandbox
from bot.sandbox.hardening import LABEL, LABEL_PID
from tests.docker_support import TEST_CONFIG, our_containers
from tests.sandbox.engine_proxy import EngineRelay

pytestmark = pytest.mark.docker

QUICK = TestJob("python", FileSet({"test_q.py": "def test_q():\n    pass\n"}))
SLOW = TestJob("python", FileSet({"test_s.py": "import time\n\ndef test_s():\n    time.sleep(60)\n"}))


@pytest.fixture
def relay_at():
    folder = Path(tempfile.mkdtemp(prefix="engine-", dir="/tmp"))  # short: a socket path has 108 bytes at most
    made: list[EngineRelay] = []

    def make(cut_on: bytes | None = None, hold_open: bool = False) -> EngineRelay:
        made.append(EngineRelay(folder / "docker.sock", cut_on, hold_open))
        return made[-1]

    yield make
    for relay in made:
        relay.cut()
    os.rmdir(folder) if folder.exists() and not any(folder.iterdir()) else None


@pytest.fixture(autouse=True)
def remove_what_the_lost_engine_kept(docker_client):
    """What the cut relay could not remove is removed through the real engine (the next start would; one
    whose job began also stops by itself at its deadline)."""
    yield
    for container in our_containers(docker_client):
        container.remove(force=True)
    for network in docker_client.networks.list(filters={"label": [f"{LABEL}=1", f"{LABEL_PID}={os.getpid()}"]}):
        network.remove()


def one_sentence(error: SandboxError) -> str:
    text = str(error)
    assert "\n" not in text and "Traceback" not in text
    return text


@pytest.mark.parametrize("cut_on", [b"/containers/create", b"/exec HTTP", b"/start HTTP", b"/exec/"],
                         ids=["creating", "starting-an-exec", "starting", "reading-an-exec"])
async def test_losing_the_engine_at_each_step_is_one_sentence(relay_at, cut_on):
    relay = relay_at(cut_on)
    client = docker.DockerClient(base_url=relay.url, timeout=10)
    async with DockerSandbox(TEST_CONFIG, client=client) as sandbox:
        with pytest.raises(SandboxError) as raised:
            await sandbox.run(QUICK)
    assert relay.cut_done.is_set()
    assert "the Docker engine failed during the test run" in one_sentence(raised.value)


async def test_losing_the_engine_while_the_tests_run(relay_at, docker_client):
    relay = relay_at()
    client = docker.DockerClient(base_url=relay.url, timeout=10)
    async with DockerSandbox(TEST_CONFIG, client=client) as sandbox:
        running = asyncio.create_task(sandbox.run(SLOW))
        for _ in range(400):
            if any("pytest" in " ".join(p) for c in our_containers(docker_client) if c.status != "created"
                   for p in _processes(c)):
                break
            await asyncio.sleep(0.05)
        relay.cut()
        with pytest.raises(SandboxError) as raised:
            await running
    assert "the Docker engine failed during the test run" in one_sentence(raised.value)


async def test_losing_the_engine_while_removing_keeps_the_result(relay_at, docker_client, caplog):
    """The tests ran: their result stands; the container is left to its deadline and the next start."""
    relay = relay_at(b"DELETE /v")
    client = docker.DockerClient(base_url=relay.url, timeout=10)
    async with DockerSandbox(TEST_CONFIG, client=client) as sandbox:
        report = await sandbox.run(QUICK)
    assert (report.status, report.passed) == (TestStatus.PASSED, 1), report.output()
    assert relay.cut_done.is_set()
    assert "could not remove a sandbox container" in caplog.text
    assert len(our_containers(docker_client)) == 1


async def test_an_engine_lost_before_the_start_is_one_sentence(relay_at):
    relay = relay_at(b"/containers/json")  # the orphan sweep at start lists containers
    client = docker.DockerClient(base_url=relay.url, timeout=10)
    sandbox = DockerSandbox(TEST_CONFIG, client=client)
    with pytest.raises(SandboxError) as raised:
        await sandbox.start()
    await sandbox.close()
    assert "the Docker engine failed during the start" in one_sentence(raised.value)


def _processes(container) -> list[list[str]]:
    try:
        return container.top()["Processes"] or []
    except docker.errors.APIError:
        return []


async def test_an_output_stream_the_engine_never_closes_holds_no_thread(relay_at):
    """The tests pass, and once the sandbox is closed none of its threads still waits on an exec's output: a
    thread left reading a stream the engine keeps open would keep the process from ever exiting."""
    relay = relay_at(hold_open=True)
    client = docker.DockerClient(base_url=relay.url, timeout=10)
    sandbox = DockerSandbox(TEST_CONFIG, client=client)
    async with sandbox:
        report = await sandbox.run(QUICK)
    assert report.status == TestStatus.PASSED, report.stderr
    workers = list(sandbox._threads._threads)
    for _ in range(100):
        if not any(worker.is_alive() for worker in workers):
            break
        await asyncio.sleep(0.1)
    assert not [worker.name for worker in workers if worker.is_alive()]
