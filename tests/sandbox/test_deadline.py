"""A container dies at its deadline even when the bot dies, and the next start removes it (real Docker).

A real ``codegen-chat sandbox run`` process runs an endless test; it is killed (-9, or SIGTERM) while
the test spins. The container must stop by itself soon after its deadline, and a later start of the
sandbox must remove it.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import subprocess
import sys
import time

import pytest

from bot.config import Config, Secrets, StorageConfig
from bot.sandbox.hardening import DEADLINE_GRACE_S, KEEPER, LABEL_PID, labels
from tests.docker_support import TEST_CONFIG
from tests.sandbox.test_lifecycle import _dead_pid

pytestmark = pytest.mark.docker

TIMEOUT_S = 2.0
SPIN = "def test_spin():\n    while True:\n        pass\n"


def sandbox_run(folder, project: str, host: str) -> subprocess.Popen:
    """``codegen-chat sandbox run`` on ``folder/project``, under a host name of its own: other checkouts
    sharing this engine reap the orphans of their own host only, so this test sees what its own bot does."""
    command = (f"hostname {host} && exec {shlex.quote(sys.executable)} -m bot.entry.cli sandbox run --language python "
               f"{project} --timeout {TIMEOUT_S}")
    return subprocess.Popen(["unshare", "--uts", "sh", "-c", command], cwd=folder,
                            env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "CODEGEN_SANDBOX_OFFLINE": "1"},
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


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM], ids=["kill-9", "sigterm"])
async def test_a_spinning_test_stops_by_its_deadline_after_the_bot_dies(docker_client, tmp_path, how):
    for project, test in (("spinning", SPIN), ("quick", "def test_quick():\n    pass\n")):
        (tmp_path / project).mkdir()
        (tmp_path / project / "test_it.py").write_text(test)
    host = f"codegen-deadline-{os.getpid()}-{how}"
    bot = sandbox_run(tmp_path, "spinning", host)
    try:
        await wait_for(lambda: spinning(docker_client, bot.pid), "the test spinning in its container")
        bot.send_signal(how)
        await asyncio.to_thread(bot.wait)
        killed = time.monotonic()
        [container] = containers_of(docker_client, bot.pid)  # the bot died before it could remove it
        deadline = TIMEOUT_S + DEADLINE_GRACE_S
        await wait_for(lambda: (container.reload(), container.status)[1] == "exited",
                       "the container stopping by itself", tries=int((deadline + 60) / 0.5), every_s=0.5)
        print(f"container stopped {time.monotonic() - killed:.1f}s after the bot died (deadline {deadline:.0f}s)")
        next_start = sandbox_run(tmp_path, "quick", host)  # the next start, on the same host, reaps it
        assert await asyncio.to_thread(next_start.wait) == 0
        assert containers_of(docker_client, bot.pid) == []
    finally:
        bot.kill()
        for container in containers_of(docker_client, bot.pid):
            container.remove(force=True)


async def test_run_and_serve_reap_leftovers_when_they_start(docker_client, tmp_path, own_host):
    """Not only when a run reaches its tests: at once, when the service is built."""
    from bot.entry.build import open_store, running_service

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
