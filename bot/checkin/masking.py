"""``MaskingPublisher``: no secret leaves in a published file. Every publisher a run uses (the Gist, a
chat thread's attachments, the output folder) is reached through it, so a model reply that quotes a
token is masked in the Gist's files and README as it is in the thread."""

from __future__ import annotations

import dataclasses

from agents.protocols import Publisher
from agents.types import CheckInResult, FileSet, Publication
from bot.safety.redact import Redactor


class MaskingPublisher:
    def __init__(self, inner: Publisher, redact: Redactor) -> None:
        self._inner, self._redact = inner, redact

    async def publish(self, publication: Publication) -> CheckInResult:
        return await self._inner.publish(masked(publication, self._redact))


def masked(publication: Publication, redact: Redactor) -> Publication:
    """The publication with every secret masked in every text it carries, whichever publisher shows it: file
    names and contents, the README, the task and the earlier ones (a Gist's description, a pull request's
    title and body), the plan and the changed paths (a pull request's body), the Optimizer's review (a pull
    request review), and the test output and names."""
    report = publication.report
    if report is not None:
        report = dataclasses.replace(report, stdout=redact(report.stdout), stderr=redact(report.stderr),
                                     already_failing=tuple(redact(name) for name in report.already_failing))
    return dataclasses.replace(
        publication, task=redact(publication.task), readme=redact(publication.readme), report=report,
        files=FileSet({redact(path): redact(content) for path, content in publication.files.items()}),
        earlier_tasks=tuple(redact(task) for task in publication.earlier_tasks), plan=redact(publication.plan),
        changed=tuple(redact(path) for path in publication.changed), review=redact(publication.review),
    )
