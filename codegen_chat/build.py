"""Builds the real parts from the config and the environment: store, model, sandbox, publishers, service."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from agents.errors import SandboxError
from agents.protocols import ChatModel, Sandbox
from agents.types import TestJob, TestReport
from bot.checkin import publisher_for
from bot.config.sections import Config, ConfigError, Secrets
from bot.health.checks import Health
from bot.model.client import OpenAIChatModel
from bot.process.logs import AgentTaggedModel
from bot.runs.github_links import LinkReader
from bot.runs.service import PublisherFactory, Service
from bot.safety.redact import Redactor
from bot.sandbox import DockerSandboxOnDemand
from bot.store.open import open_store as open_configured_store
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


def build_model(config: Config, secrets: Secrets) -> OpenAIChatModel:
    if not (secrets.openai_api_key or config.llm.base_url or secrets.openai_base_url):
        raise ConfigError(
            "OPENAI_API_KEY is not set: export it, or set OPENAI_BASE_URL (or llm.base_url) to a local "
            "OpenAI-compatible server such as Ollama"
        )
    return OpenAIChatModel(config, secrets)


class DisabledSandbox:
    """Stands in when ``[sandbox] enabled = false``: generated code is never run outside the sandbox."""

    async def run(self, job: TestJob) -> TestReport:
        raise SandboxError(
            "The tests were not run: the sandbox is disabled ([sandbox] enabled = false), and generated code "
            "never runs outside it. Enable it, and check Docker with `codegen-chat doctor`."
        )


def build_sandbox(config: Config) -> Sandbox:
    """The Docker sandbox, made (the Docker SDK imported, the engine reached) when a run first needs it."""
    if not config.sandbox.enabled:
        return DisabledSandbox()
    return DockerSandboxOnDemand(config.sandbox)


def publisher_factory(config: Config, secrets: Secrets, store: Store) -> PublisherFactory:
    return publisher_for(config, secrets, store)


@asynccontextmanager
async def running_service(config: Config, secrets: Secrets, store: Store,
                          health: Health | None = None, sandbox_first: bool = True) -> AsyncIterator[Service]:
    """The service with its real model and sandbox, closed on the way out (idle warm containers go too).
    With ``health``, the model's answers are noted for the health endpoints and adapters report there.
    ``sandbox_first`` checks the sandbox (its engine and images) before the service starts (a server, waiting
    for work); else each run checks it beside its first model call (the Manager does), so a one-off run does
    not wait for it."""
    model, sandbox = build_model(config, secrets), build_sandbox(config)
    try:
        ready = getattr(sandbox, "ready", None)
        if ready is not None and sandbox_first:  # engine and images; leftovers removed
            await ready()
        tagged: ChatModel = AgentTaggedModel(model)
        team_model = health.model.watch(tagged) if health else tagged
        yield Service(config, store, team_model, sandbox, publisher_factory(config, secrets, store),
                      redact=Redactor(secrets.values()), health=health,
                      links=LinkReader(config.input, config.checkin.github_api_url, secrets.github_token))
    finally:
        close = getattr(sandbox, "close", None)
        if close is not None:
            await close()
        await model.close()

