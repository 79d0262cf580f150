"""The bot's own commit status, ``codegen-chat/tests``, on each head commit it pushes: what its sandbox saw
("success", "failure", "error" with a short description), so branch protection can require it."""

from __future__ import annotations

import logging

from agents.errors import CheckInError
from agents.types import Publication, RunStatus
from bot.ci.checks import OWN_CONTEXT
from bot.ci.rest import CiRest
from bot.repos.github import GitHubRepos

log = logging.getLogger(__name__)


def tests_status(publication: Publication) -> tuple[str, str]:
    """The status's state and description for what the run's tests said."""
    report = publication.report
    said = report.summary() if report is not None else "no test result"
    if publication.status is RunStatus.PASSED and report is not None and report.ok:
        return "success", f"The sandbox's tests passed: {said}"
    if report is not None and not report.ok and publication.status is RunStatus.FAILED:
        return "failure", f"The sandbox's tests failed: {said}"
    return "error", f"The run ended {publication.status}: {said}"


async def mark_tested(github: GitHubRepos, full_name: str, sha: str, publication: Publication,
                      link: str = "") -> None:
    """Set ``codegen-chat/tests`` on ``sha``. A status GitHub refuses (a token without Commit statuses write) is
    logged, and the check-in goes on: the work is pushed already."""
    state, description = tests_status(publication)
    try:
        await CiRest(github).set_status(full_name, sha, state, description, OWN_CONTEXT, link)
    except CheckInError as error:
        log.warning("the commit status %s could not be set on %s: %s", OWN_CONTEXT, sha[:12], error)
