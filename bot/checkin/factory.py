"""Chooses the publisher each run uses: a Gist when ``GITHUB_TOKEN`` is set, with the run's own fallback,
and masks secrets in whatever it publishes."""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from agents.protocols import Publisher
from agents.types import CheckInResult, Publication
from bot.checkin.fallback import FallbackPublisher
from bot.checkin.index import GistIndex
from bot.checkin.masking import MaskingPublisher
from bot.config.sections import Config, Secrets
from bot.safety.redact import Redactor

if TYPE_CHECKING:
    from bot.checkin.gist import GistPublisher

PublisherFor = Callable[[Publisher], Publisher]  # a run's fallback -> the publisher that run uses


def publisher_for(config: Config, secrets: Secrets, index: GistIndex) -> PublisherFor:
    """Without a token, each run's fallback alone. With one, a single Gist publisher for the whole
    process (GitHub asks for one token's writes to go one after another), falling back per run.
    Either way the run's publication is masked first (``MaskingPublisher``): no secret is published."""
    redact = Redactor(secrets.values())
    if not secrets.github_token:
        return lambda fallback: MaskingPublisher(fallback, redact)
    gist = GistOnDemand(config, secrets.github_token, index)
    return lambda fallback: MaskingPublisher(FallbackPublisher(gist, fallback), redact)


class GistOnDemand:
    """The process's one ``GistPublisher``, made at the first check-in: PyGithub is imported (in a worker
    thread) only when a run has something to publish, so a command starts without waiting for it."""

    def __init__(self, config: Config, token: str, index: GistIndex) -> None:
        self._config, self._token, self._index = config, token, index
        self._made: asyncio.Future[GistPublisher] | None = None

    async def publish(self, publication: Publication) -> CheckInResult:
        if self._made is None:
            self._made = asyncio.ensure_future(self._make())
        return await (await asyncio.shield(self._made)).publish(publication)

    async def _make(self) -> GistPublisher:
        gist = await asyncio.to_thread(importlib.import_module, "bot.checkin.gist")
        publisher: GistPublisher = gist.GistPublisher(self._config.checkin, self._token, self._index)
        return publisher
