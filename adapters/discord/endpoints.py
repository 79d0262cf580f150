"""Where discord.py talks to: Discord itself, or the Discord-compatible server the config names."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import yarl
from discord.gateway import DiscordWebSocket
from discord.http import Route

from bot.config.sections import DiscordConfig

PORTAL = "https://discord.com/developers/applications"


@contextlib.contextmanager
def endpoints(config: DiscordConfig) -> Iterator[None]:
    """Point discord.py at ``api_url`` and ``gateway_url`` (a Discord-compatible server, a test fake).

    discord.py takes no base URL; its REST routes and webhooks all read ``Route.BASE`` and the gateway
    starts from ``DiscordWebSocket.DEFAULT_GATEWAY`` (the library's own ``_set_api_version`` sets the
    first the same way). Both are process-wide, which suits one bot per process; they are put back after.
    """
    saved = Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY
    if config.api_url:
        Route.BASE = config.api_url.rstrip("/")
        DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(config.gateway_url)
    try:
        yield
    finally:
        Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY = saved
