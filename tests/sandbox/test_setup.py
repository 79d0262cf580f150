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
    "vendor/greeting/pyproject.toml": '[build-system]\nrequires = ["setuptools"]\nbuild-backend = '
                                      '"setuptools.build_meta"\n\n[project]\nname = "greeting"\nversion = "1.0"\n',
    "vendor/greeting/setup.py": "open('/tmp/setup-ran', 'w').write('built')\n",
    "vendor/greeting/greeting/__init__.py": "def hello(name):\n    return f'hello {name}'\n",
    "greeting-1.0.tar.gz": "not really an archive\n",
    "test_app.py": "import os\n\ndef test_nothing_was_built():\n    assert not os.path.exists('/tmp/setup-ran')\n",
}
LOCAL_SPELLINGS = ["./vendor/greeting", "vendor/greeting/", "-e ./vendor/greeting", "-e .", ".",
                   "greeting @ file:///work/vendor/greeting", "file:///work/vendor/greeting",
                   "greeting-1.0.tar.gz", "--index-url http://10.0.0.1/simple\ngreeting",
                   "-i http://10.0.0.1/simple greeting", "--extra-index-url=http://x/simple\nrequests",
                   "--find-links vendor\ngreeting", "-r more.txt", "git+https://example.com/greeting.git",
                   "greeting @ https://example.com/greeting-1.0.tar.gz"]


@pytest.mark.parametrize("requirement", LOCAL_SPELLINGS)
async def test_setup_never_builds_or_installs_files_of_the_work_dir(docker_client, requirement):
    files = FileSet({**LOCAL_PACKAGE, "requirements.txt": requirement + "\n", "more.txt": "./vendor/greeting\n"})
    async with DockerSandbox(configured(setup_network=False), client=docker_client) as sandbox:
        report = await sandbox.run(TestJob("python", files))
    assert report.status is TestStatus.FAILED, report.output()
    assert "requirements.txt: line " in report.stderr and "only packages from the registries" in report.stderr


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
