"""Chooses the publisher a run uses: a Gist when ``GITHUB_TOKEN`` is set, with the caller's fallback."""

from __future__ import annotations

from agents.protocols import Publisher
from bot.checkin.fallback import FallbackPublisher
from bot.checkin.gist import GistPublisher
from bot.checkin.index import GistIndex
from bot.config import Config, Secrets


def make_publisher(config: Config, secrets: Secrets, fallback: Publisher, index: GistIndex) -> Publisher:
    """``fallback`` alone without a token; otherwise a Gist that falls back to it when GitHub fails."""
    if not secrets.github_token:
        return fallback
    return FallbackPublisher(GistPublisher(config.checkin, secrets.github_token, index), fallback)
