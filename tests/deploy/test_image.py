"""The container image, built as a user builds it (``deploy/build-image.sh --offline``: from the offline
base, no registry) and run as a user runs it: ``doctor`` and one scripted run inside it, and ``serve``
with its HEALTHCHECK passing.

The bot inside needs a model and a Docker engine. The scripted model server listens on the host's
loopback and the container shares the host's network (``--network host``) to reach it. For the engine
the tests pass the host's Docker socket in: that is the simplest engine a test machine has, not the
setup the README recommends for production (a separate engine or a socket proxy).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from bot.sandbox.hardening import LABEL, LABEL_HOST
from tests.fakes import team_script as s
from tests.fakes.loopback import free_port
from tests.fakes.slack_api import BOT_TOKEN, SIGNING_SECRET, FakeSlack

ROOT = Path(__file__).resolve().parents[2]
SOCKET = "/var/run/docker.sock"
API_KEY = "sk-test-0123456789abcdef"
# One tag per checkout: parallel checkouts never run each other's image, and rebuilds reuse the cache.
IMAGE = f"codegen-chat-test:{hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]}"

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def image(docker_client) -> str:
    if not os.path.exists(SOCKET):
        pytest.fail(f"the image tests hand the bot the host's engine at {SOCKET}, which is missing")
    built = subprocess.run(["bash", str(ROOT / "deploy" / "build-image.sh"), "--offline", "--tag", IMAGE],
                           cwd=ROOT, capture_output=True, text=True, timeout=1200,
                           env={**os.environ, "PYTHON": sys.executable})  # this Python's pip makes the wheels
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return IMAGE


DOCKER_CALL_S = 240  # the longest a docker command here may take (a scripted run in a container)


async def docker(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec("docker", *args, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), DOCKER_CALL_S)
    return proc.returncode or 0, out.decode(), err.decode()


def engine_args() -> list[str]:
    """The host's engine, for the sandbox inside the bot's container (tests only; see the module doc)."""
    return ["-v", f"{SOCKET}:{SOCKET}", "--group-add", str(os.stat(SOCKET).st_gid)]


def script_team(server) -> None:
    for role, replies in s.happy_path().items():
        server.script(role, *replies)


@pytest.fixture
def volume():
    name = f"codegen-test-{uuid.uuid4().hex[:12]}"
    yield name
    subprocess.run(["docker", "volume", "rm", "-f", name], capture_output=True)


def sandboxes_of(docker_client, hostname: str) -> list:
    return docker_client.containers.list(all=True, sparse=True,
                                         filters={"label": [f"{LABEL}=1", f"{LABEL_HOST}={hostname}"]})


async def test_doctor_and_a_scripted_run_inside_the_image(image, model_server, volume, docker_client):
    hostname = f"codegen-{uuid.uuid4().hex[:8]}"
    common = ["run", "--rm", "--network", "host", "--hostname", hostname, "-v", f"{volume}:/data",
              *engine_args(), "-e", f"OPENAI_BASE_URL={model_server.base_url}", "-e", f"OPENAI_API_KEY={API_KEY}",
              "-e", "CODEGEN_SANDBOX_OFFLINE=1", image]

    code, out, err = await docker(*common, "doctor")
    assert code == 0, out + err
    assert "[ok  ] config: read from /etc/codegen-chat/config.toml" in out
    assert "[ok  ] model gpt-4o-mini: available" in out
    assert "[ok  ] docker: engine" in out and "[ok  ] sandbox image: python:" in out
    assert "All required checks passed." in out

    script_team(model_server)
    code, out, err = await docker(*common, "run", "find all intf keys", "--out", "/data/result")
    assert code == 0, out + err
    assert "Tests (python): 2 passed, 0 failed" in out  # pytest really ran, in a sandbox the bot started
    assert "PASSED — tests passed and the review approved" in out
    assert API_KEY not in out + err
    assert sandboxes_of(docker_client, hostname) == []  # the bot removed its test container

    code, out, err = await docker(*common, "history")
    assert code == 0 and "passed" in out and "find all intf keys" in out  # the store lives on the volume
    code, out, err = await docker("run", "--rm", "-v", f"{volume}:/data", "--entrypoint", "cat", image,
                                  "/data/result/intf.py")
    assert code == 0 and "def find_intf" in out


async def test_the_serving_container_passes_its_health_check(image, model_server, tmp_path, docker_client):
    async with FakeSlack() as slack:
        health_port, slack_port = free_port(), free_port()
        config = tmp_path / "config.toml"
        config.write_text(
            f'[storage]\npath = "/data/codegen.sqlite3"\n'
            f'[runtime]\nhealth_host = "127.0.0.1"\nhealth_port = {health_port}\n'
            f'[slack]\nenabled = true\nmode = "http"\napi_url = "{slack.api_url}"\n'
            f'http_host = "127.0.0.1"\nhttp_port = {slack_port}\n')
        config.chmod(0o644)
        name = f"codegen-serve-{uuid.uuid4().hex[:8]}"
        code, out, err = await docker(
            "run", "-d", "--name", name, "--network", "host", *engine_args(),
            "-v", f"{config}:/etc/codegen-chat/config.toml:ro",
            "-e", f"OPENAI_BASE_URL={model_server.base_url}", "-e", f"OPENAI_API_KEY={API_KEY}",
            "-e", f"SLACK_BOT_TOKEN={BOT_TOKEN}", "-e", f"SLACK_SIGNING_SECRET={SIGNING_SECRET}",
            # The image's own check, run every second instead of every 30 s so the test need not wait.
            "--health-interval", "1s", "--health-start-period", "60s", image)
        assert code == 0, err
        try:
            status = await _health(name)
            _, logs, log_err = await docker("logs", name)
            assert status["Status"] == "healthy", (status, logs + log_err)
            last = status["Log"][-1]
            assert last["ExitCode"] == 0 and json.loads(last["Output"])["ready"] is True
            assert model_server.requests == []  # health probes never call the model
        finally:
            await docker("rm", "-f", name)


async def _health(name: str) -> dict:
    """The container's health once it has one verdict beyond "starting" (or the container has stopped)."""
    for _ in range(240):
        _, out, _ = await docker("inspect", "--format", "{{json .State}}", name)
        state = json.loads(out)
        if state.get("Health", {}).get("Status") not in (None, "starting") or not state.get("Running"):
            return state.get("Health") or {"Status": "none", "Log": [], "State": state}
        await asyncio.sleep(0.5)
    return state.get("Health", {})

