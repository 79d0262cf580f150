"""``codegen-chat serve``: the enabled platforms (Slack, Discord, the web chat, GitHub pull requests) on one service
until stopped.

Each platform package declares its ``PLATFORM`` (``bot.runs.plugin``), whose ``serve(service, config,
secrets)`` runs until cancelled (once connected it calls ``service.online``); ``codegen_chat.platforms``
lists them. It stops the way every entry point does (``bot.process.lifecycle``): on SIGTERM, SIGHUP or
Ctrl-C the runs are stopped and their threads told, then the platforms are cancelled, which closes their
connections.
"""

from __future__ import annotations

import argparse
import asyncio
import logging

from agents.errors import UserInputError
from bot.config.sections import Config, Secrets
from bot.health.checks import Health
from bot.process.lifecycle import SHUTDOWN_REASON, signals_handled, until_shutdown
from bot.runs.plugin import PlatformPlugin
from bot.runs.service import Service
from codegen_chat.build import open_store, running_service
from codegen_chat.platforms import all_platforms, enabled, health_carrier

log = logging.getLogger(__name__)


def register(commands: argparse._SubParsersAction) -> None:
    serve = commands.add_parser("serve", help="run the enabled platforms (Slack, Discord, the web chat, GitHub pull "
                                "requests) until stopped")
    serve.set_defaults(handler=_serve)


async def _serve(args: argparse.Namespace, config: Config, secrets: Secrets) -> int:
    return await serve_platforms(config, secrets)


async def serve_platforms(config: Config, secrets: Secrets) -> int:
    """Every enabled chat platform on one service, until cancelled."""
    platforms = enabled(config)
    names = [p.name for p in platforms]
    if not names:
        sections = ", ".join(f"[{p.name}]" for p in all_platforms())
        raise UserInputError(f"No chat adapter is enabled: set enabled = true under one of {sections} in the "
                             "config (or run `codegen-chat web`).")
    from bot.health.http import start_health_server  # here: aiohttp's server, which `run` never needs

    runtime = config.runtime
    with signals_handled(runtime.shutdown_grace_s) as shutdown:
        store = await open_store(config)
        carrier = health_carrier(config)
        health = Health(store, config.sandbox, carrier=carrier[0] if carrier else "")
        health.expect(*names)
        try:
            health_server = await start_health_server(health, runtime.health_host, runtime.health_port) \
                if runtime.health_port and not carrier else None
            try:
                async with running_service(config, secrets, store, health, durable=True) as service:
                    log.warning("serving %s", ", ".join(names))
                    serving = _serve_together(platforms, service, config, secrets)

                    async def wind_down(_: object) -> None:
                        await service.shutdown(SHUTDOWN_REASON, runtime.shutdown_grace_s)

                    await until_shutdown(shutdown, serving, wind_down)
            finally:
                if health_server:
                    await health_server.cleanup()
        finally:
            await store.close()
    return 0


async def _serve_together(platforms: list[PlatformPlugin], service: Service, config: Config, secrets: Secrets) -> None:
    """Every platform until cancelled; one that cannot go on (a refused token) stops the others too, and its
    reason is the command's."""
    try:
        async with asyncio.TaskGroup() as group:
            for platform in platforms:
                group.create_task(platform.serve(service, config, secrets))
    except ExceptionGroup as failed:
        raise failed.exceptions[0] from None
