"""``codegen-chat serve``: the enabled chat platforms (Slack, Discord, the web chat) on one service until stopped.

Each platform package offers ``async def serve(service, config, secrets)`` (runs until cancelled; once
connected it calls ``service.online``) and ``async def doctor_checks(config, secrets)``; ``PLATFORMS``
lists them by their config section. It stops the way every entry point does (``bot.process.lifecycle``): on
SIGTERM, SIGHUP or Ctrl-C the runs are stopped and their threads told, then the platforms are cancelled,
which closes their connections.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from types import ModuleType

import adapters.discord
import adapters.slack
import adapters.web
from agents.errors import UserInputError
from bot.config.sections import Config, Secrets
from bot.health.checks import Health, carried_by
from bot.health.doctor_types import CheckResult
from bot.health.http import start_health_server
from bot.process.lifecycle import signals_handled, until_shutdown
from bot.runs.runner import SHUTDOWN_REASON
from codegen_chat.build import open_store, running_service

log = logging.getLogger(__name__)

PLATFORMS: dict[str, ModuleType] = {"slack": adapters.slack, "discord": adapters.discord, "web": adapters.web}
REPORTED_APART = {"web"}  # the doctor reports the web chat whether or not serve runs it (codegen_chat.web)


def register(commands: argparse._SubParsersAction) -> None:
    serve = commands.add_parser("serve", help="run the Slack and/or Discord bot and/or the web chat until stopped")
    serve.set_defaults(handler=_serve)


def enabled_platforms(config: Config) -> list[str]:
    return [name for name in PLATFORMS if getattr(config, name).enabled]


async def _serve(args: argparse.Namespace, config: Config, secrets: Secrets) -> int:
    return await serve_platforms(config, secrets)


async def serve_platforms(config: Config, secrets: Secrets) -> int:
    """Every enabled chat platform on one service, until cancelled."""
    names = enabled_platforms(config)
    if not names:
        raise UserInputError("No chat adapter is enabled: set enabled = true under [slack], [discord] or [web] in the "
                             "config (or run `codegen-chat web`).")
    runtime = config.runtime
    with signals_handled(runtime.shutdown_grace_s) as shutdown:
        store = await open_store(config)
        health = Health(store, config.sandbox)
        health.expect(*names)
        try:
            health_server = await start_health_server(health, runtime.health_host, runtime.health_port) \
                if runtime.health_port and not carried_by(config) else None
            try:
                async with running_service(config, secrets, store, health) as service:
                    log.warning("serving %s", ", ".join(names))
                    platforms = _serve_together([PLATFORMS[name] for name in names], service, config, secrets)

                    async def wind_down(_: object) -> None:
                        await service.shutdown(SHUTDOWN_REASON, runtime.shutdown_grace_s)

                    await until_shutdown(shutdown, platforms, wind_down)
            finally:
                if health_server:
                    await health_server.cleanup()
        finally:
            await store.close()
    return 0


async def _serve_together(platforms: list[ModuleType], *args: object) -> None:
    """Every platform until cancelled; one that cannot go on (a refused token) stops the others too, and its
    reason is the command's."""
    try:
        async with asyncio.TaskGroup() as group:
            for platform in platforms:
                group.create_task(platform.serve(*args))
    except ExceptionGroup as failed:
        raise failed.exceptions[0] from None


async def chat_checks(config: Config, secrets: Secrets) -> list[CheckResult]:
    """Each enabled platform's own checks (tokens, scopes)."""
    results: list[CheckResult] = []
    for name in enabled_platforms(config):
        if name not in REPORTED_APART:
            results.extend(await PLATFORMS[name].doctor_checks(config, secrets))
    if not results and not enabled_platforms(config):
        results.append(CheckResult("chat adapters", True, "none enabled (terminal only)", required=False))
    return results
