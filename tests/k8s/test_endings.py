"""How Kubernetes ends a test Pod, each said in one sentence: OOMKilled, its activeDeadlineSeconds, a quota full."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from agents.errors import SandboxError
from agents.types import FileSet, TestJob, TestStatus
from bot.sandbox.kubernetes.sandbox import KubernetesSandbox
from tests.fakes.kubernetes_cluster import LoopbackCluster
from tests.k8s.conftest import NAMESPACE, kubernetes_config

pytestmark = pytest.mark.docker

MEMORY_BOMB = "def test_memory():\n    blocks = [bytearray(16 * 1024 * 1024) for _ in range(64)]\n    assert blocks\n"
ONE = "def test_one():\n    assert True\n"
SLEEPER = "import time\n\ndef test_sleep():\n    time.sleep(60)\n"


async def test_an_oom_killed_pod_says_so(cluster, tmp_path):
    async with KubernetesSandbox(kubernetes_config(cluster, tmp_path, memory_mb=128)) as sandbox:
        report = await sandbox.run(TestJob("python", FileSet({"test_memory.py": MEMORY_BOMB})))
    assert report.status is TestStatus.FAILED
    assert "[sandbox] killed for going over the 128 MB memory limit (Kubernetes: OOMKilled)" in report.stderr


async def test_a_pod_past_its_deadline_says_so(cluster, tmp_path):
    async with KubernetesSandbox(kubernetes_config(cluster, tmp_path)) as sandbox:
        running = asyncio.ensure_future(sandbox.run(TestJob("python", FileSet({"test_sleep.py": SLEEPER}))))
        name = await _first_pod(cluster)
        await asyncio.sleep(1.5)  # the test sleeps by then
        await cluster.expire(NAMESPACE, name)
        report = await running
    assert report.status is TestStatus.TIMEOUT
    assert "Kubernetes stopped the test Pod at its deadline (activeDeadlineSeconds" in report.stderr


async def test_a_pod_the_quota_refuses_for_too_long_says_so(docker_client, tmp_path):
    async with LoopbackCluster(memory_quota_mb=100) as cluster:
        config = kubernetes_config(cluster, tmp_path)
        config = dataclasses.replace(config, kubernetes=dataclasses.replace(config.kubernetes, pod_start_timeout_s=3.0))
        async with KubernetesSandbox(config) as sandbox:
            with pytest.raises(SandboxError) as refused:
                await sandbox.run(TestJob("python", FileSet({"test_one.py": ONE})))
        assert len(cluster.refused) >= 2 and not cluster.stored(NAMESPACE)  # tried again before giving up
    message = str(refused.value)
    assert message.startswith(f"the Kubernetes namespace '{NAMESPACE}' had no quota left for a test Pod for ")
    assert "exceeded quota: sandbox-quota" in message and "raise its ResourceQuota" in message


async def test_a_full_quota_is_waited_out_like_the_concurrency_cap(docker_client, tmp_path):
    # Room for one default Pod (320Mi: 256Mi of tests, 64Mi of the sandbox's own container), not two.
    async with LoopbackCluster(memory_quota_mb=600) as cluster:
        async with KubernetesSandbox(kubernetes_config(cluster, tmp_path, concurrency=2)) as sandbox:
            slow = "import time\n\ndef test_slow():\n    time.sleep(2)\n"
            reports = await asyncio.gather(sandbox.run(TestJob("python", FileSet({"test_slow.py": slow}))),
                                           sandbox.run(TestJob("python", FileSet({"test_slow.py": slow}))))
        assert cluster.refused, "the second Pod was refused at first"
    assert [report.status for report in reports] == [TestStatus.PASSED, TestStatus.PASSED], \
        [(report.stdout[-800:], report.stderr[-800:]) for report in reports]


async def _first_pod(cluster: LoopbackCluster) -> str:
    for _ in range(400):
        for (namespace, name), pod in cluster.pods.items():
            if namespace == NAMESPACE and pod.containers:
                return name
        await asyncio.sleep(0.05)
    raise AssertionError("no Pod started")


async def test_a_pod_past_its_deadline_while_its_files_go_in_says_so(cluster, tmp_path):
    # Kubernetes may end the Pod at any step, not only during the tests: the run is a timeout all the same.
    async def expire_at_the_upload(name, query):  # the kubelet's deadline comes as the files are unpacked
        if query.get("stdin", "").lower() == "true":
            await cluster.expire(NAMESPACE, name)

    cluster.on_exec = expire_at_the_upload
    async with KubernetesSandbox(kubernetes_config(cluster, tmp_path)) as sandbox:
        report = await sandbox.run(TestJob("python", FileSet({"test_one.py": ONE})))
    assert report.status is TestStatus.TIMEOUT
    assert report.stderr.startswith("[sandbox] Kubernetes stopped the test Pod at its deadline")


async def test_an_exec_rbac_refuses_says_which_right_is_missing(cluster, tmp_path):
    from aiohttp import web

    async def forbid(name, query):  # a Role without pods/exec: the API server answers the upgrade with 403
        raise web.HTTPForbidden(text='pods "x" is forbidden: User cannot create resource "pods/exec"')

    cluster.on_exec = forbid
    async with KubernetesSandbox(kubernetes_config(cluster, tmp_path)) as sandbox:
        with pytest.raises(SandboxError, match=r"Kubernetes refused pods/exec in namespace 'codegen-sandbox' \(403"):
            await sandbox.run(TestJob("python", FileSet({"test_one.py": ONE})))
        await sandbox.settle()
    assert cluster.stored(NAMESPACE) == {}
