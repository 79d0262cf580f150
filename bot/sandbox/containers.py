"""Blocking Docker calls on one container, each meant to run in a worker thread.

Kept apart from the async orchestration so that file reads as the run's sequence of steps.
"""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Iterable, Iterator
from typing import Any

import docker
from docker.errors import APIError, ImageNotFound, NotFound
from docker.models.containers import Container

from agents.errors import SandboxError
from bot.config.sections import LanguageConfig, SandboxConfig
from bot.sandbox import setup_network
from bot.sandbox.hardening import LABEL, LABEL_HOST, container_options, judged_here, owner_gone
from bot.sandbox.output import SplitOutput
from bot.sandbox.reports import KILLED


def start_container(client: docker.DockerClient, config: SandboxConfig, name: str,
                    language: LanguageConfig, image: str, network: str | None) -> Container:
    options = container_options(config, name, language, image, network)
    try:
        container = client.containers.create(**options)
    except ImageNotFound:
        raise SandboxError(f"the {name} image {image} is not present: run `codegen-chat sandbox build`") from None
    except APIError as error:
        raise SandboxError(f"Docker refused to create the {name} sandbox: {error.explanation}") from None
    try:
        container.start()
    except APIError as error:
        remove(container)
        raise SandboxError(f"Docker could not start the {name} sandbox: {error.explanation}") from None
    return container


def exec_stream(client: docker.DockerClient, container: Container, argv: list[str], user: str,
                workdir: str, env: dict[str, str] | None = None,
                ) -> tuple[str, Iterator[tuple[bytes | None, bytes | None]]]:
    """Start ``argv`` beside the keeper; the exec's id and its (stdout, stderr) chunks."""
    exec_id = client.api.exec_create(container.id, argv, user=user, workdir=workdir, environment=env)["Id"]
    stream = client.api.exec_start(exec_id, stream=True, demux=True)
    return exec_id, stream


def drain(stream: Iterable[tuple[bytes | None, bytes | None]], output: SplitOutput) -> None:
    """Read every chunk into the capped output; ends when the process (or its container) is gone."""
    # A killed container breaks the stream mid-read: what was read so far is the answer.
    with contextlib.suppress(Exception):
        for out, err in stream:
            output.add(out, err)


def end_stream(stream: Iterator[tuple[bytes | None, bytes | None]]) -> None:
    """Close an exec's output stream, so a thread still reading it returns at once. The engine can keep that
    stream open after the process, even its container, is gone (seen with dockerd after a removal); a thread
    left reading it would wait forever, and with it the process's exit."""
    close = getattr(stream, "close", None)
    if close is not None:
        with contextlib.suppress(Exception):  # already closed, or the engine already gone
            close()


def exit_code(client: docker.DockerClient, exec_id: str) -> int | None:
    code = client.api.exec_inspect(exec_id).get("ExitCode")
    return code if isinstance(code, int) else None


def exec_running(client: docker.DockerClient, exec_id: str) -> bool:
    """False too for an exec the engine forgot: its container ended (``exec_end`` says how)."""
    try:
        return bool(client.api.exec_inspect(exec_id).get("Running"))
    except NotFound:
        return False


STATE_WAIT_S = 5.0  # how long the engine may take to record why a container ended


def exec_end(client: docker.DockerClient, container: Container, exec_id: str,
             settle_s: float = 0.0) -> tuple[int | None, bool]:
    """The exec's exit code, and whether the whole container was ended at its memory limit under it.

    Under gVisor (runsc) a memory bomb ends the whole sandbox, not one process: the engine then forgets the
    exec (404), and the container's state says ``OOMKilled``. Any other end of the container is left to the
    caller as the engine's error."""
    try:
        code = exit_code(client, exec_id)
        if settle_s and code != 0:  # under another runtime a failed command may be the whole sandbox ending
            settled = time.monotonic() + (settle_s if code in (None, KILLED) else 0.0)  # killed, or no code yet
            while True:
                container.reload()
                state = container.attrs.get("State") or {}
                if not state.get("Running"):
                    return (KILLED, True) if state.get("OOMKilled") else (code, False)
                if time.monotonic() >= settled:
                    return code, False
                time.sleep(0.1)
        return code, False
    except NotFound:
        gone = time.monotonic() + STATE_WAIT_S
        while True:
            container.reload()
            state = container.attrs.get("State") or {}
            if state.get("OOMKilled"):
                return KILLED, True
            if not state.get("Running") or time.monotonic() >= gone:
                raise
            time.sleep(0.2)


def cut_network(client: docker.DockerClient, container: Container) -> None:
    """Take the container off every network after setup: only loopback is left for the tests."""
    container.reload()
    networks: dict[str, Any] = container.attrs["NetworkSettings"]["Networks"] or {}
    for network in networks:
        client.api.disconnect_container_from_network(container.id, network, force=True)


def kill(container: Container) -> None:
    with contextlib.suppress(NotFound, APIError):
        container.kill()


REMOVAL_WAIT_S = 60.0  # a container full of processes (a fork bomb) can take a while to go


def remove(container: Container) -> None:
    """Remove the container; when a removal is already under way (409), wait until it is gone."""
    with contextlib.suppress(NotFound):
        try:
            container.remove(force=True, v=True)
        except APIError as error:
            if error.status_code != 409:
                raise
            deadline = time.monotonic() + REMOVAL_WAIT_S
            while time.monotonic() < deadline:
                container.reload()  # NotFound once it is gone
                time.sleep(0.2)


def _orphan(labels: dict[str, str], state: str) -> bool:
    # A container of another pid namespace's bot is left to it, unless it has stopped: then it serves no one.
    return owner_gone(labels) or (not judged_here(labels) and state in ("exited", "dead"))


def reap_orphans(client: docker.DockerClient) -> int:
    """Remove sandbox containers (and then setup networks) this host started from a process that no
    longer lives."""
    host = socket.gethostname()
    # sparse: no inspect per container, which would race with other runs removing theirs.
    found = client.containers.list(all=True, sparse=True,
                                   filters={"label": [f"{LABEL}=1", f"{LABEL_HOST}={host}"]})
    orphans = [c for c in found if _orphan(c.attrs.get("Labels") or {}, str(c.attrs.get("State", "")))]
    for container in orphans:
        remove(container)
    return len(orphans) + setup_network.reap_orphan_networks(client)
