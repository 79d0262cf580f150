"""Builds the real parts from the config and the environment: store, model, sandbox, publishers, service."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from agents.errors import SandboxError
from agents.protocols import ChatModel, Sandbox
from agents.types import RunStatus, TestJob, TestReport
from bot.checkin import publisher_for
from bot.ci.rounds import CiRounds
from bot.config.sections import Config, ConfigError, Secrets
from bot.health.checks import Health
from bot.model.client import OpenAIChatModel
from bot.model.embedded.endpoint import embedded_server, endpoint_configured, served_config, served_secrets, uses_embedded
from bot.model.embedded.keeper import KeptModel
from bot.process.logs import AgentTaggedModel
from bot.repos.desk import AppCredentials, RepoDesk
from bot.runs.github_links import LinkReader
from bot.runs.service import PublisherFactory, Service
from bot.runs.worker import WorkerSettings
from bot.safety.redact import Redactor
from bot.sandbox import DockerSandboxOnDemand
from bot.store.open import open_store as open_configured_store
from bot.store.postgres_queue import JOBS_CHANNEL, Limits
from bot.store.protocol import Store

log = logging.getLogger(__name__)


async def open_store(config: Config) -> Store:
    """The store, with runs that a crashed process left running marked interrupted."""
    store = await open_configured_store(config)
    try:
        interrupted = await store.mark_interrupted()
    except BaseException:
        await store.close()  # its thread would keep the process alive
        raise
    if interrupted:
        log.warning("marked %d run(s) interrupted: the process running them had stopped", interrupted)
    return store


@asynccontextmanager
async def team_model(config: Config, secrets: Secrets) -> AsyncIterator[tuple[Config, ChatModel]]:
    """The model client and the config the team runs with: the configured endpoint's, else the embedded server's,
    started here for the whole process and stopped on the way out (``bot.model.embedded``)."""
    if not uses_embedded(config, secrets):
        if not endpoint_configured(config, secrets):  # [llm] provider = "openai"
            raise ConfigError(
                "OPENAI_API_KEY is not set: export it, or set OPENAI_BASE_URL (or llm.base_url) to a local "
                'OpenAI-compatible server such as Ollama, or set [llm] provider = "auto" for the embedded model'
            )
        async with _closing(OpenAIChatModel(config, secrets)) as model:
            yield config, model
        return
    async with embedded_server(config, _say) as keeper:
        server = keeper.server  # its port, model and settings stay the same when it is started again
        served = served_config(config, server)
        contexts = {server.model.alias: server.settings.context}
        async with _closing(OpenAIChatModel(served, served_secrets(secrets), contexts=contexts)) as model:
            yield served, KeptModel(model, keeper)


@asynccontextmanager
async def _closing(model: OpenAIChatModel) -> AsyncIterator[OpenAIChatModel]:
    try:
        yield model
    finally:
        await model.close()


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class DisabledSandbox:
    """Stands in when ``[sandbox] enabled = false``: generated code is never run outside the sandbox."""

    async def run(self, job: TestJob) -> TestReport:
        raise SandboxError(
            "The tests were not run: the sandbox is disabled ([sandbox] enabled = false), and generated code "
            "never runs outside it. Enable it, and check Docker with `codegen-chat doctor`."
        )


def build_sandbox(config: Config, store: Store | None = None) -> Sandbox:
    """The sandbox (Docker's, or Kubernetes'), made (its client imported, its engine reached) when a run first
    needs it. With ``store``, the Kubernetes Pod sweep asks it which runs are running."""
    if not config.sandbox.enabled:
        return DisabledSandbox()
    return DockerSandboxOnDemand(config.sandbox, running=run_is_running(store) if store is not None else None)


def run_is_running(store: Store) -> Callable[[str], Awaitable[bool]]:
    """Whether the store has ``run_id`` as running (on any replica): its Pods are not garbage then."""
    async def running(run_id: str) -> bool:
        record = await store.run(run_id)
        return record is not None and record.summary.status == RunStatus.RUNNING
    return running


def publisher_factory(config: Config, secrets: Secrets, store: Store) -> PublisherFactory:
    return publisher_for(config, secrets, store)


@asynccontextmanager
async def running_service(config: Config, secrets: Secrets, store: Store,
                          health: Health | None = None, sandbox_first: bool = True,
                          durable: bool = False) -> AsyncIterator[Service]:
    """The service with its real model and sandbox, closed on the way out (idle warm containers go too).
    With ``health``, the model's answers are noted for the health endpoints and adapters report there.
    ``sandbox_first`` checks the sandbox (its engine and images) before the service starts (a server, waiting
    for work); else each run checks it beside its first model call (the Manager does), so a one-off run does
    not wait for it."""
    sandbox = build_sandbox(config, store)
    try:
        ready = getattr(sandbox, "ready", None)
        if ready is not None and sandbox_first:  # engine and images; leftovers removed
            await ready()
        async with team_model(config, secrets) as (config, model):
            tagged: ChatModel = AgentTaggedModel(model)
            watched = health.model.watch(tagged) if health else tagged
            repos = RepoDesk(config, secrets.github_token, app=AppCredentials.from_secrets(secrets))
            ci = CiRounds(repos.github, config.ci, config.budget.max_tokens) if config.ci.follow else None
            service = Service(config, store, watched, sandbox, publisher_factory(config, secrets, store),
                              redact=Redactor(secrets.values()), health=health, repos=repos, ci=ci,
                              links=LinkReader(config.input, config.checkin.github_api_url, secrets.github_token))
            async with taking_jobs(service, store, config) if durable else contextlib.nullcontext():
                yield service
    finally:
        # A run that ended before its tests (the sandbox never started: no Docker SDK loaded on the way to the
        # first model request) still removes the leftovers of an earlier process, on its way out.
        start = getattr(sandbox, "start", None)
        if start is not None and config.sandbox.enabled and not getattr(sandbox, "started", True):
            reaping = asyncio.ensure_future(start())
            reaping.add_done_callback(_start_failed)
            await asyncio.wait({reaping}, timeout=REAP_WAIT_S)
        close = getattr(sandbox, "close", None)
        if close is not None:
            await close()


@asynccontextmanager
async def taking_jobs(service: Service, store: Store, config: Config) -> AsyncIterator[None]:
    """With a store that keeps a job queue (PostgreSQL), the chat platforms' runs become durable jobs any replica
    claims (``bot.runs.worker``), woken by the queue's notifications. SQLite: the runs stay this process's own."""
    queue, listen = getattr(store, "queue", None), getattr(store, "listen", None)
    if queue is None or listen is None:
        yield
        return
    limits = config.limits
    worker = service.take_jobs(queue, WorkerSettings(
        Limits(limits.max_concurrent_runs, limits.max_runs_per_user),
        capacity=limits.max_runs_per_replica or limits.max_concurrent_runs,
        heartbeat_s=config.storage.heartbeat_s, lost_after_s=config.storage.owner_lost_after_s))
    listener = listen((JOBS_CHANNEL,), worker.wake)
    fanout = store.fanout()  # type: ignore[attr-defined]  # the web chat's live updates to every replica
    service.fanout = fanout
    try:
        yield
    finally:
        await fanout.close()
        await listener.close()
        await worker.close()


REAP_WAIT_S = 10.0  # at most this long at the end of a one-off run for the leftovers' removal to finish


def _start_failed(started: asyncio.Future[None]) -> None:
    """The engine did not answer at the start: the run says so itself if it comes to its tests."""
    if not started.cancelled() and (error := started.exception()) is not None:
        log.debug("the sandbox did not start: %s", error)

