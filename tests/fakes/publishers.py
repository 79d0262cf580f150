"""A Publisher double that keeps what it was given, for tests of the workflow's check-in."""

from __future__ import annotations

from agents.errors import CheckInError
from agents.types import CheckInResult, Publication


class RecordingPublisher:
    def __init__(self, fail: bool = False) -> None:
        self.publications: list[Publication] = []
        self.fail = fail

    async def publish(self, publication: Publication) -> CheckInResult:
        if self.fail:
            raise CheckInError("GitHub is unreachable.")
        self.publications.append(publication)
        return CheckInResult(location=f"memory://{publication.run_id}", kind="memory")
