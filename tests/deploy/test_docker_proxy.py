"""The Docker socket proxy of deploy/compose.yaml (deploy/docker-proxy), built from the offline base and
run in front of the host's engine: the sandbox works through it, and whatever else a client asks for
is refused with 403, however it is spelled."""

from __future__ import annotations

import dataclasses
import subprocess
import time
import uuid
from pathlib import Path

import docker
import pytest
from docker.errors import APIError

from agents.types import TestJob
from bot.sandbox import DockerSandbox
from bot.sandbox.hardening import LABEL
from tests.docker_support import TEST_CONFIG

ROOT = Path(__file__).resolve().parents[2]
IMAGE = "codegen-chat-docker-proxy:test"
SOCKET = "/var/run/docker.sock"

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def proxy(docker_client) -> str:
    """The proxy listening on a loopback port of the host, in front of the host's engine."""
    built = subprocess.run(["docker", "build", "-q", "--build-arg", "BASE=codegen-chat-sandbox/base:bookworm",
                            "-t", IMAGE, str(ROOT / "deploy" / "docker-proxy")], capture_output=True, text=True,
                           timeout=900)
    assert built.returncode == 0, built.stderr[-3000:]
    name = f"codegen-proxy-{uuid.uuid4().hex[:8]}"
    started = subprocess.run(["docker", "run", "-d", "--name", name, "--read-only", "--cap-drop", "ALL",
                              "-p", "127.0.0.1::2375", "-v", f"{SOCKET}:{SOCKET}", IMAGE],
                             capture_output=True, text=True)
    assert started.returncode == 0, started.stderr
    try:
        port = subprocess.run(["docker", "port", name, "2375/tcp"], capture_output=True, text=True,
                              check=True).stdout.split(":")[-1].strip()
        _wait_until_it_answers(port)
        yield f"tcp://127.0.0.1:{port}"
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True)


def _wait_until_it_answers(port: str) -> None:
    import requests

    for _ in range(100):
        try:
            if requests.get(f"http://127.0.0.1:{port}/_ping", timeout=2).ok:
                return
        except requests.RequestException:
            pass
        time.sleep(0.1)
    raise AssertionError("the proxy did not start answering")


@pytest.fixture
def through(proxy):
    client = docker.DockerClient(base_url=proxy, timeout=30)
    yield client
    client.close()


async def test_the_sandbox_runs_through_the_proxy(proxy):
    config = dataclasses.replace(TEST_CONFIG, docker_host=proxy, setup_network=True)
    files = {
        "big.py": "DATA = " + repr("x" * 150_000) + "\n",  # more than one upload chunk: several exec bodies
        "requirements.txt": "",  # a dependency setup step: network on, then cut (the disconnect call)
        "test_quotes.py": 'from big import DATA\n\ndef test_it():\n    assert len(DATA) == 150_000\n'
                          '    assert "a\\"b\\\\c" == \'a"b\\\\c\'  # quotes and backslashes ride in the exec body\n',
    }
    async with DockerSandbox(config) as sandbox:
        report = await sandbox.run(TestJob("python", files))
    assert report.ok and report.passed == 1, report.stdout + report.stderr


def _create(client: docker.DockerClient, **options) -> int:
    """The status the proxy answers a container create with (the container, if any, is removed)."""
    settings = {"image": "codegen-chat-sandbox/base:bookworm", "command": ["true"], "user": "65534:65534",
                "labels": {LABEL: "1"}, "network_mode": "none", **options}
    try:
        container = client.containers.create(**settings)
    except APIError as error:
        return error.status_code or 0
    docker.from_env().containers.get(container.id).remove(force=True)
    return 201


def test_a_container_like_the_sandbox_s_is_allowed(through):
    assert _create(through) == 201


@pytest.mark.parametrize("options", [
    {"privileged": True},
    {"volumes": ["/:/host"]},  # a host path
    {"mounts": [docker.types.Mount("/host", "/", type="bind")]},
    {"devices": ["/dev/sda:/dev/sda"]},
    {"cap_add": ["SYS_ADMIN"]},
    {"network_mode": "host"},
    {"pid_mode": "host"},
    {"ipc_mode": "host"},
    {"userns_mode": "host"},
    {"security_opt": ["seccomp=unconfined"]},
    {"security_opt": ["apparmor=unconfined"]},
    {"user": "root"},
    {"user": "0:0"},
    {"user": ""},  # the image's default user: root
], ids=lambda o: next(iter(o)) + "=" + str(next(iter(o.values())))[:20])
def test_a_container_asking_for_more_is_refused(through, options):
    assert _create(through, **options) == 403


def test_a_spelling_trick_is_refused(proxy):
    """Docker reads keys in any case, and a JSON escape would hide one from a pattern: both are refused."""
    import requests

    base = proxy.replace("tcp://", "http://")
    for body in ('{"Image": "codegen-chat-sandbox/base:bookworm", "User": "65534", "HostConfig": {"PRIVILEGED": true}}',
                 '{"Image": "codegen-chat-sandbox/base:bookworm", "User": "65534", "HostConfig": {"Privil\\u0065ged": true}}',
                 '{"Image": "codegen-chat-sandbox/base:bookworm", "User": "65534", "User": "0"}'):
        response = requests.post(f"{base}/v1.41/containers/create", data=body,
                                 headers={"Content-Type": "application/json"}, timeout=10)
        assert response.status_code == 403, body


def test_an_exec_asking_for_privileges_is_refused(through, docker_client):
    container = through.containers.create("codegen-chat-sandbox/base:bookworm", ["sleep", "60"], user="65534:65534",
                                          labels={LABEL: "1"}, network_mode="none")
    try:
        container.start()
        assert through.api.exec_create(container.id, ["id"], user="65534:65534")["Id"]  # what the sandbox does
        for options in ({"privileged": True, "user": "65534:65534"}, {"user": "root"}, {"user": "0"}, {"user": "0:0"}):
            with pytest.raises(APIError) as refused:
                through.api.exec_create(container.id, ["id"], **options)
            assert refused.value.status_code == 403
    finally:
        docker_client.containers.get(container.id).remove(force=True)


@pytest.mark.parametrize("call", [
    lambda c: c.info(),
    lambda c: c.images.pull("codegen-chat-sandbox/base", tag="bookworm"),
    lambda c: c.images.build(fileobj=__import__("io").BytesIO(b"FROM scratch\n"), tag="x"),
    lambda c: c.images.list(),
    lambda c: c.volumes.list(),
    lambda c: c.networks.create("codegen-proxy-test"),  # a network that reaches out
    lambda c: c.networks.create("codegen-proxy-test", driver="macvlan", internal=True),  # onto the host's LAN
    lambda c: c.api.get_archive("anything", "/etc/passwd"),
    lambda c: c.api.put_archive("anything", "/", b""),
    lambda c: c.api.update_container("anything", mem_limit="1g"),
    lambda c: c.api.commit("anything"),
], ids=["info", "pull", "build", "images", "volumes", "open-network", "macvlan", "copy-out", "copy-in", "update",
        "commit"])
def test_every_other_call_is_refused(through, call):
    with pytest.raises(APIError) as refused:
        call(through)
    assert refused.value.status_code == 403
