"""The network of one dependency setup: an internal network whose only way out is the egress proxy.

- The network is a Docker ``--internal`` bridge with ``inhibit_ipv4``: the host has no address on it,
  so nothing on the host (its services, the Docker bridge, the gateway) can be reached from it, and it
  has no route out. Each setup gets its own, so setups cannot reach one another.
- The proxy (``egress_proxy.py``) runs in a hardened container of its own, on that network and on
  Docker's default bridge; it lets only allow-listed registry names through to public addresses.
- The setup container joins only the internal network, with no DNS server (names are resolved by the
  proxy), and gets the proxy through the usual environment variables.

All of it is labelled like the sandbox containers, removed with the setup, and reaped as an orphan.
Everything here blocks: callers run it in a worker thread.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import socket
import time
from dataclasses import dataclass
from pathlib import Path

import docker
from docker.errors import APIError, ImageNotFound, NotFound
from docker.models.containers import Container
from docker.models.networks import Network

from agents.errors import SandboxError
from bot.config.sections import SandboxConfig
from bot.sandbox import egress_proxy
from bot.sandbox.hardening import LABEL, LABEL_HOST, MB, keeper_user, labels, owner_gone

PROXY_SOURCE = Path(egress_proxy.__file__).read_text(encoding="utf-8")
OUTSIDE_NETWORK = "bridge"  # Docker's default bridge: the proxy's way out
READY_TRIES = 50


@dataclass
class SetupNetwork:
    network: Network
    proxy: Container | None = None
    proxy_url: str = ""

    @property
    def name(self) -> str:
        return str(self.network.name)


def open_network(client: docker.DockerClient) -> SetupNetwork:
    """A fresh internal network for one setup (no proxy yet)."""
    name = f"codegen-setup-{secrets.token_hex(6)}"
    try:
        network = client.networks.create(name, driver="bridge", internal=True, labels=labels("setup"),
                                         options={"com.docker.network.bridge.inhibit_ipv4": "true"})
    except APIError as error:
        raise SandboxError(f"Docker could not create the setup network: {error.explanation}") from None
    return SetupNetwork(network)


def start_proxy(client: docker.DockerClient, config: SandboxConfig, setup: SetupNetwork, image: str) -> None:
    """The egress proxy on ``setup``'s network; ``setup.proxy_url`` says where the setup finds it."""
    setup.network.reload()
    subnet = _subnet(setup.network)
    rules = {"allowed": list(config.setup_allowed_hosts), "blocked": docker_ranges(client), "clients": subnet}
    try:
        setup.proxy = client.containers.create(
            image, ["python3", "-c", PROXY_SOURCE, json.dumps(rules)], labels=labels("proxy"),
            user=keeper_user(config), network=setup.name, read_only=True, cap_drop=["ALL"],
            security_opt=["no-new-privileges"], mem_limit=128 * MB, memswap_limit=128 * MB, pids_limit=128,
            nano_cpus=int(0.5e9), init=True, environment={"PYTHONDONTWRITEBYTECODE": "1"},
            log_config={"Type": "none", "Config": {}}, detach=True)
        client.networks.get(OUTSIDE_NETWORK).connect(setup.proxy)
        setup.proxy.start()
    except ImageNotFound:
        raise SandboxError(f"the image {image} for the setup's proxy is not present: run "
                           "`codegen-chat sandbox build`") from None
    except APIError as error:
        raise SandboxError(f"Docker could not start the setup's proxy: {error.explanation}") from None
    setup.proxy.reload()
    address = setup.proxy.attrs["NetworkSettings"]["Networks"][setup.name]["IPAddress"]
    setup.proxy_url = f"http://{address}:{egress_proxy.PORT}"
    _wait_until_listening(client, setup.proxy)


def proxy_environment(proxy_url: str) -> dict[str, str]:
    """What pip, npm, go and cargo read to find the proxy."""
    names = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "npm_config_proxy",
             "npm_config_https_proxy", "CARGO_HTTP_PROXY")
    return {**{name: proxy_url for name in names}, "NO_PROXY": "", "no_proxy": ""}


def close(client: docker.DockerClient, setup: SetupNetwork) -> None:
    """Remove the proxy and the network (containers still attached are taken off it first)."""
    if setup.proxy is not None:
        with contextlib.suppress(NotFound):
            setup.proxy.remove(force=True)
    with contextlib.suppress(NotFound):
        setup.network.reload()
        for container in setup.network.containers:
            with contextlib.suppress(NotFound, APIError):
                setup.network.disconnect(container, force=True)
        setup.network.remove()


def docker_ranges(client: docker.DockerClient) -> list[str]:
    """Every Docker network's address range: the proxy never connects into one."""
    ranges = []
    for network in client.networks.list():
        for pool in (network.attrs.get("IPAM") or {}).get("Config") or []:
            if pool.get("Subnet"):
                ranges.append(str(pool["Subnet"]))
    return ranges


def reap_orphan_networks(client: docker.DockerClient) -> int:
    """Remove setup networks this host created from a process that no longer lives."""
    found = client.networks.list(filters={"label": [f"{LABEL}=1", f"{LABEL_HOST}={socket.gethostname()}"]})
    orphans = [n for n in found if owner_gone(n.attrs.get("Labels") or {})]
    for network in orphans:
        close(client, SetupNetwork(network))
    return len(orphans)


def _subnet(network: Network) -> str:
    pools = (network.attrs.get("IPAM") or {}).get("Config") or []
    if not pools or not pools[0].get("Subnet"):
        raise SandboxError("Docker gave the setup network no address range")
    return str(pools[0]["Subnet"])


def _wait_until_listening(client: docker.DockerClient, proxy: Container) -> None:
    probe = f"import socket; socket.create_connection(('127.0.0.1', {egress_proxy.PORT}), 1)"
    for _ in range(READY_TRIES):
        exec_id = client.api.exec_create(proxy.id, ["python3", "-c", probe])["Id"]
        client.api.exec_start(exec_id)
        if client.api.exec_inspect(exec_id).get("ExitCode") == 0:
            return
        time.sleep(0.1)
    raise SandboxError("the setup's proxy did not start listening")
