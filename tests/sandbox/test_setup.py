"""The dependency setup step against real Docker, without any package index."""

from __future__ import annotations

import dataclasses

import pytest

from agents.types import FileSet, TestJob, TestStatus
from bot.sandbox import DockerSandbox
from bot.sandbox.languages import DEFAULT_LANGUAGES
from tests.sandbox.conftest import configured

pytestmark = pytest.mark.docker

LOCAL_PACKAGE = {
    "requirements.txt": "./vendor/greeting\n",
    "vendor/greeting/pyproject.toml": '[build-system]\nrequires = ["setuptools"]\nbuild-backend = '
                                      '"setuptools.build_meta"\n\n[project]\nname = "greeting"\nversion = "1.0"\n',
    "vendor/greeting/greeting/__init__.py": "def hello(name):\n    return f'hello {name}'\n",
    "test_app.py": "import os\nimport greeting\n\ndef test_installed_package_is_used():\n"
                   "    assert greeting.hello('you') == 'hello you'\n"
                   "    assert greeting.__file__.startswith('/tmp/deps/')\n\n"
                   "def test_no_network_at_all():\n    assert os.listdir('/sys/class/net') == ['lo']\n",
}


async def test_local_package_is_installed_offline_before_the_tests(docker_client):
    async with DockerSandbox(configured(setup_network=False), client=docker_client) as sandbox:
        report = await sandbox.run(TestJob("python", FileSet(LOCAL_PACKAGE)))
    assert (report.status, report.passed, report.failed) == (TestStatus.PASSED, 2, 0), report.output()


async def test_setup_network_is_cut_before_the_tests(docker_client):
    """Setup sees a network interface when allowed; the tests after it see loopback only."""
    python = DEFAULT_LANGUAGES["python"]
    recorder = dataclasses.replace(python, setup_when=("deps.txt",),
                                   setup_command="ls /sys/class/net > /tmp/setup-net.txt; "
                                                 "echo $SANDBOX_NETWORK >> /tmp/setup-net.txt")
    files = FileSet({"deps.txt": "", "test_net.py": "import os\n\ndef test_net():\n"
                     "    assert open('/tmp/setup-net.txt').read().split() == ['eth0', 'lo', '1']\n"
                     "    assert os.listdir('/sys/class/net') == ['lo']\n"})
    config = configured(setup_network=True, languages={"python": recorder})
    async with DockerSandbox(config, client=docker_client) as sandbox:
        report = await sandbox.run(TestJob("python", files))
    assert (report.status, report.passed) == (TestStatus.PASSED, 1), report.output()


async def test_failed_setup_is_an_error_with_its_output(docker_client):
    files = FileSet({"requirements.txt": "surely-not-a-real-package-xyz==9.9\n",
                     "test_x.py": "def test_x():\n    pass\n"})
    async with DockerSandbox(configured(setup_network=False), client=docker_client) as sandbox:
        report = await sandbox.run(TestJob("python", files))
    assert report.status is TestStatus.ERROR
    assert "dependency setup failed" in report.stderr
    assert "surely-not-a-real-package-xyz" in report.stderr


async def test_no_setup_without_the_files_that_call_for_it(sandbox):
    files = FileSet({"test_x.py": "import os\n\ndef test_x():\n    assert not os.path.exists('/tmp/deps')\n"})
    report = await sandbox.run(TestJob("python", files))
    assert (report.status, report.passed) == (TestStatus.PASSED, 1), report.output()


async def test_setup_past_its_time_limit_is_an_error(docker_client):
    python = DEFAULT_LANGUAGES["python"]
    stuck = dataclasses.replace(python, setup_when=("deps.txt",), setup_command="sleep 600")
    config = configured(setup_network=True, setup_timeout_s=2, languages={"python": stuck})
    async with DockerSandbox(config, client=docker_client) as sandbox:
        report = await sandbox.run(TestJob("python", FileSet({"deps.txt": "", "test_x.py": "def test_x():\n    pass\n"})))
    assert report.status is TestStatus.ERROR
    assert "dependency setup timed out" in report.stderr
