"""The Pod ends by itself when the bot is gone: a bot killed with SIGKILL mid-test leaves a Pod whose keeper (the
judge container) ends at the step's deadline, and with it every process of the tests container; Kubernetes' own
activeDeadlineSeconds is only the last resort."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time

import pytest

from agents.types import FileSet, TestJob, TestStatus
from tests.k8s.conftest import NAMESPACE, PYTHON_IMAGE

pytestmark = pytest.mark.docker

SPINNER = "def test_spin():\n    while True:\n        pass\n"


async def test_a_pod_whose_bot_was_killed_stops_at_the_steps_deadline(cluster, tmp_path):
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "test_spin.py").write_text(SPINNER)
    config = tmp_path / "config.toml"
    config.write_text(f'[sandbox]\nbackend = "kubernetes"\ntimeout_s = 4.0\n\n[sandbox.kubernetes]\n'
                      f'namespace = "{NAMESPACE}"\nkubeconfig = "{cluster.kubeconfig(tmp_path / "kubeconfig")}"\n'
                      f'images = {{ python = "{PYTHON_IMAGE}" }}\n')
    bot = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "codegen_chat.cli", "sandbox", "run", "--language", "python", str(folder),
        env={**os.environ, "CODEGEN_CONFIG": str(config)}, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL)
    try:
        pod = await _spinning(cluster)
        bot.send_signal(signal.SIGKILL)  # no cleanup of any kind from the bot now
        await bot.wait()
        killed = time.monotonic()
        while time.monotonic() - killed < 30:
            states = [await _state(docker_id) for docker_id in pod.containers.values()]
            if not any(state.get("Running") for state in states):
                break
            await asyncio.sleep(0.25)
        stopped_after = time.monotonic() - killed
    finally:
        if bot.returncode is None:
            bot.kill()
    assert not any(state.get("Running") for state in states), "the Pod's containers still run"
    assert stopped_after < 4.0 + 5.0 + 3.0  # the step's limit, its grace, and the polling here
    print(f"bot killed -> Pod's containers stopped in {stopped_after:.1f}s")


async def test_a_cancelled_run_deletes_its_pod(k8s_sandbox, cluster):
    running = asyncio.ensure_future(k8s_sandbox.run(TestJob("python", FileSet({"test_spin.py": SPINNER}))))
    await _spinning(cluster)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    assert cluster.stored(NAMESPACE) == {}  # gone before the cancellation completed


async def test_a_second_run_gets_a_pod_of_its_own(k8s_sandbox, cluster):
    first = await k8s_sandbox.run(TestJob("python", FileSet({"test_a.py": "def test_a():\n    assert True\n"})))
    second = await k8s_sandbox.run(TestJob("python", FileSet({"test_b.py": "def test_b():\n    assert True\n"})))
    assert [first.status, second.status] == [TestStatus.PASSED, TestStatus.PASSED]
    names = [pod["metadata"]["name"] for pod in cluster.created]
    assert len(set(names)) == 2


async def _spinning(cluster):
    """The Pod whose tests container is running the test command."""
    for _ in range(600):
        for (namespace, name), pod in cluster.pods.items():
            ran = [command for pod_name, container, command in cluster.execs
                   if pod_name == name and container == "tests" and "pytest" in " ".join(command)]
            if namespace == NAMESPACE and ran:
                await asyncio.sleep(0.5)  # pytest is collecting, then spinning
                return pod
        await asyncio.sleep(0.05)
    raise AssertionError("the test command never started")


async def _state(docker_id: str) -> dict:
    process = await asyncio.create_subprocess_exec("docker", "inspect", "--format", "{{json .State}}", docker_id,
                                                   stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    out, _ = await process.communicate()
    return json.loads(out) if process.returncode == 0 else {}
