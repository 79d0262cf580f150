"""Test jobs through the Kubernetes backend, end to end: the Pod is created through the API, the files go in and the
results come out through pods/exec, and the same result parsers count them."""

from __future__ import annotations

import pytest

from agents.types import FileSet, TestJob, TestStatus

pytestmark = pytest.mark.docker

CALC = "def add(a, b):\n    return a + b\n"
PASSING = "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n\ndef test_zero():\n    assert add(0, 0) == 0\n"
FAILING = "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 6\n\ndef test_zero():\n    assert add(0, 0) == 0\n"


async def test_a_passing_python_job_passes(k8s_sandbox, cluster):
    report = await k8s_sandbox.run(TestJob("python", FileSet({"calc.py": CALC, "test_calc.py": PASSING})))
    assert report.status is TestStatus.PASSED, report.stderr
    assert (report.passed, report.failed) == (2, 0)
    assert cluster.execs, "every command went through pods/exec"


async def test_a_failing_python_job_fails_with_its_output(k8s_sandbox):
    report = await k8s_sandbox.run(TestJob("python", FileSet({"calc.py": CALC, "test_calc.py": FAILING})))
    assert report.status is TestStatus.FAILED
    assert (report.passed, report.failed) == (1, 1)
    assert "assert 5 == 6" in report.stdout


async def test_the_users_tests_run_first_as_the_sandboxs_own_user(k8s_sandbox, cluster):
    # The user's file is unpacked by the judge container's user, the team's run in the tests container: both
    # passes run, in one Pod, and the tests container outlives the `kill -9 -1` between them.
    job = TestJob("python", FileSet({"calc.py": CALC, "test_user.py": PASSING,
                                     "test_team.py": "from calc import add\n\ndef test_team():\n    assert add(1, 1) == 2\n"}),
                  authoritative=("test_user.py",))
    report = await k8s_sandbox.run(job)
    assert report.status is TestStatus.PASSED, report.stderr
    assert (report.passed, report.failed) == (3, 0)
    containers = {container for _, container, _ in cluster.execs}
    assert containers == {"judge", "tests"}


async def test_the_work_dir_is_the_sandboxs_and_sticky_as_in_docker(k8s_sandbox):
    # What keeps the user's tests theirs (docs/sandbox.md, "Three users in one container"): /work and /tmp belong to
    # the sandbox's own user and are sticky, and the tests run as the commands' user, in a Pod as in a container.
    probe = ("import os, stat\n\n"
             "def test_owners():\n"
             "    work, tmp = os.stat('/work'), os.stat('/tmp')\n"
             "    assert (work.st_uid, os.getuid()) == (65533, 65534)\n"
             "    assert work.st_mode & stat.S_ISVTX and tmp.st_mode & stat.S_ISVTX\n"
             "    assert not os.access('/', os.W_OK) and not os.access('/usr', os.W_OK)\n")
    report = await k8s_sandbox.run(TestJob("python", FileSet({"test_owners.py": probe})))
    assert report.status is TestStatus.PASSED, report.stdout + report.stderr


async def test_a_test_past_the_time_limit_is_killed_and_its_pod_deleted(cluster, tmp_path):
    from bot.sandbox.kubernetes.sandbox import KubernetesSandbox
    from tests.k8s.conftest import NAMESPACE, kubernetes_config

    sleeper = "import time\n\ndef test_sleep():\n    time.sleep(60)\n"
    async with KubernetesSandbox(kubernetes_config(cluster, tmp_path, timeout_s=3.0)) as sandbox:
        report = await sandbox.run(TestJob("python", FileSet({"test_sleep.py": sleeper})))
        await sandbox.settle()
    assert report.status is TestStatus.TIMEOUT
    assert "time limit" in report.stderr
    assert cluster.stored(NAMESPACE) == {}
