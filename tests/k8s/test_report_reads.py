"""A runner's report is read back from the Pod through an exec like any other: a read the engine cuts short (a broken
stream, a command the runtime failed to start) is read again, and never taken for a runner that wrote no report,
which would fail tests that passed."""

from __future__ import annotations

import pytest

from agents.errors import SandboxError
from agents.types import FileSet, TestJob, TestStatus
from bot.sandbox.kubernetes.sandbox import KubernetesSandbox
from tests.k8s.conftest import kubernetes_config

pytestmark = pytest.mark.docker

ONE = "def test_one():\n    assert True\n"


def reads_report(command: list[str]) -> bool:
    return any("exec 4<>" in part for part in command)  # the read opens the channel a moment (judge.read_sealed)


async def test_a_report_read_cut_short_is_read_again_and_the_pass_stands(cluster, tmp_path):
    cut: list[list[str]] = []
    cluster.cut = lambda command: reads_report(command) and not cut and not cut.append(command)
    async with KubernetesSandbox(kubernetes_config(cluster, tmp_path)) as sandbox:
        report = await sandbox.run(TestJob("python", FileSet({"test_one.py": ONE})))
    assert cut, "the first read of the report was cut"
    assert report.status is TestStatus.PASSED and report.passed == 1, report.stderr
    assert sum(reads_report(command) for _, _, command in cluster.execs) == 2


async def test_a_report_no_read_gets_back_is_a_sandbox_failure_not_failed_tests(cluster, tmp_path):
    cluster.cut = reads_report
    async with KubernetesSandbox(kubernetes_config(cluster, tmp_path)) as sandbox:
        with pytest.raises(SandboxError, match="the test report could not be read back from the sandbox"):
            await sandbox.run(TestJob("python", FileSet({"test_one.py": ONE})))
