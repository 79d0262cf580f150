"""The garbage sweep: at the start (and now and then), the Pods of runs that are not running go, and finished ones;
a running run's Pods (another replica's) stay, and so does anything that is not the sandbox's. kmock ignores label
selectors, so the Pod of another app is listed too: the sweep must still leave it alone."""

from __future__ import annotations

import pytest

from bot.sandbox.kubernetes.sandbox import KubernetesSandbox
from tests.k8s.conftest import NAMESPACE, kubernetes_config

pytestmark = pytest.mark.docker

SANDBOX = {"codegen-chat.sandbox": "1"}


async def test_the_sweep_deletes_only_the_pods_no_run_needs(cluster, tmp_path):
    cluster.add_pod(NAMESPACE, "running-run", {**SANDBOX, "codegen-chat.run": "aaaa0001"})
    cluster.add_pod(NAMESPACE, "finished-run", {**SANDBOX, "codegen-chat.run": "bbbb0002"})
    cluster.add_pod(NAMESPACE, "unknown-run", {**SANDBOX, "codegen-chat.run": "cccc0003"})
    cluster.add_pod(NAMESPACE, "no-run-running", SANDBOX)
    cluster.add_pod(NAMESPACE, "no-run-failed", SANDBOX, phase="Failed")
    cluster.add_pod(NAMESPACE, "running-run-succeeded", {**SANDBOX, "codegen-chat.run": "aaaa0001"},
                    phase="Succeeded")
    cluster.add_pod(NAMESPACE, "another-app", {"app": "web", "codegen-chat.run": "bbbb0002"}, phase="Failed")
    cluster.add_pod("elsewhere", "other-namespace", {**SANDBOX, "codegen-chat.run": "bbbb0002"})
    asked: list[str] = []

    async def running(run_id: str) -> bool:  # the store's answer: only aaaa0001 is running
        asked.append(run_id)
        return run_id == "aaaa0001"

    async with KubernetesSandbox(kubernetes_config(cluster, tmp_path), running=running):
        pass  # the start sweeps
    assert set(cluster.stored(NAMESPACE)) == {"running-run", "no-run-running", "another-app"}
    assert set(cluster.stored("elsewhere")) == {"other-namespace"}
    assert {"aaaa0001", "bbbb0002", "cccc0003"} <= set(asked)


async def test_without_the_store_only_finished_pods_go(cluster, tmp_path):
    cluster.add_pod(NAMESPACE, "some-run", {**SANDBOX, "codegen-chat.run": "bbbb0002"})
    cluster.add_pod(NAMESPACE, "done", {**SANDBOX, "codegen-chat.run": "bbbb0002"}, phase="Succeeded")
    async with KubernetesSandbox(kubernetes_config(cluster, tmp_path)):
        pass
    assert set(cluster.stored(NAMESPACE)) == {"some-run"}


async def test_the_sweep_never_deletes_a_pod_this_process_uses(cluster, tmp_path):
    import asyncio

    from agents.types import FileSet, TestJob, TestStatus
    from bot.process.logs import log_context

    async def running(run_id: str) -> bool:
        return False  # the store says no run is running: still, the Pod under a run here is in use

    async with KubernetesSandbox(kubernetes_config(cluster, tmp_path), running=running) as sandbox:
        with log_context(run_id="dddd0004"):
            job = TestJob("python", FileSet({"test_one.py": "import time\n\ndef test_one():\n    time.sleep(2)\n"}))
            testing = asyncio.ensure_future(sandbox.run(job))
            for _ in range(200):
                if cluster.stored(NAMESPACE):
                    break
                await asyncio.sleep(0.05)
            assert await sandbox.sweep() == []
            report = await testing
    assert report.status is TestStatus.PASSED, report.stderr
