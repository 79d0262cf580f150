"""The sandbox (Docker's, or Kubernetes' with ``[sandbox] backend = "kubernetes"``), loaded when a run first needs it.

Importing the Docker SDK and reaching the engine take a while, and a run's first model request does not need
either: ``DockerSandboxOnDemand`` stands in for a ``DockerSandbox`` and makes it at the first ``start``,
``ready``, ``prepare`` or ``run`` (the Manager checks it beside the Planner's turn), importing in a worker thread so the
event loop goes on meanwhile.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Awaitable, Callable
from types import ModuleType
from typing import TYPE_CHECKING

from agents.errors import SandboxError
from agents.types import TestJob, TestReport
from bot.config.sections import SandboxConfig

if TYPE_CHECKING:
    from bot.sandbox.sandbox import DockerSandbox

log = logging.getLogger(__name__)


class DockerSandboxOnDemand:
    """``agents.protocols.PreparedSandbox`` over a ``DockerSandbox`` made on first use. ``close()`` when done."""

    def __init__(self, config: SandboxConfig, running: Callable[[str], Awaitable[bool]] | None = None) -> None:
        self._config = config
        self._running = running  # which runs are running (the store's answer), for the Kubernetes Pod sweep
        self._made: asyncio.Future[DockerSandbox] | None = None

    @property
    def started(self) -> bool:
        """Whether anything asked for the sandbox yet (then it connected, and reaped, or said why not)."""
        return self._made is not None

    async def start(self) -> None:
        """Connect, and reap what a crashed earlier process left (``DockerSandbox.start``)."""
        await (await self._sandbox()).start()

    async def ready(self) -> None:
        """The engine answers and sandbox images are present (``DockerSandbox.ready``)."""
        await (await self._sandbox()).ready()

    def prepare(self, language: str) -> None:
        """Start a container for ``language`` soon (a hint: never raises, as the protocol says)."""
        made = self._made
        if made is not None and made.done() and not made.cancelled() and made.exception() is None:
            made.result().prepare(language)
            return
        task = asyncio.ensure_future(self._prepare_when_made(language))
        task.add_done_callback(_log_failure)

    async def run(self, job: TestJob) -> TestReport:
        return await (await self._sandbox()).run(job)

    async def close(self) -> None:
        if self._made is None:
            return
        try:
            sandbox = await self._made
        except Exception:  # it never came up: nothing to close
            return
        await sandbox.close()

    async def _prepare_when_made(self, language: str) -> None:
        (await self._sandbox()).prepare(language)

    def _sandbox(self) -> asyncio.Future[DockerSandbox]:
        if self._made is None:
            self._made = asyncio.ensure_future(self._make())
        return asyncio.shield(self._made)  # one caller's cancellation must not cancel the others' sandbox

    async def _make(self) -> DockerSandbox:
        if self._config.backend == "kubernetes":
            kubernetes = await asyncio.to_thread(kubernetes_module)
            made: DockerSandbox = kubernetes.KubernetesSandbox(self._config, self._running)
            return made
        module = await asyncio.to_thread(importlib.import_module, "bot.sandbox.sandbox")
        sandbox: DockerSandbox = module.DockerSandbox(self._config)
        return sandbox


async def sandbox_type(config: SandboxConfig) -> type[DockerSandbox]:
    """The class ``[sandbox] backend`` names, imported off the event loop (for commands that hold one sandbox)."""
    if config.backend == "kubernetes":
        chosen: type[DockerSandbox] = (await asyncio.to_thread(kubernetes_module)).KubernetesSandbox
        return chosen
    docker: type[DockerSandbox] = (await asyncio.to_thread(importlib.import_module, "bot.sandbox.sandbox")).DockerSandbox
    return docker


def kubernetes_module() -> ModuleType:
    """``bot.sandbox.kubernetes.sandbox``, or one sentence saying which extra to install (blocking: a thread)."""
    try:
        return importlib.import_module("bot.sandbox.kubernetes.sandbox")
    except ModuleNotFoundError as error:
        if error.name and error.name.startswith("kubernetes_asyncio"):
            raise SandboxError('[sandbox] backend = "kubernetes" needs the kubernetes extra: '
                               "pip install 'codegen-chat[kubernetes]'") from None
        raise


def _log_failure(task: asyncio.Future[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("the sandbox could not prepare a container: %s", task.exception())
