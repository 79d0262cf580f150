"""Every chat platform the bot can serve, in one place: a new platform is its package (declaring its
``PLATFORM``) plus one line here. The entry points read the platforms from ``all_platforms()`` only."""

from __future__ import annotations

import dataclasses
import functools
import importlib

from bot.config.doctor_types import CheckResult
from bot.config.sections import Config, Secrets
from bot.runs.plugin import PlatformPlugin

# The platforms' packages, imported when a command first asks for the platforms: their SDKs (Slack Bolt,
# discord.py, the web server) cost a fifth of a second of CPU to import, and `codegen-chat run` needs none of them.
PACKAGES = ("adapters.slack", "adapters.discord", "adapters.web", "adapters.github")


@functools.cache
def all_platforms() -> tuple[PlatformPlugin, ...]:
    """Every platform, in the registry's order (which also decides ``health_carrier``)."""
    return tuple(importlib.import_module(package).PLATFORM for package in PACKAGES)


def enabled(config: Config) -> list[PlatformPlugin]:
    return [plugin for plugin in all_platforms() if plugin.enabled(config)]


def only(config: Config, name: str) -> Config:
    """``config`` with every other platform switched off (``codegen-chat web`` is ``serve`` with the web alone)."""
    return dataclasses.replace(config, **{p.name: dataclasses.replace(getattr(config, p.name), enabled=p.name == name)
                                          for p in all_platforms()})


def health_carrier(config: Config) -> tuple[str, str, int] | None:
    """The enabled platform whose own HTTP server also answers the health probes, so there is one port to
    expose: its name and address, the registry's order deciding; None when none does (a server of their own)."""
    for plugin in enabled(config):
        address = plugin.health_address(config)
        if address is not None:
            return (plugin.name, *address)
    return None


async def chat_checks(config: Config, secrets: Secrets) -> list[CheckResult]:
    """Each enabled platform's own checks (tokens, scopes), and those reported whether or not it is enabled."""
    results: list[CheckResult] = []
    for plugin in all_platforms():
        if plugin.enabled(config) or plugin.doctor_even_when_off:
            results.extend(await plugin.doctor_checks(config, secrets))
    if not enabled(config):
        results.append(CheckResult("chat adapters", True, "none enabled (terminal only)", required=False))
    return results
