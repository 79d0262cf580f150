"""Container lifecycle against real Docker: cancellation, the concurrency cap, orphans, the warm pool."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import subprocess
import time

import docker
import pytest

from agents.types import FileSet, TestJob, TestStatus
from bot.sandbox import DockerSandbox
from bot.sandbox.hardening import KEEPER, LABEL, LABEL_HOST, LABEL_PID, LABEL_PIDNS, LABEL_STARTED, labels
from tests.docker_support import TEST_CONFIG, our_containers
from tests.sandbox.conftest import configured, engine_requests, without_ids

pytestmark = pytest.mark.docker


def sleeper(seconds: float) -> TestJob:
    return TestJob("python", FileSet({"test_sleep.py": f"import time\n\ndef test_sleep():\n"
                                                       f"    time.sleep({seconds})\n"}))


async def wait_for_containers(client, count: int) -> None:
    for _ in range(200):
        if len(await asyncio.to_thread(our_containers, client)) >= count:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"never saw {count} sandbox container(s) running")


@pytest.mark.parametrize("phase_delay_s", [0.0, 1.5], ids=["while-starting", "while-testing"])
async def test_cancellation_removes_the_container(sandbox, docker_client, phase_delay_s):
    task = asyncio.create_task(sandbox.run(sleeper(60)))
    await wait_for_containers(docker_client, 1)
    await asyncio.sleep(phase_delay_s)  # by then the test command runs (a start takes well under a second)
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # Removal is part of the cancellation: by the time it completes, the container is gone.
    assert our_containers(docker_client) == []
    print(f"cancel -> container removed in {time.monotonic() - started:.2f}s")


async def test_concurrency_cap_queues_runs(docker_client):
    seen: list[int] = []
    done = asyncio.Event()

    async def watch() -> None:
        while not done.is_set():
            seen.append(len(await asyncio.to_thread(our_containers, docker_client)))
            await asyncio.sleep(0.1)

    async with DockerSandbox(configured(concurrency=2), client=docker_client) as sandbox:
        watcher = asyncio.create_task(watch())
        reports = await asyncio.gather(*(sandbox.run(sleeper(1.5)) for _ in range(6)))
        done.set()
        await watcher
    assert [r.status for r in reports] == [TestStatus.PASSED] * 6
    assert sandbox.peak_active == 2
    assert max(seen) <= 2
    assert our_containers(docker_client) == []


def _dead_pid() -> str:
    child = subprocess.Popen(["true"])
    child.wait()
    return str(child.pid)


async def test_orphans_of_a_dead_process_are_reaped_at_start(docker_client, own_host):
    image = "codegen-chat-sandbox/base:bookworm"
    orphan = docker_client.containers.run(image, KEEPER, detach=True, network_mode="none",
                                          labels={**labels("python"), LABEL_PID: _dead_pid()})
    alive = docker_client.containers.run(image, KEEPER, detach=True, network_mode="none",
                                         labels={LABEL: "1", LABEL_HOST: labels("x")[LABEL_HOST], LABEL_PID: "1"})
    # A bot restarted in a container gets the dead one's pid back; its start time tells them apart.
    reused = docker_client.containers.run(image, KEEPER, detach=True, network_mode="none",
                                          labels={**labels("python"), LABEL_STARTED: "1"})
    try:
        async with DockerSandbox(TEST_CONFIG, client=docker_client):
            pass
        remaining = {c.id for c in docker_client.containers.list(all=True, sparse=True,
                                                                 filters={"label": f"{LABEL}=1"})}
        assert orphan.id not in remaining and reused.id not in remaining
        assert alive.id in remaining  # a living process's containers are not ours to reap
    finally:
        alive.remove(force=True)


async def test_another_pid_namespaces_containers_are_left_alone_unless_stopped(docker_client, own_host):
    """A bot in a container with host networking shares the host name but not the pids: its running
    containers are not ours to judge; a stopped one serves no one and goes."""
    image = "codegen-chat-sandbox/base:bookworm"
    foreign = {**labels("python"), LABEL_PID: _dead_pid(), LABEL_PIDNS: "elsewhere/4026532999"}
    running = docker_client.containers.run(image, KEEPER, detach=True, network_mode="none", labels=foreign)
    stopped = docker_client.containers.run(image, ["true"], detach=True, network_mode="none", labels=foreign)
    try:
        stopped.wait()
        async with DockerSandbox(TEST_CONFIG, client=docker_client):
            pass
        remaining = {c.id for c in docker_client.containers.list(all=True, sparse=True,
                                                                 filters={"label": f"{LABEL}=1"})}
        assert running.id in remaining and stopped.id not in remaining
    finally:
        running.remove(force=True)
        with contextlib.suppress(docker.errors.NotFound):
            stopped.remove(force=True)


async def test_setup_networks_of_a_dead_process_are_reaped_at_start(docker_client, own_host):
    dead = docker_client.networks.create("codegen-setup-orphan-test", internal=True,
                                         labels={**labels("setup"), LABEL_PID: _dead_pid()})
    alive = docker_client.networks.create("codegen-setup-alive-test", internal=True,
                                          labels={**labels("setup"), LABEL_PID: "1", LABEL_STARTED: ""})
    try:
        async with DockerSandbox(TEST_CONFIG, client=docker_client):
            pass
        names = {n.name for n in docker_client.networks.list(filters={"label": f"{LABEL}=1"})}
        assert "codegen-setup-orphan-test" not in names
        assert "codegen-setup-alive-test" in names
    finally:
        alive.remove()
        with contextlib.suppress(docker.errors.NotFound):
            dead.remove()


async def test_warm_pool_container_serves_one_run_only(docker_client):
    leave = TestJob("python", FileSet({"test_leave.py": "def test_leave():\n    open('/work/left.txt', 'w').write('x')\n"
                                       "    open('/tmp/left.txt', 'w').write('x')\n"}))
    look = TestJob("python", FileSet({"test_look.py": "import os\n\ndef test_look():\n"
                                      "    assert not os.path.exists('/work/left.txt')\n"
                                      "    assert not os.path.exists('/tmp/left.txt')\n"}))
    async with DockerSandbox(configured(warm_pool=True, warm_pool_size=1), client=docker_client) as sandbox:
        sandbox.warm("python")
        await wait_for_containers(docker_client, 1)
        first = await sandbox.run(leave)
        await wait_for_containers(docker_client, 1)  # the replacement is ready
        second = await sandbox.run(look)
    assert (first.status, second.status) == (TestStatus.PASSED, TestStatus.PASSED), second.output()
    assert our_containers(docker_client) == []  # close() removed the idle warm containers


@pytest.mark.parametrize("pool", [True, False], ids=["warm-pool", "own-containers"])
async def test_used_containers_go_in_the_background_and_none_outlives_close(docker_client, pool):
    """A run's result does not wait for its container's removal, but close() does: used containers, idle
    ones, and one whose run was cancelled are all gone when it returns."""
    async with DockerSandbox(configured(warm_pool=pool, warm_pool_size=2), client=docker_client) as sandbox:
        sandbox.warm("python")
        reports = [await sandbox.run(sleeper(0)) for _ in range(4)]
        cancelled = asyncio.create_task(sandbox.run(sleeper(60)))
        await wait_for_containers(docker_client, 3 if pool else 1)
        cancelled.cancel()
        with pytest.raises(asyncio.CancelledError):
            await cancelled
    assert [r.status for r in reports] == [TestStatus.PASSED] * 4
    assert our_containers(docker_client) == []


async def test_settle_waits_until_used_containers_are_gone(docker_client):
    async with DockerSandbox(configured(), client=docker_client) as sandbox:
        for _ in range(3):
            report = await sandbox.run(sleeper(0))
            assert report.status is TestStatus.PASSED, report.output()
        await sandbox.settle()
        assert await asyncio.to_thread(our_containers, docker_client) == []


async def test_files_larger_than_one_exec_argument_arrive_intact(sandbox):
    data = os.urandom(250_000).hex()  # 500 kB: several upload chunks
    digest = hashlib.sha256(data.encode()).hexdigest()
    files = FileSet({"data/blob.txt": data, "test_blob.py": "import hashlib\n\ndef test_blob():\n"
                     f"    assert hashlib.sha256(open('data/blob.txt', 'rb').read()).hexdigest() == '{digest}'\n"})
    report = await sandbox.run(TestJob("python", files))
    assert (report.status, report.passed) == (TestStatus.PASSED, 1), report.output()


async def test_test_files_larger_than_one_exec_argument_arrive_intact(sandbox):
    """The team's test files are unpacked by the sandbox's own user (read-only to the code), beside the code's."""
    data = os.urandom(150_000).hex()  # 300 kB in the test file itself: several upload chunks, for each user
    files = FileSet({"data/blob.txt": data, "test_blob.py": f"DATA = '{data}'\n\ndef test_blob():\n"
                     "    assert open('data/blob.txt').read() == DATA\n"})
    report = await sandbox.run(TestJob("python", files))
    assert (report.status, report.passed) == (TestStatus.PASSED, 1), report.output()


async def test_a_prepared_container_is_the_next_runs_and_none_is_kept_after_it(docker_client):
    async with DockerSandbox(configured(), client=docker_client) as sandbox:  # no warm pool
        sandbox.prepare("python")
        sandbox.prepare("python")  # asked twice before it is used: still one container
        while not sandbox.warm_ready("python"):
            await asyncio.sleep(0.05)
        [prepared] = await asyncio.to_thread(our_containers, docker_client)
        report = await sandbox.run(TestJob("python", FileSet({"test_ok.py": "def test_ok():\n    pass\n"})))
        assert report.status is TestStatus.PASSED, report.output()
        await sandbox.settle()  # a used container goes in the background
        with pytest.raises(docker.errors.NotFound):
            await asyncio.to_thread(docker_client.containers.get, prepared.id)  # used, then removed
        assert sandbox.warm_ready("python") == 0 and await asyncio.to_thread(our_containers, docker_client) == []
        sandbox.prepare("python")
        sandbox.prepare("no-such-language")  # a hint only: run() is where an unknown language is reported
        await wait_for_containers(docker_client, 1)
    assert our_containers(docker_client) == []  # close() removed the prepared container no run took


async def test_a_test_run_asks_the_engine_only_what_it_uses(docker_client, monkeypatch):
    """A prepared container's run: each command is an exec created and started; only the arming of the deadline
    (before the tests) and the tests themselves are asked for their exit code; the container is removed."""
    async with DockerSandbox(configured(), client=docker_client) as sandbox:
        sandbox.prepare("python")
        while not sandbox.warm_ready("python"):
            await asyncio.sleep(0.05)
        asked = engine_requests(docker_client, monkeypatch)
        report = await sandbox.run(TestJob("python", FileSet({"test_ok.py": "def test_ok():\n    pass\n"})))
        await sandbox.settle()
    assert (report.status, report.passed) == (TestStatus.PASSED, 1), report.output()
    kinds = without_ids(asked)
    assert kinds.count("POST containers/ID/exec") == kinds.count("POST exec/ID/start") == 4  # arm, tests, stop, read
    # Asked how it ended: the arming and the tests only (a test run slower than a second is also looked at meanwhile).
    assert len({request for request in asked if request.startswith("GET exec/")}) == 2, kinds
    assert kinds.count("DELETE containers/ID") == 1, kinds
    assert set(kinds) == {"POST containers/ID/exec", "POST exec/ID/start", "GET exec/ID/json", "DELETE containers/ID"}
