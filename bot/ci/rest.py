"""The GitHub REST calls CI following makes, on the repository work's PyGithub client (``GitHubRepos.call``:
worker threads, one call at a time, retried):

    GET  /repos/{o}/{r}/commits/{sha}/status         the commit statuses (the latest per context)
    GET  /repos/{o}/{r}/commits/{sha}/check-runs     the check runs (the latest per name), paginated
    GET  /repos/{o}/{r}/branches/{base}              its protection's required checks, when the token may see them
    GET  /repos/{o}/{r}/rules/branches/{base}        the rulesets' required checks, likewise
    GET  /repos/{o}/{r}/actions/jobs/{id}/logs       a redirect to an Actions job's log, read from its end
    GET  /repos/{o}/{r}/pulls?head=                  the branch's open pull request
    GET  /repos/{o}/{r}/pulls/{n}                    that pull request again: still open, still at the followed commit
    POST /repos/{o}/{r}/issues/{n}/comments          the one comment when the fix attempts are spent

Failures leave as ``CheckInError`` with a sentence (``bot.checkin.retry``).
"""

from __future__ import annotations

import asyncio
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from github import Github
from github.CheckRun import CheckRun
from github.GithubException import GithubException
from github.PaginatedList import PaginatedList

from agents.errors import CheckInError
from bot.ci.checks import Check, run_state, status_state
from bot.repos.github import GitHubRepos

T = TypeVar("T")
CI_NEEDS = ("the token needs Commit statuses, Checks and Actions read (Commit statuses write for the bot's own "
            "status, Pull requests write for its comment) on the repository")
LOG_TIMEOUT_S = 60.0
CHUNK = 65_536
OUTPUT_CHARS = 200_000  # of a check run's own output (its text may be long): the end


@dataclass(frozen=True)
class OpenPull:
    """A pull request as CI following reads it: where it goes, its head commit, and whether it is still open."""

    number: int
    url: str
    base: str
    head: str = ""  # its head commit's sha
    state: str = "open"  # "open", "closed" or "merged"


class CiRest:
    def __init__(self, github: GitHubRepos, log_max_bytes: int = 5_000_000) -> None:
        self._github, self._log_max_bytes = github, log_max_bytes

    async def checks(self, full_name: str, sha: str) -> list[Check]:
        """Every commit status and check run on ``sha``."""
        def read(client: Github) -> list[Check]:
            path = f"/repos/{full_name}/commits/{sha}"
            _, combined = client.requester.requestJsonAndCheck("GET", f"{path}/status", parameters={"per_page": 100})
            found = [_status(s) for s in combined.get("statuses") or ()]
            runs = PaginatedList(CheckRun, client.requester, f"{path}/check-runs", {"per_page": "100"},
                                 list_item="check_runs")
            return found + [_run(r) for r in runs]
        return await self._call(read, "the commit's checks")

    async def required(self, full_name: str, base: str) -> frozenset[str] | None:
        """The check names the base branch requires, from its protection and from the repository's rulesets; None
        when neither requires any, or the token may see neither (then every check counts)."""
        def read(client: Github) -> frozenset[str] | None:
            branch = _json_or_none(client, f"/repos/{full_name}/branches/{base}") or {}
            rules = (branch.get("protection") or {}).get("required_status_checks") or {}
            names = {*(rules.get("contexts") or ()), *(c.get("context", "") for c in rules.get("checks") or ())}
            for rule in _json_or_none(client, f"/repos/{full_name}/rules/branches/{base}") or ():
                if rule.get("type") == "required_status_checks":
                    checks = (rule.get("parameters") or {}).get("required_status_checks") or ()
                    names.update(c.get("context", "") for c in checks)
            names.discard("")
            return frozenset(names) or None
        return await self._call(read, "the base branch's required checks")

    async def job_log(self, full_name: str, job_id: int) -> str:
        """An Actions job's log: its end, within ``[ci] log_max_bytes``. GitHub answers with a redirect to the log's
        storage, which is read without the token (the address carries its own short-lived grant), outside the
        client's one-call-at-a-time lock: a long log holds up no other GitHub call."""
        def locate(client: Github) -> str:
            headers, _ = client.requester.requestBlobAndCheck("GET", f"/repos/{full_name}/actions/jobs/{job_id}/logs")
            return str(headers.get("location", ""))
        location = await self._call(locate, "the failing job's log")
        if not location.startswith(("https://", "http://")):
            return ""
        try:
            return await asyncio.to_thread(_tail, location, self._log_max_bytes)
        except (OSError, ValueError) as error:  # urllib's URLError and HTTPError are OSErrors
            raise CheckInError(f"The failing job's log could not be read from its storage: {error}") from None

    async def open_pull(self, full_name: str, branch: str) -> OpenPull | None:
        def read(client: Github) -> OpenPull | None:
            owner = full_name.split("/", 1)[0]
            _, pulls = client.requester.requestJsonAndCheck(
                "GET", f"/repos/{full_name}/pulls", parameters={"state": "open", "head": f"{owner}:{branch}"})
            for pull in pulls or ():
                return _pull(pull)
            return None
        return await self._call(read, "the branch's pull request")

    async def pull(self, full_name: str, number: int) -> OpenPull:
        """Pull request ``number`` as it is now (a person may have closed or merged it, or pushed to its branch)."""
        def read(client: Github) -> OpenPull:
            _, pull = client.requester.requestJsonAndCheck("GET", f"/repos/{full_name}/pulls/{number}")
            return _pull(pull)
        return await self._call(read, "the pull request")

    async def comment(self, full_name: str, number: int, body: str) -> None:
        def post(client: Github) -> None:
            client.requester.requestJsonAndCheck("POST", f"/repos/{full_name}/issues/{number}/comments",
                                                 input={"body": body})
        await self._call(post, "the pull request's comment")

    async def _call(self, work: Callable[[Github], T], subject: str) -> T:
        return await self._github.call(work, subject, CI_NEEDS)


def _pull(pull: dict[str, Any]) -> OpenPull:
    state = "merged" if pull.get("merged") or pull.get("merged_at") else str(pull.get("state") or "")
    return OpenPull(int(pull["number"]), str(pull["html_url"]), str(pull["base"]["ref"]),
                    str(pull["head"].get("sha") or ""), state)


def _json_or_none(client: Github, path: str) -> Any:
    """A GET's JSON; None when GitHub hides it from the token (403, 404)."""
    try:
        return client.requester.requestJsonAndCheck("GET", path)[1]
    except GithubException as error:
        if error.status in (403, 404):
            return None
        raise


def _status(status: dict[str, Any]) -> Check:
    state = str(status.get("state") or "")
    return Check(str(status.get("context") or "default"), status_state(state), "status",
                 str(status.get("target_url") or ""), state, summary=str(status.get("description") or ""))


def _run(run: CheckRun) -> Check:
    """A check run as listed (every attribute read here is in the list's data: none makes PyGithub fetch it)."""
    output = run.output
    said = "\n\n".join(p for p in (output.title, output.summary, output.text) if p) if output else ""
    return Check(run.name, run_state(run.status, run.conclusion), "check_run", run.html_url or run.details_url or "",
                 run.conclusion or "", run.id, run.app.slug if run.app else "", (output.title or "") if output else "",
                 said[-OUTPUT_CHARS:], run.details_url or "")


def _tail(url: str, max_bytes: int) -> str:
    """The last ``max_bytes`` of what ``url`` serves, read in chunks so a huge log never sits in memory whole."""
    kept = b""
    with urllib.request.urlopen(url, timeout=LOG_TIMEOUT_S) as answer:  # http(s) only: checked by the caller
        while chunk := answer.read(CHUNK):
            kept = (kept + chunk)[-max_bytes:]
    return kept.decode("utf-8", "replace")


