"""Chooses the publisher each run uses: a Gist when ``GITHUB_TOKEN`` is set, with the run's own fallback,
and masks secrets in whatever it publishes."""

from __future__ import annotations

from collections.abc import Callable

from agents.protocols import Publisher
from bot.checkin.fallback import FallbackPublisher
from bot.checkin.gist import GistPublisher
from bot.checkin.index import GistIndex
from bot.checkin.masking import MaskingPublisher
from bot.config import Config, Secrets
from bot.redact import Redactor

PublisherFor = Callable[[Publisher], Publisher]  # a run's fallback -> the publisher that run uses


def publisher_for(config: Config, secrets: Secrets, index: GistIndex) -> PublisherFor:
    """Without a token, each run's fallback alone. With one, a single Gist publisher for the whole
    process (GitHub asks for one token's writes to go one after another), falling back per run.
    Either way the run's publication is masked first (``MaskingPublisher``): no secret is published."""
    redact = Redactor(secrets.values())
    if not secrets.github_token:
        return lambda fallback: MaskingPublisher(fallback, redact)
    gist = GistPublisher(config.checkin, secrets.github_token, index)
    return lambda fallback: MaskingPublisher(FallbackPublisher(gist, fallback), redact)
