"""``FallbackPublisher``: the primary publisher, or, when it fails, the fallback and a note saying why."""

from __future__ import annotations

import dataclasses
import logging

from agents.errors import CheckInError
from agents.protocols import Publisher
from agents.types import CheckInResult, Publication

log = logging.getLogger(__name__)


class FallbackPublisher:
    """Chat adapters wrap their "attach the files to the thread" publisher in this, the terminal a folder."""

    def __init__(self, primary: Publisher, fallback: Publisher) -> None:
        self._primary = primary
        self._fallback = fallback

    async def publish(self, publication: Publication) -> CheckInResult:
        try:
            return await self._primary.publish(publication)
        except CheckInError as error:
            reason = str(error)  # already one sentence for a person, with no secret in it
        log.warning("check-in of run %s fell back: %s", publication.run_id, reason)
        result = await self._fallback.publish(publication)
        note = f"{reason}; {_where(result)} instead" + (f" ({result.note})" if result.note else "")
        return dataclasses.replace(result, note=note)


def _where(result: CheckInResult) -> str:
    if result.kind == "folder":
        return f"files saved to {result.location}"
    if result.kind == "attachments":
        return "files attached to the thread"
    return f"files published to {result.location}"
