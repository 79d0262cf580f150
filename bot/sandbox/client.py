"""One place that opens the Docker client, so every caller gets the same host and the same errors."""

from __future__ import annotations

import asyncio
import http.client

import docker
import urllib3.exceptions
from docker.errors import DockerException
from requests.exceptions import RequestException

from agents.errors import SandboxError
from bot.config.sections import SandboxConfig

API_TIMEOUT_S = 30.0  # plain API calls; streams are bounded by the run's own kill, not this
# What talking to an engine that went away (stopped, restarted, connection cut) raises, from each layer.
ENGINE_ERRORS = (DockerException, RequestException, urllib3.exceptions.HTTPError, http.client.HTTPException,
                 OSError)


def open_client(config: SandboxConfig, timeout_s: float = API_TIMEOUT_S) -> docker.DockerClient:
    """A client for ``[sandbox] docker_host``, else ``DOCKER_HOST`` (unix, tcp/TLS or ssh), else the socket."""
    try:
        if config.docker_host:
            # ssh:// goes through the system ssh client, so no paramiko is needed.
            ssh = config.docker_host.startswith("ssh://")
            client = docker.DockerClient(base_url=config.docker_host, timeout=int(timeout_s), use_ssh_client=ssh)
        else:
            client = docker.from_env(timeout=int(timeout_s), use_ssh_client=True)
    except DockerException as error:
        raise SandboxError(f"Docker is not reachable ({short_error(error)}): start the Docker engine "
                           "or set [sandbox] docker_host / DOCKER_HOST") from None
    if not client.api.base_url.startswith(("http://", "https://")):
        # A local socket or an ssh tunnel takes no HTTP proxy: without this, every API call (twenty a test run)
        # went through the environment's variables looking for proxy settings, some 190 look-ups a call.
        client.api.trust_env = False
    return client


async def open_checked(config: SandboxConfig, timeout_s: float = API_TIMEOUT_S) -> docker.DockerClient:
    """A client whose engine answered a ping, opened off the event loop."""
    client = await asyncio.to_thread(open_client, config, timeout_s)
    try:
        await asyncio.to_thread(client.ping)
    except Exception as error:
        client.close()
        raise SandboxError(f"Docker is not reachable ({short_error(error)}): start the Docker engine "
                           "or set [sandbox] docker_host / DOCKER_HOST") from None
    return client


def short_error(error: BaseException) -> str:
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    return text[:200]


def engine_failed(error: BaseException, during: str = "the test run") -> SandboxError:
    """The one sentence for an engine that failed or went away mid-way."""
    return SandboxError(f"the Docker engine failed during {during} ({short_error(error)}); "
                        "`codegen-chat doctor` checks the engine")


def check_runtime(client: docker.DockerClient, config: SandboxConfig) -> None:
    """``SandboxError`` when ``[sandbox] runtime`` names a runtime the engine does not have (blocking: a thread)."""
    if not config.runtime:
        return
    known = sorted((client.info().get("Runtimes") or {}).keys())
    if config.runtime not in known:
        raise SandboxError(
            f"the Docker engine has no runtime {config.runtime!r} ([sandbox] runtime; it has {', '.join(known) or 'none'}): "
            f'register it in /etc/docker/daemon.json ("runtimes": {{"{config.runtime}": '
            f'{{"path": "/usr/bin/{config.runtime}"}}}}) and reload dockerd, or leave runtime empty for the engine\'s default')


def runtime_ended(runtime: str, error: BaseException) -> SandboxError:
    """The one sentence for a container that a configured runtime (gVisor's runsc) ended under a run."""
    # gVisor ends its whole sandbox at the memory limit (and can at a fork bomb): the exec then vanishes with it
    # (404/409 from the engine).
    return SandboxError(f"the container runtime {runtime!r} ended the sandbox's container during the test run "
                        f"({short_error(error)}); under gVisor that is most often the memory limit or a fork "
                        "bomb ending the whole sandbox (docs/sandbox.md, gVisor), or set [sandbox] runtime = \"\"")
