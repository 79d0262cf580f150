"""``codegen-chat serve``: runs the enabled chat adapters (Slack, Discord) on one service until stopped.

Like ``bot.cli`` this is part of the program's entry point, so it may import the adapters; each adapter
module offers ``async def serve(service, store, config, secrets)`` (runs until cancelled) and
``async def doctor_checks(config, secrets)``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import logging

from agents.errors import UserInputError
from bot.config import Config, Secrets
from bot.doctor_types import CheckResult

log = logging.getLogger(__name__)

ADAPTERS = {"slack": "adapters.slack", "discord": "adapters.discord"}


def register(commands: argparse._SubParsersAction) -> None:
    serve = commands.add_parser("serve", help="run the Slack and/or Discord bot until stopped")
    serve.set_defaults(handler=_serve)


def enabled_adapters(config: Config) -> list[str]:
    return [name for name in ADAPTERS if getattr(config, name).enabled]


async def _serve(args: argparse.Namespace, config: Config, secrets: Secrets) -> int:
    from bot.app import open_store, running_service

    names = enabled_adapters(config)
    if not names:
        raise UserInputError("No chat adapter is enabled: set enabled = true under [slack] or [discord] in the config.")
    modules = [importlib.import_module(ADAPTERS[name]) for name in names]
    store = await open_store(config)
    try:
        async with running_service(config, secrets, store) as service:
            log.warning("serving %s", ", ".join(names))
            await asyncio.gather(*(module.serve(service, config, secrets) for module in modules))
    finally:
        await store.close()
    return 0


async def chat_checks(config: Config, secrets: Secrets) -> list[CheckResult]:
    """Each enabled adapter's own checks (tokens, scopes)."""
    results: list[CheckResult] = []
    for name in enabled_adapters(config):
        module = importlib.import_module(ADAPTERS[name])
        results.extend(await module.doctor_checks(config, secrets))
    if not results:
        results.append(CheckResult("chat adapters", True, "none enabled (terminal only)", required=False))
    return results
