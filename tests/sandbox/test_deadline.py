"""A container dies at its deadline even when the bot dies, and the next start removes it (real Docker).

A real ``codegen-chat sandbox run`` process (or a bot with a warm pool) runs an endless test; it is killed
(-9, or SIGTERM) while the test spins. The container must stop by itself soon after its deadline, and a
later start of the sandbox must remove it. Whatever container a job gets (its own, a warm one, a prepared
one) and whichever way it runs (tests alone, the user's first, after a setup), the container's own
deadline is set before the team's code runs, to the time that job may take.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agents.types import FileSet, TestJob, TestStatus
from bot.config.sections import Config, Secrets, StorageConfig
from bot.sandbox import DockerSandbox
from bot.sandbox.hardening import DEADLINE_GRACE_S, KEEPER, LABEL_PID, labels
from bot.sandbox.languages import DEFAULT_LANGUAGES
from tests.docker_support import TEST_CONFIG, our_containers
from tests.sandbox.conftest import configured
from tests.sandbox.test_lifecycle import _dead_pid

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.docker

TIMEOUT_S = 2.0
SPIN = "def test_spin():\n    while True:\n        pass\n"


def sandbox_run(folder, project: str, host: str, timeout_s: float = TIMEOUT_S) -> subprocess.Popen:
    """``codegen-chat sandbox run`` on ``folder/project``, under a host name of its own: other checkouts
    sharing this engine reap the orphans of their own host only, so this test sees what its own bot does."""
    command = (f"hostname {host} && exec {shlex.quote(sys.executable)} -m codegen_chat.cli sandbox run --language python "
               f"{project} --timeout {timeout_s}")
    return subprocess.Popen(["unshare", "--uts", "sh", "-c", command], cwd=folder,
                            env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "PYTHONPATH": str(ROOT),
                                 "CODEGEN_SANDBOX_OFFLINE": "1"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


# A bot with a warm pool: its job takes a container started before the job was known. It runs one job, and
# with "exit" ends at once after it (as a crash would, before the used container's removal could run).
POOLED_BOT = """
import asyncio, dataclasses, os, sys
from agents.types import FileSet, TestJob
from bot.sandbox import DockerSandbox
from tests.docker_support import TEST_CONFIG

async def main():
    config = dataclasses.replace(TEST_CONFIG, warm_pool=True, timeout_s=float(sys.argv[2]))
    async with DockerSandbox(config) as sandbox:
        sandbox.warm("python")
        while not sandbox.warm_ready("python"):
            await asyncio.sleep(0.05)
        await sandbox.run(TestJob("python", FileSet({"test_it.py": open(sys.argv[1]).read()})))
        if sys.argv[3] == "exit":
            os._exit(0)

asyncio.run(main())
"""


def pooled_bot(folder, project: str, host: str, then: str = "close") -> subprocess.Popen:
    command = (f"hostname {host} && exec {shlex.quote(sys.executable)} -c {shlex.quote(POOLED_BOT)} "
               f"{project}/test_it.py {TIMEOUT_S} {then}")
    return subprocess.Popen(["unshare", "--uts", "sh", "-c", command], cwd=folder,
                            env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "PYTHONPATH": str(ROOT),
                                 "CODEGEN_SANDBOX_OFFLINE": "1"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def containers_of(client, pid: int) -> list:
    return client.containers.list(all=True, filters={"label": f"{LABEL_PID}={pid}"})


def spinning(client, pid: int) -> bool:
    for container in containers_of(client, pid):
        if container.status == "running" and any("pytest" in " ".join(p) for p in container.top()["Processes"]):
            return True
    return False


async def wait_for(check, what: str, tries: int = 600, every_s: float = 0.1) -> None:
    for _ in range(tries):
        if await asyncio.to_thread(check):
            return
        await asyncio.sleep(every_s)
    raise AssertionError(f"never happened: {what}")


def projects(folder) -> None:
    for project, test in (("spinning", SPIN), ("quick", "def test_quick():\n    pass\n")):
        (folder / project).mkdir()
        (folder / project / "test_it.py").write_text(test)


@pytest.mark.parametrize(("how", "pooled"), [(signal.SIGKILL, False), (signal.SIGTERM, False), (signal.SIGKILL, True)],
                         ids=["kill-9", "sigterm", "kill-9-warm-container"])
async def test_a_spinning_test_stops_by_its_deadline_after_the_bot_dies(docker_client, tmp_path, how, pooled):
    projects(tmp_path)
    host = f"codegen-deadline-{os.getpid()}-{how}-{pooled}"
    bot = pooled_bot(tmp_path, "spinning", host) if pooled else sandbox_run(tmp_path, "spinning", host)
    try:
        await wait_for(lambda: spinning(docker_client, bot.pid), "the test spinning in its container")
        bot.send_signal(how)
        await asyncio.to_thread(bot.wait)
        killed = time.monotonic()
        # The bot died before it could remove it (a warm pool's idle container may be there too: it never
        # got a job, so it has no deadline, and the next start removes it as well).
        [container] = [c for c in containers_of(docker_client, bot.pid) if (c.reload(), c.status)[1] == "running"
                       and any("pytest" in " ".join(p) for p in c.top()["Processes"])]
        deadline = TIMEOUT_S + DEADLINE_GRACE_S
        await wait_for(lambda: (container.reload(), container.status)[1] == "exited",
                       "the container stopping by itself", tries=int((deadline + 60) / 0.5), every_s=0.5)
        stopped_after = time.monotonic() - killed
        print(f"container stopped {stopped_after:.1f}s after the bot died (deadline {deadline:.0f}s)")
        # The hard limit holds without the bot: the test step's own limit and a small grace, not a run's budget
        # (the slack is for a busy engine noticing and reporting the exit).
        assert stopped_after <= deadline + 10, stopped_after
        # The next start, on the same host, reaps it (time enough for a quick test on a busy machine).
        next_start = sandbox_run(tmp_path, "quick", host, timeout_s=60)
        assert await asyncio.to_thread(next_start.wait) == 0
        assert containers_of(docker_client, bot.pid) == []
    finally:
        bot.kill()
        for container in containers_of(docker_client, bot.pid):
            container.remove(force=True)


async def test_run_and_serve_reap_leftovers_when_they_start(docker_client, tmp_path, own_host):
    """Not only when a run reaches its tests: at once, when the service is built."""
    from codegen_chat.build import open_store, running_service

    orphan = docker_client.containers.run(TEST_CONFIG.base_image, KEEPER, detach=True, network_mode="none",
                                          labels={**labels("python"), LABEL_PID: _dead_pid()})
    config = Config(sandbox=TEST_CONFIG, storage=StorageConfig(path=str(tmp_path / "db.sqlite3")))
    store = await open_store(config)
    try:
        async with running_service(config, Secrets(openai_api_key="sk-test"), store):
            gone = [c.id for c in docker_client.containers.list(all=True, filters={"id": orphan.id})] == []
    finally:
        await store.close()
        if not gone:
            orphan.remove(force=True)
    assert gone


async def test_a_one_off_run_that_ends_before_its_tests_still_reaps_leftovers(docker_client, tmp_path, own_host):
    """``codegen-chat run`` checks the sandbox only beside its first model call; a run that ends before
    that (the model unreachable, a refused task) still removes what a crashed process left."""
    from codegen_chat.build import open_store, running_service

    orphan = docker_client.containers.run(TEST_CONFIG.base_image, KEEPER, detach=True, network_mode="none",
                                          labels={**labels("python"), LABEL_PID: _dead_pid()})
    config = Config(sandbox=TEST_CONFIG, storage=StorageConfig(path=str(tmp_path / "db.sqlite3")))
    store = await open_store(config)
    try:
        async with running_service(config, Secrets(openai_api_key="sk-test"), store, sandbox_first=False):
            pass  # the run ended at once
        gone = [c.id for c in docker_client.containers.list(all=True, filters={"id": orphan.id})] == []
    finally:
        await store.close()
        if not gone:
            orphan.remove(force=True)
    assert gone


async def test_a_used_container_a_crash_left_before_its_removal_goes_at_the_next_start(docker_client, tmp_path):
    """A used container is removed in the background: a process that ends before that leaves it, counting
    down to its deadline, and the next start removes it."""
    projects(tmp_path)
    host = f"codegen-deadline-{os.getpid()}-crash"
    bot = pooled_bot(tmp_path, "quick", host, then="exit")
    try:
        assert await asyncio.to_thread(bot.wait) == 0
        left = containers_of(docker_client, bot.pid)
        assert left, "the process ended before removing its used container"
        timers = [p for c in left if c.status == "running" for p in c.top()["Processes"] if p[-1].startswith("sleep ")]
        assert timers, "the used container counts down to its deadline"
        next_start = sandbox_run(tmp_path, "quick", host, timeout_s=60)
        assert await asyncio.to_thread(next_start.wait) == 0
        assert containers_of(docker_client, bot.pid) == []
    finally:
        for container in containers_of(docker_client, bot.pid):
            container.remove(force=True)


# The test reads the keeper's countdown (a `sleep SECONDS` of another user) from /proc, as any process in the
# container can; it waits a moment, as the keeper starts it while the files unpack.
PROBE = """import os, time

def keeper_countdown():
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\\0")
            owner = os.stat(f"/proc/{pid}").st_uid
        except OSError:
            continue
        if owner != os.getuid() and argv[0] == b"sleep":
            return int(argv[1])
    return None

def test_deadline_is_set():
    for _ in range(200):
        seconds = keeper_countdown()
        if seconds is not None:
            break
        time.sleep(0.05)
    assert seconds == EXPECTED
"""
SETUP_TRUE = dataclasses.replace(DEFAULT_LANGUAGES["python"], setup_when=("deps.txt",), setup_command="true")


def probe(expected_s: float, **job) -> TestJob:
    files = {"test_probe.py": PROBE.replace("EXPECTED", str(math.ceil(expected_s))), **job.pop("files", {})}
    return TestJob("python", FileSet(files), **job)


LIMIT = TEST_CONFIG.timeout_s + DEADLINE_GRACE_S
WITH_SETUP = LIMIT  # each step is armed with its own limit: the setup's is over when the tests run


@pytest.mark.parametrize(("changes", "how", "job"), [
    ({}, "own", probe(LIMIT)),
    ({"warm_pool": True}, "warm", probe(LIMIT)),
    ({}, "prepared", probe(LIMIT)),
    ({"warm_pool": True}, "warm", probe(30 + DEADLINE_GRACE_S, timeout_s=30)),  # the run's budget is shorter
    ({}, "own", probe(LIMIT, authoritative=("test_probe.py",))),
    ({"warm_pool": True, "setup_network": False, "languages": {"python": SETUP_TRUE}}, "warm",
     probe(WITH_SETUP, files={"deps.txt": ""})),
    ({"setup_network": True, "languages": {"python": SETUP_TRUE}}, "own", probe(WITH_SETUP, files={"deps.txt": ""})),
    ({"setup_network": False, "languages": {"python": SETUP_TRUE}}, "own",
     probe(WITH_SETUP, files={"deps.txt": ""}, authoritative=("test_probe.py",))),
], ids=["own-container", "warm-container", "prepared-container", "shorter-budget", "user-tests-first",
        "after-setup-warm", "after-setup-with-network", "after-setup-user-tests-first"])
async def test_the_deadline_is_the_jobs_before_its_code_runs(docker_client, changes, how, job):
    config = configured(**changes, warm_pool_size=1)
    async with DockerSandbox(config, client=docker_client) as sandbox:
        if how != "own":
            if how == "warm":
                sandbox.warm("python")
            else:
                sandbox.prepare("python")
            await wait_for(lambda: sandbox.warm_ready("python"), "a container ready for the job", every_s=0.05)
            # Waiting for a job, a container counts down to nothing: it lives until a job takes it.
            [idle] = await asyncio.to_thread(our_containers, docker_client)
            processes = await asyncio.to_thread(lambda: docker_client.containers.get(idle.id).top()["Processes"])
            assert not [p for p in processes if p[-1].startswith("sleep ")], processes
        report = await sandbox.run(job)
    assert (report.status, report.passed) == (TestStatus.PASSED, 1), report.output()
