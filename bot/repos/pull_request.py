"""``PullRequestPublisher``: a repository run's work checked in as commits on its own branch, pushed with git,
and a pull request (a draft by default) whose body tells the task, the plan, what changed and the tests.

A follow-up pushes more commits to the same branch and updates the body; a CI fix round updates its own pull
request only, and when that is no longer open its commits stay on the branch. A run whose tests fail still pushes
its branch, with no pull request unless ``[repos] open_failing_prs``. Each pushed head commit gets the bot's commit
status ``codegen-chat/tests`` from the sandbox's result (``bot.repos.commit_status``). Whatever cannot be pushed or opened is a
``CheckInError``, so ``FallbackPublisher`` saves the work elsewhere with a note. With ``[github] inline_review``
the Optimizer's review goes on the pull request as one review, its requests on their lines (``bot.repos.inline_review``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from agents.errors import CheckInError
from agents.replies import without_language_line
from agents.types import CheckInResult, Publication, RunStatus
from bot.config.sections import ReposConfig
from bot.repos.commit_status import mark_tested
from bot.repos.github_markdown import code, quiet
from bot.repos.inline_review import requests
from bot.repos.opening import OpenedRepo
from bot.repos.pushing import push

if TYPE_CHECKING:
    from bot.repos.github import GitHubRepos  # PyGithub: imported at the first repository run only

log = logging.getLogger(__name__)

TITLE_CHARS = 72


class PullRequestPublisher:
    def __init__(self, repo: OpenedRepo, config: ReposConfig, thread_link: str = "", *,
                 inline_review: bool = False, pull: int = 0) -> None:
        self._repo, self._config, self._link = repo, config, thread_link
        self._inline_review = inline_review
        self._pull = pull  # the one pull request to update (a fix round's); 0: the branch's, opened when needed

    async def publish(self, publication: Publication) -> CheckInResult:
        workspace = self._repo.workspace
        await workspace.commit(publication.files, f"{_title(publication.task)} ({publication.status})")
        if not workspace.commits:
            raise CheckInError("The team changed no file of the repository, so there was nothing to push")
        head = await push(self._repo)
        target = self._repo.target
        branch = workspace.branch
        common = dict(repository=target.name.shown, branch=branch, head=head)
        if self._repo.github is None:
            return CheckInResult(location=f"{target.name.shown} branch {branch}", kind="branch", **common,
                                 note="pushed as a branch; a pull request needs GITHUB_TOKEN and a GitHub repository"
                                 if not target.name.path else "pushed as a branch of the local repository")
        await mark_tested(self._repo.github, target.name.full_name, head, publication, self._link)
        if self._pull:
            return await self._update_only(self._repo.github, publication, common)
        if publication.status is not RunStatus.PASSED and not self._config.open_failing_prs:
            # A follow-up's commits reach the branch's open pull request anyway: its description must not go on
            # saying the tests passed.
            body = pr_body(publication, self._repo, self._link)
            opened = await self._repo.github.update_open_pull(target.name.full_name, branch, self._repo.base, body)
            if opened is not None:
                return CheckInResult(location=opened.url, kind="pull_request", **common,
                                     note=f"pull request #{opened.number} updated with this follow-up, whose tests fail")
            url = f"{self._config.git_url.rstrip('/')}/{target.name.full_name}/tree/{branch}"
            return CheckInResult(location=url, kind="branch", **common,
                                 note="the tests fail, so no pull request was opened ([repos] open_failing_prs)")
        labels = tuple(dict.fromkeys((*self._config.labels, *target.settings.labels)))
        pull = await self._repo.github.open_or_update_pull(
            target.name.full_name, branch, self._repo.base, _title(publication.task),
            pr_body(publication, self._repo, self._link), self._config.draft, labels)
        note = "" if pull.created else f"pull request #{pull.number} updated with this follow-up"
        if self._inline_review and publication.review.strip():
            note = "; ".join(filter(None, (note, await self._review(self._repo.github, pull.number, head, publication))))
        return CheckInResult(location=pull.url, kind="pull_request", note=note, **common)

    async def _update_only(self, github: GitHubRepos, publication: Publication, common: dict[str, str]) -> CheckInResult:
        """A fix round's check-in: its pull request's body updated; once a person has closed or merged it, the
        commits stay on the branch and no pull request is opened."""
        full_name, number = self._repo.target.name.full_name, self._pull
        pull = await github.update_pull(full_name, number, common["branch"], pr_body(publication, self._repo, self._link))
        if pull is None:
            url = f"{self._config.git_url.rstrip('/')}/{full_name}/tree/{common['branch']}"
            return CheckInResult(location=url, kind="branch", **common,
                                 note=f"pull request #{number} is no longer open, so none was updated or opened")
        note = f"pull request #{number} updated with this fix round"
        if self._inline_review and publication.review.strip():
            note = "; ".join(filter(None, (note, await self._review(github, number, common["head"], publication))))
        return CheckInResult(location=pull.url, kind="pull_request", note=note, **common)

    async def _review(self, github: GitHubRepos, number: int, head: str, publication: Publication) -> str:
        """The Optimizer's review posted on the head commit; a review GitHub refuses costs a note, not the check-in
        (the work is pushed and its pull request open already)."""
        asked = requests(publication.review, publication.files)
        try:
            await github.post_review(self._repo.target.name.full_name, number, head, asked)
        except CheckInError as error:
            log.warning("The inline review of pull request #%d was not posted: %s", number, error)
            return f"the review could not be posted on the pull request ({error})"
        return ""


def pr_body(publication: Publication, repo: OpenedRepo, link: str) -> str:
    """The pull request's description: the task(s), the plan, the files changed, the tests and their counts;
    quoted text pings nobody and hides no link (``quiet``)."""
    workspace = repo.workspace
    report = publication.report
    tests = workspace.tests()
    lines = ["## Task", *(f"- {t}" for t in (*publication.earlier_tasks, publication.task)), ""]
    plan = without_language_line(publication.plan).strip()  # the LANGUAGE line is the Planner's note to the team
    if plan:
        lines += ["## Plan", plan, ""]
    changed = publication.changed or tuple(workspace.changed(publication.files))
    lines += ["## What changed", *(f"- {code(p)}{' (new)' if workspace.original(p) is None else ''}" for p in changed), ""]
    lines += ["## Tests", f"Command: {code(tests.shown or tests.command)} (in the {tests.language} sandbox)",
              f"Result: {report.summary() if report else 'not run'}"]
    if report and report.already_failing:
        lines += ["", "Already failing before this change (not caused by it, not counted for it):",
                  *(f"- {code(name)}" for name in report.already_failing)]
    lines += ["", f"Status: **{publication.status}** · run `{publication.run_id}`"]
    if link:
        lines.append(f"Asked for in {link}")
    # What ``agents.repository.without_protected`` holds the team to, and no more (a test inside a code file is not
    # covered), so the sentence stays true.
    lines += ["", "_Opened by codegen-chat. The repository's own tests are authoritative: the team edited none of its "
                  "test files (those named as tests, and those its tests ran from before the change)._"]
    return quiet("\n".join(lines))


def _title(task: str) -> str:
    first = " ".join(task.split())
    return first if len(first) <= TITLE_CHARS else first[: TITLE_CHARS - 1].rstrip() + "…"
