"""What the dependency setup can reach: registries through the proxy, and nothing else.

The proxy's decisions are tested as a unit and through its server on loopback; the network facts
(no way to the host, the gateway, the Docker bridge, another container or the internet, no DNS, the
proxy refusing what is not allowed) are tested from inside a real setup step on Docker.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import os
import socket
import threading

import pytest

from agents.types import FileSet, TestJob, TestStatus
from bot.sandbox import DockerSandbox
from bot.sandbox.egress_proxy import forwarded, refusal, serve
from bot.sandbox.hardening import LABEL, LABEL_PID
from bot.sandbox.languages import DEFAULT_LANGUAGES
from tests.sandbox.conftest import configured

ALLOWED = ["pypi.org", "files.pythonhosted.org", "localhost"]
DOCKER = [ipaddress.ip_network("172.17.0.0/16")]
PUBLIC = ["151.101.0.223"]


@pytest.mark.parametrize(("host", "port", "addresses", "said"), [
    ("10.0.0.5", 443, ["10.0.0.5"], "raw IP"),
    ("[::1]", 443, ["::1"], "raw IP"),
    ("151.101.0.223", 443, PUBLIC, "raw IP"),
    ("example.org", 443, PUBLIC, "not an allowed package registry"),
    ("pypi.org.evil.com", 443, PUBLIC, "not an allowed package registry"),
    ("pypi.org", 22, PUBLIC, "only port 443"),
    ("pypi.org", 443, [], "does not resolve"),
    ("pypi.org", 443, ["127.0.0.1"], "not a public address"),
    ("pypi.org", 443, ["192.168.1.10"], "not a public address"),
    ("pypi.org", 443, ["10.1.2.3"], "not a public address"),
    ("pypi.org", 443, ["169.254.169.254"], "not a public address"),  # cloud metadata
    ("pypi.org", 443, ["100.64.0.1"], "not a public address"),  # CGNAT
    ("pypi.org", 443, ["224.0.0.1"], "not a public address"),
    ("pypi.org", 443, ["0.0.0.0"], "not a public address"),
    ("pypi.org", 443, ["172.17.0.1"], "inside a Docker network"),
    ("pypi.org", 443, ["fe80::1"], "not a public address"),
    ("pypi.org", 443, ["fd00::1"], "not a public address"),
    ("pypi.org", 443, ["::ffff:127.0.0.1"], "not a public address"),
    ("pypi.org", 443, ["2002:c0a8:0101::1"], "not a public address"),  # 6to4 around 192.168.1.1
    ("pypi.org", 443, [*PUBLIC, "10.0.0.1"], "not a public address"),  # one bad answer spoils the name
])
def test_the_proxy_refuses_everything_but_registry_names_on_public_addresses(host, port, addresses, said):
    assert said in refusal(host, port, addresses, ALLOWED, DOCKER)


@pytest.mark.parametrize("host", ["pypi.org", "PyPI.org.", "files.pythonhosted.org"])
def test_allowed_names_on_public_addresses_pass(host):
    assert refusal(host, 443, [*PUBLIC, "2a04:4e42::223"], ALLOWED, DOCKER) == ""
    assert refusal(host, 80, PUBLIC, ALLOWED, DOCKER, kind="HTTP") == ""



def test_a_plain_http_request_leaves_with_the_host_that_was_checked():
    """A Host naming another site on the registry's CDN would reach that site from the registry's address."""
    rest = b"Host: attacker.example\r\nhost : other.example\r\nProxy-Authorization: x\r\nAccept: */*\r\n\r\n"
    sent = forwarded("GET", "pypi.org", "simple/x/", rest)
    assert sent.split(b"\r\n")[:3] == [b"GET /simple/x/ HTTP/1.1", b"Host: pypi.org", b"Accept: */*"]
    assert b"example" not in sent and b"Proxy-" not in sent and sent.endswith(b"Connection: close\r\n\r\n")

@pytest.fixture
def proxy():
    server = serve({"allowed": ALLOWED, "blocked": ["172.17.0.0/16"], "clients": "127.0.0.0/8"}, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def ask(port: int, request: bytes) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(request)
        answer = b""
        while chunk := connection.recv(4096):
            answer += chunk
    return answer.decode()


@pytest.mark.parametrize(("request_", "status", "said"), [
    (b"CONNECT example.org:443 HTTP/1.1\r\nHost: example.org\r\n\r\n", "403", "not an allowed"),
    (b"CONNECT localhost:443 HTTP/1.1\r\n\r\n", "403", "not a public address"),  # allowed name, loopback
    (b"CONNECT 127.0.0.1:443 HTTP/1.1\r\n\r\n", "403", "raw IP"),
    (b"CONNECT [::1]:443 HTTP/1.1\r\n\r\n", "403", "raw IP"),
    (b"GET http://localhost/simple/ HTTP/1.1\r\nHost: localhost\r\n\r\n", "403", "not a public address"),
    (b"GET /simple/ HTTP/1.1\r\nHost: pypi.org\r\n\r\n", "405", "only CONNECT"),
    (b"CONNECT pypi.org:8443 HTTP/1.1\r\n\r\n", "403", "only port 443"),
    (b"x" * 20_000, "400", "too long"),
])
def test_the_proxy_server_answers_refusals_plainly(proxy, request_, status, said):
    answer = ask(proxy, request_)
    assert answer.startswith(f"HTTP/1.1 {status} ")
    assert said in answer


def test_the_proxy_serves_only_its_clients_network():
    server = serve({"allowed": ALLOWED, "clients": "10.9.0.0/16"}, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        assert ask(server.server_address[1], b"CONNECT pypi.org:443 HTTP/1.1\r\n\r\n") == ""  # closed, unanswered
    finally:
        server.shutdown()
        server.server_close()


# -- from inside a real setup step -------------------------------------------------------------------

PROBE = r'''
import json, os, socket, struct, sys

def gateway():
    for line in open("/proc/net/route").read().splitlines()[1:]:
        fields = line.split()
        if fields[1] == "00000000":
            return socket.inet_ntoa(struct.pack("<L", int(fields[2], 16)))
    return None

def reach(host, port):
    try:
        socket.create_connection((host, port), timeout=1).close()
        return "reached"
    except OSError as error:
        return f"blocked ({error})"

targets = json.loads(sys.argv[1])
proxy = os.environ.get("HTTPS_PROXY", "")
proxy_host, proxy_port = proxy.rsplit("/", 1)[-1].rsplit(":", 1) if proxy else ("", "0")
results = {"proxy": reach(proxy_host, int(proxy_port)) if proxy else "no proxy given",
           "interfaces": sorted(os.listdir("/sys/class/net"))}
if gateway():
    results["gateway"] = reach(gateway(), targets["port"])
for name, (host, port) in targets["others"].items():
    results[name] = reach(host, port)
import threading
answers = []
def lookup():
    try:
        answers.append(socket.getaddrinfo("deb.debian.org", 443))
    except OSError:
        pass
asker = threading.Thread(target=lookup, daemon=True)
asker.start()
asker.join(3)
results["dns"] = "resolved" if answers else "no answer"
for name, request in [("not-allowed", "example.org:443"), ("allowed-name-private-address", "localhost:443"),
                      ("raw-ip", "172.17.0.1:443")]:
    connection = socket.create_connection((proxy_host, int(proxy_port)), timeout=5)
    connection.sendall(f"CONNECT {request} HTTP/1.1\r\n\r\n".encode())
    results[name] = connection.recv(200).decode().split("\r\n")[0]
print("PROBE " + json.dumps(results))
sys.exit(3)
'''


def host_addresses() -> list[str]:
    """The host's own IPv4 addresses (docker0 included), loopback aside."""
    found = set()
    for line in open("/proc/net/fib_trie").read().split("/32 host LOCAL")[:-1]:
        found.add(line.split()[-1])
    return sorted(a for a in found if not a.startswith("127."))


@pytest.mark.docker
async def test_setup_reaches_the_proxy_and_nothing_else(docker_client):
    listener = socket.socket()
    listener.bind(("0.0.0.0", 0))
    listener.listen()
    port = listener.getsockname()[1]
    # Another container, listening: setup must not reach it either.
    other = docker_client.containers.run(
        "codegen-chat-sandbox/base:bookworm", ["python3", "-m", "http.server", "8000"], detach=True,
        labels={LABEL: "0"}, user="65534:65534")
    try:
        other.reload()
        others = {"other-container": [other.attrs["NetworkSettings"]["IPAddress"], 8000],
                  "docker-bridge": ["172.17.0.1", port], "internet": ["1.1.1.1", 443],
                  **{f"host {a}": [a, port] for a in host_addresses()}}
        python = DEFAULT_LANGUAGES["python"]
        probing = dataclasses.replace(python, setup_when=("deps.txt",), setup_command=(
            "python3 - '" + json.dumps({"port": port, "others": others}) + "' <<'EOF'\n" + PROBE + "\nEOF"))
        config = configured(setup_network=True, setup_allowed_hosts=("pypi.org", "localhost"),
                            languages={"python": probing})
        async with DockerSandbox(config, client=docker_client) as sandbox:
            report = await sandbox.run(TestJob("python", FileSet({"deps.txt": "", "test_x.py": ""})))
    finally:
        other.remove(force=True)
        listener.close()
    assert report.status is TestStatus.ERROR  # the probe ends the setup on purpose, to show what it saw
    seen = json.loads(report.stdout.split("PROBE ", 1)[1].splitlines()[0])
    assert seen["proxy"] == "reached"  # the probe can connect: what it could not reach is really blocked
    assert seen["interfaces"] == ["eth0", "lo"]
    for name in ["gateway", "other-container", "docker-bridge", "internet", *(f"host {a}" for a in host_addresses())]:
        assert seen.get(name, "blocked").startswith("blocked"), (name, seen)
    assert seen["dns"] == "no answer"
    assert seen["not-allowed"].startswith("HTTP/1.1 403")
    assert seen["allowed-name-private-address"].startswith("HTTP/1.1 403")
    assert seen["raw-ip"].startswith("HTTP/1.1 403")
    mine = docker_client.networks.list(filters={"label": [f"{LABEL}=1", f"{LABEL_PID}={os.getpid()}"]})
    assert mine == []  # the setup's network and proxy are gone


BACKEND = r'''
import socket

TARGETS = TARGETS_HERE

def _probe():
    reached = []
    for host, port in TARGETS:
        try:
            socket.create_connection((host, port), timeout=1).close()
            reached.append(f"{host}:{port}")
        except OSError:
            pass
    print("BACKEND RAN; reached: " + (", ".join(reached) or "nothing"))
    raise SystemExit(1)

def get_requires_for_build_wheel(config_settings=None):
    _probe()
'''


@pytest.mark.docker
async def test_a_build_backend_run_by_setup_reaches_nothing(docker_client):
    """Code the setup runs (a registry package's build backend; here the setup command runs one directly, as
    the built-in setup refuses local packages) reaches nothing but the registries."""
    listener = socket.socket()
    listener.bind(("0.0.0.0", 0))
    listener.listen()
    port = listener.getsockname()[1]
    targets = [("172.17.0.1", port), ("172.17.0.1", 2375), ("1.1.1.1", 443),
               *((address, port) for address in host_addresses())]
    files = FileSet({
        "requirements.txt": "./vendor/evil\n",
        "vendor/evil/pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "backend"\n'
                                      'backend-path = ["."]\n\n[project]\nname = "evil"\nversion = "1"\n',
        "vendor/evil/backend.py": BACKEND.replace("TARGETS_HERE", repr(targets)),
        "test_x.py": "def test_x():\n    pass\n",
    })
    probe = dataclasses.replace(DEFAULT_LANGUAGES["python"],
                                setup_command="cd vendor/evil && python3 -c 'import backend; backend._probe()'")
    try:
        async with DockerSandbox(configured(setup_network=True, languages={"python": probe}),
                                 client=docker_client) as sandbox:
            report = await sandbox.run(TestJob("python", files))
    finally:
        listener.close()
    output = report.output(100_000)
    assert report.status is TestStatus.ERROR, output
    assert "BACKEND RAN; reached: nothing" in output, output
