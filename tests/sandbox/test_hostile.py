"""Hostile code against real Docker: each attempt ends contained, with a clear status."""

from __future__ import annotations

import pytest

from agents.types import FileSet, TestJob, TestStatus
from bot.sandbox import DockerSandbox
from tests.docker_support import our_containers
from tests.sandbox.conftest import configured

pytestmark = pytest.mark.docker

FAKE_SECRET = "sk-fake-host-secret-9f8e7d6c5b4a"


def python_job(test_body: str, timeout_s: float | None = None) -> TestJob:
    return TestJob("python", FileSet({"test_hostile.py": test_body}), timeout_s)


async def test_network_is_unreachable(sandbox):
    report = await sandbox.run(python_job('''
import os, socket, pytest

def test_only_loopback_interface():
    assert sorted(os.listdir("/sys/class/net")) == ["lo"]

def test_cannot_connect_out():
    for address in [("1.1.1.1", 53), ("172.17.0.1", 2375), ("deb.debian.org", 80)]:
        with pytest.raises(OSError):
            socket.create_connection(address, timeout=3)
'''))
    assert (report.status, report.passed, report.failed) == (TestStatus.PASSED, 2, 0), report.output()


async def test_fork_bomb_is_capped_and_killed(docker_client):
    config = configured(pids_limit=64)
    async with DockerSandbox(config, client=docker_client) as sandbox:
        counted = await sandbox.run(python_job('''
import os, time

def test_forks_stop_at_the_pid_limit():
    children = 0
    try:
        while True:
            if os.fork() == 0:
                time.sleep(30)
                os._exit(0)
            children += 1
    except OSError:
        pass
    assert children < 64
'''))
        bomb = await sandbox.run(TestJob("bash", FileSet({"test_bomb.sh": ":(){ :|:& };:\nsleep 60\n"}), 8))
    assert (counted.status, counted.passed) == (TestStatus.PASSED, 1), counted.output()
    # Contained either way: killed at its time limit, or failed once bash gave up forking at the pid limit.
    assert bomb.status in (TestStatus.TIMEOUT, TestStatus.FAILED), bomb.output()


async def test_memory_bomb_is_killed_at_the_limit(sandbox):
    report = await sandbox.run(python_job('''
def test_eat_memory():
    hoard = []
    while True:
        hoard.append(b"\\x01" * (32 << 20))
'''))
    assert report.status is TestStatus.FAILED
    assert report.exit_code == 137
    assert "memory limit" in report.stderr


async def test_infinite_loop_times_out(sandbox):
    report = await sandbox.run(python_job("def test_spin():\n    while True:\n        pass\n", timeout_s=3))
    assert report.status is TestStatus.TIMEOUT
    assert report.exit_code is None
    assert "time limit" in report.stderr


async def test_sleeper_ignoring_sigterm_is_killed(sandbox):
    report = await sandbox.run(python_job('''
import signal, time

def test_sleep_through_sigterm():
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(3600)
''', timeout_s=3))
    assert report.status is TestStatus.TIMEOUT


async def test_100_mb_of_output_is_capped(sandbox, sandbox_config):
    flood = "head -c 104857600 /dev/zero | tr '\\0' 'x'\necho\necho done flooding\n"
    report = await sandbox.run(TestJob("bash", FileSet({"test_flood.sh": flood})))
    assert (report.status, report.passed) == (TestStatus.PASSED, 1)
    assert report.truncated
    assert len(report.stdout) < sandbox_config.max_output_bytes + 200
    assert "done flooding" in report.stdout  # the tail is kept: the runner's summary survives


async def test_writes_outside_the_work_dir_fail(sandbox):
    report = await sandbox.run(python_job('''
import os, pytest

@pytest.mark.parametrize("path", ["/pwned", "/etc/pwned", "/usr/pwned", "/root/pwned", "/var/pwned",
                                  "/home/pwned", "/opt/pwned"])
def test_cannot_write(path):
    with pytest.raises(OSError):
        open(path, "w").write("x")

def test_work_dir_is_writable():
    open("scratch.txt", "w").write("ok")
    assert open("scratch.txt").read() == "ok"
'''))
    assert (report.status, report.passed, report.failed) == (TestStatus.PASSED, 8, 0), report.output()


async def test_host_environment_is_not_visible(sandbox, monkeypatch):
    monkeypatch.setenv("CODEGEN_FAKE_SECRET", FAKE_SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_SECRET)
    report = await sandbox.run(python_job(f'''
import os

def test_no_host_secret():
    print(dict(os.environ))
    assert "CODEGEN_FAKE_SECRET" not in os.environ
    assert "OPENAI_API_KEY" not in os.environ
    for pid in ("1", "self"):
        try:
            environ = open("/proc/" + pid + "/environ", "rb").read()
        except PermissionError:  # the keeper (pid 1's child) and init run as another user
            environ = b""
        assert "{FAKE_SECRET}".encode() not in environ
'''.replace("{FAKE_SECRET}", FAKE_SECRET[:6] + '" "' + FAKE_SECRET[6:])))
    assert (report.status, report.passed) == (TestStatus.PASSED, 1), report.output()
    assert FAKE_SECRET not in report.stdout + report.stderr


async def test_no_docker_socket_inside(sandbox):
    report = await sandbox.run(python_job('''
import os, stat

def test_no_docker_socket_anywhere():
    found = []
    for root, dirs, files in os.walk("/"):
        if root == "/" :
            dirs[:] = [d for d in dirs if d not in ("proc", "sys")]
        for name in files:
            path = os.path.join(root, name)
            try:
                if name.endswith(".sock") or stat.S_ISSOCK(os.lstat(path).st_mode):
                    found.append(path)
            except OSError:
                pass
    assert found == []
    assert "DOCKER_HOST" not in os.environ
'''))
    assert (report.status, report.passed) == (TestStatus.PASSED, 1), report.output()


async def test_process_is_unprivileged(sandbox):
    report = await sandbox.run(python_job('''
import os

def status():
    return dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())

def test_not_root():
    assert os.getuid() == 65534 and os.getgid() == 65534

def test_no_capabilities_and_no_new_privileges():
    assert int(status()["CapEff"], 16) == 0 and int(status()["CapBnd"], 16) == 0
    assert status()["NoNewPrivs"].strip() == "1"

def test_root_is_read_only():
    assert os.statvfs("/").f_flag & os.ST_RDONLY
'''))
    assert (report.status, report.passed, report.failed) == (TestStatus.PASSED, 3, 0), report.output()


async def test_background_process_holding_the_output_does_not_stall_the_run(sandbox):
    """The test exits but leaves a child with its stdout open: the run ends as passed, not as a timeout."""
    files = FileSet({"test_bg.sh": "sleep 300 &\necho started a lingering child\n"})
    report = await sandbox.run(TestJob("bash", files, timeout_s=60))
    assert (report.status, report.passed) == (TestStatus.PASSED, 1), report.output()


def test_no_sandbox_container_is_left(docker_client):
    """Runs last in this module: the whole hostile suite left nothing behind."""
    assert our_containers(docker_client) == []
