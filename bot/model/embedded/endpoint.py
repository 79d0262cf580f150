"""When the team uses the embedded model, and the config it then runs with.

With no endpoint configured (no ``OPENAI_API_KEY``, ``OPENAI_BASE_URL`` or ``[llm] base_url``), or with
``[llm] provider = "embedded"``, the model file is made ready (``weights``), the server started for the whole
process (``server``), and the config pointed at it: its URL, one request at a time (the server serves one), and
every role on the one model it serves.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from bot.config.sections import AgentSettings, Config, Secrets
from bot.model.embedded.keeper import ServerKeeper
from bot.model.embedded.machine import context_size, thread_count
from bot.model.embedded.server import EmbeddedServer, ServerNotInstalled, ServerSettings, missing_server_sentence, server_version
from bot.model.embedded.weights import ModelFile, default_model, own_model

SERVED_REQUESTS = 1  # llama-cpp-python's server answers one request at a time
# A small model now and then repeats itself until max_tokens (one Tester reply ran to 4,096 tokens of the same
# test, seven minutes on 2 cores); the team's files for a task fit well within this, so a loop costs a minute.
REPLY_TOKENS = 1024
HOW_TO_CONFIGURE = ("for a hosted model export OPENAI_API_KEY; for a server of your own set OPENAI_BASE_URL "
                    "or [llm] base_url")


def endpoint_configured(config: Config, secrets: Secrets) -> bool:
    return bool(secrets.openai_api_key or config.llm.base_url or secrets.openai_base_url)


def uses_embedded(config: Config, secrets: Secrets) -> bool:
    provider = config.llm.provider
    return provider == "embedded" or (provider == "auto" and not endpoint_configured(config, secrets))


def data_folder(config: Config) -> Path:
    """Where the bot keeps what it made: beside its database (``[storage] path``)."""
    return config.db_path().parent


def notice(config: Config, model: ModelFile) -> str:
    """The one line said when the embedded model is used."""
    why = '[llm] provider = "embedded"' if config.llm.provider == "embedded" else "no model endpoint is configured"
    return f"codegen-chat: {why}: the team uses the embedded model {model.alias} on this machine ({HOW_TO_CONFIGURE})."


def model_file(config: Config, say: Callable[[str], None]) -> ModelFile:
    """The GGUF file to serve: ``[llm] embedded_model``, else the default, fetched once and checked (blocking)."""
    if config.llm.embedded_model:
        return own_model(Path(config.llm.embedded_model).expanduser())
    return default_model(data_folder(config), say)


def settings_for(model: ModelFile) -> ServerSettings:
    return ServerSettings(context=context_size(model.info), threads=thread_count())


def served_config(config: Config, server: EmbeddedServer) -> Config:
    """``config`` pointed at the embedded server: its URL, one request at a time, every role on its model, no
    reply longer than ``REPLY_TOKENS``."""
    llm = dataclasses.replace(config.llm, base_url=server.base_url, parallel_requests=SERVED_REQUESTS)
    agents = {role: dataclasses.replace(settings, model=None, max_tokens=_capped(settings.max_tokens))
              for role, settings in config.agents.items()}
    default = dataclasses.replace(agents.get("default", AgentSettings()), model=server.model.alias,
                                  max_tokens=_capped(config.agent("default").max_tokens))
    return dataclasses.replace(config, llm=llm, agents={**agents, "default": default})


def _capped(max_tokens: int | None) -> int | None:
    return None if max_tokens is None else min(max_tokens, REPLY_TOKENS)


def served_secrets(secrets: Secrets) -> Secrets:
    """No key or endpoint of another server goes to the embedded one."""
    return dataclasses.replace(secrets, openai_api_key="", openai_base_url="")


@asynccontextmanager
async def embedded_server(config: Config, say: Callable[[str], None]) -> AsyncIterator[ServerKeeper]:
    """The embedded server, answering, for as long as the block runs (started again if it ends: ``keeper``);
    stopped on the way out however it ends."""
    if server_version() is None:
        raise ServerNotInstalled(missing_server_sentence())
    model = await asyncio.to_thread(model_file, config, say)
    with contextlib.closing(model):
        say(notice(config, model))
        keeper = ServerKeeper(await EmbeddedServer.start(model, settings_for(model),
                                                         data_folder(config) / "embedded-server.log"))
        keeper.watch()
        try:
            yield keeper
        finally:
            await keeper.stop()
