"""The hardened suite's hostile cases again under gVisor (``[sandbox] runtime = "runsc"``): the same contained
endings with the same clear statuses, though gVisor's kernel of its own kills a whole sandbox where runc kills
one process. Needs runsc registered with the engine; ``CODEGEN_REQUIRE_RUNSC=1`` (CI) makes its absence fail."""

from __future__ import annotations

import os

import pytest

from agents.errors import SandboxError
from agents.types import FileSet, TestJob, TestStatus
from bot.sandbox import DockerSandbox
from tests.sandbox.conftest import configured

pytestmark = pytest.mark.docker
REQUIRE_ENV = "CODEGEN_REQUIRE_RUNSC"



@pytest.fixture
async def gvisor(docker_client):
    runtimes = docker_client.info().get("Runtimes") or {}
    if "runsc" not in runtimes:
        reason = "the Docker engine has no runsc runtime (Debian's runsc, registered in /etc/docker/daemon.json)"
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{reason} ({REQUIRE_ENV}=1: the gVisor tests must run here)", pytrace=False)
        pytest.skip(reason)
    async with DockerSandbox(configured(runtime="runsc", pids_limit=64), client=docker_client) as box:
        yield box


def python_job(body: str, timeout_s: float | None = None) -> TestJob:
    return TestJob("python", FileSet({"test_hostile.py": body}), timeout_s)


async def test_tests_run_in_gvisors_kernel_and_are_counted(gvisor):
    report = await gvisor.run(python_job('''
import platform, os

def test_kernel_is_gvisors():
    assert "gvisor" in open("/proc/version").read().lower() or platform.release() == "4.4.0"

def test_unprivileged():
    assert os.getuid() == 65534
'''))
    assert (report.status, report.passed, report.failed) == (TestStatus.PASSED, 2, 0), report.output()


async def test_no_network_under_gvisor(gvisor):
    report = await gvisor.run(python_job('''
import socket, pytest

def test_cannot_connect_out():
    with pytest.raises(OSError):
        socket.create_connection(("1.1.1.1", 53), timeout=3)
'''))
    assert (report.status, report.passed) == (TestStatus.PASSED, 1), report.output()


# In the whole suite (not alone) runsc 20221219 has been seen to have the engine report the killed exec and then
# refuse the next one (409: the sandbox had ended) without marking the container OOMKilled in time; the run then ends
# with the runtime's own sentence instead of the memory limit's. Kept non-strict until a newer runsc is in CI.
@pytest.mark.xfail(strict=False, reason="runsc 20221219 under a full suite: the sandbox's end reported late (409)")
async def test_memory_bomb_under_gvisor_is_killed_with_the_same_status(gvisor):
    """gVisor ends the whole sandbox at the memory limit (Docker: OOMKilled), runc one process: the same status."""
    report = await gvisor.run(python_job('''
def test_eat_memory():
    hoard = []
    while True:
        hoard.append(b"\\x01" * (32 << 20))
'''))
    assert report.status is TestStatus.FAILED, report.output()
    assert (report.exit_code, report.passed) == (137, 0), report.output()
    assert f"killed (exit 137): most often the {configured().memory_mb} MB memory limit" in report.stderr, report.output()


# It passes here, but runsc 20221219 then takes minutes to let the engine remove the bombed sandbox, and the engine
# calls of the tests after it hang meanwhile: run it alone (`-k fork_bomb`) until a newer runsc is in CI.
@pytest.mark.skip(reason="runsc 20221219 holds the engine for minutes removing a fork-bombed sandbox")
async def test_fork_bomb_under_gvisor_is_contained(gvisor):
    bomb = await gvisor.run(TestJob("bash", FileSet({"test_bomb.sh": ":(){ :|:& };:\nsleep 60\n"}), 8))
    assert bomb.status in (TestStatus.TIMEOUT, TestStatus.FAILED), bomb.output()


@pytest.mark.xfail(raises=SandboxError, strict=False,
                   reason="on a loaded machine runsc 20221219 has been seen to end the sandbox before the kill")
async def test_an_endless_test_under_gvisor_times_out(gvisor):
    report = await gvisor.run(python_job("def test_spin():\n    while True:\n        pass\n", timeout_s=3))
    assert report.status is TestStatus.TIMEOUT and "time limit" in report.stderr


async def test_a_runtime_the_engine_lacks_is_one_sentence(docker_client):
    box = DockerSandbox(configured(runtime="no-such-runtime"), client=docker_client)
    try:
        with pytest.raises(SandboxError, match="the Docker engine has no runtime 'no-such-runtime'"):
            await box.ready()
    finally:
        await box.close()


async def test_a_run_the_runtime_ends_is_one_sentence(gvisor):
    """Whatever ends the container under runsc mid-run is named as the runtime's doing, not the engine's."""
    try:
        report = await gvisor.run(python_job("def test_ok():\n    pass\n"))
    except SandboxError as error:
        assert "the container runtime 'runsc' ended the sandbox's container" in str(error)
    else:
        assert report.status is TestStatus.PASSED, report.output()
