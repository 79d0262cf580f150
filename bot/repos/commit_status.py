"""The bot's own commit status, ``codegen-chat/tests``, on each head commit it pushes: what its sandbox saw
("success", "failure", "error" with a short description), so branch protection can require it."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from agents.errors import CheckInError
from agents.types import Publication, TestStatus

if TYPE_CHECKING:
    from bot.repos.github import GitHubRepos  # PyGithub: imported at the first repository run only

log = logging.getLogger(__name__)

OWN_CONTEXT = "codegen-chat/tests"  # the commit status's name; CI following never counts it (``bot.ci.checks``)


def tests_status(publication: Publication) -> tuple[str, str]:
    """The status's state and description from what the sandbox's tests said (the review's verdict is the pull
    request's business): passed, failed, or they did not come to a result (timed out, could not run)."""
    report = publication.report
    if report is None:
        return "error", f"No test result: the run ended {publication.status}"
    said = report.summary()
    if report.status is TestStatus.PASSED:
        return "success", f"The sandbox's tests passed: {said}"
    if report.status is TestStatus.FAILED:
        return "failure", f"The sandbox's tests failed: {said}"
    return "error", f"The sandbox's tests came to no result: {said}"


async def mark_tested(github: GitHubRepos, full_name: str, sha: str, publication: Publication,
                      link: str = "") -> None:
    """Set ``codegen-chat/tests`` on ``sha``. A status GitHub refuses (a token without Commit statuses write) is
    logged, and the check-in goes on: the work is pushed already."""
    state, description = tests_status(publication)
    try:
        await github.set_status(full_name, sha, state, description, OWN_CONTEXT, link)
    except CheckInError as error:
        log.warning("the commit status %s could not be set on %s: %s", OWN_CONTEXT, sha[:12], error)
