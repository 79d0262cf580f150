"""The CI part of the loopback GitHub (``FakeGitHub.ci``): commit statuses, check runs and Actions job logs.

    GET  /repos/{o}/{r}/commits/{ref}/status       the combined status (the latest status per context)
    GET  /repos/{o}/{r}/commits/{ref}/check-runs   the check runs, paginated as GitHub does (``check_runs``)
    POST /repos/{o}/{r}/statuses/{sha}             a commit status (422 on a state GitHub does not know)
    GET  /repos/{o}/{r}/actions/jobs/{id}/logs     302 to the log's storage, read there with no token
    POST /repos/{o}/{r}/issues/{n}/comments        a pull request's conversation comment
    GET  /repos/{o}/{r}/rules/branches/{b}         a ruleset's required checks (``require(..., ruleset=True)``)
    and ``protection.required_status_checks`` in ``GET /repos/{o}/{r}/branches/{b}`` (``require``)

A test scripts a repository's CI with ``on_commit(repo, decide)``: the first read of a commit's check runs asks
``decide(sha)`` for its jobs, which read as in progress for their ``pending_reads`` reads and then complete (a job
with ``pending_reads=None`` stays in progress until the test calls ``finish``).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aiohttp import web

if TYPE_CHECKING:
    from tests.fakes.github_server import FakeGitHub

_COMMENT = re.compile(r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/issues/(?P<n>\d+)/comments")
LOGS_PATH = "/_ci_logs"  # the log storage's own address (no token, as GitHub's redirect target)
STATES = ("error", "failure", "pending", "success")


@dataclass
class Job:
    """One check run on a commit; an Actions job (``app="github-actions"``) has a log."""

    name: str
    conclusion: str = "success"
    log: str = ""
    pending_reads: int | None = 0  # reads that still see it in progress; None: until ``finish``
    app: str = "github-actions"
    output: dict[str, str] = field(default_factory=dict)  # another CI's account: title, summary, text
    id: int = 0
    reads: int = 0

    @property
    def completed(self) -> bool:
        return self.pending_reads is not None and self.reads > self.pending_reads


Decide = Callable[[str], list[Job]]


class FakeCi:
    def __init__(self, server: FakeGitHub) -> None:
        self._server = server
        self.jobs: dict[tuple[str, str], list[Job]] = {}  # (repo, sha) -> its check runs
        self.statuses: dict[tuple[str, str], list[dict[str, Any]]] = {}  # (repo, sha) -> statuses, oldest first
        self.required: dict[tuple[str, str], list[str]] = {}  # (repo, branch) -> required check names
        self.ruleset_required: dict[tuple[str, str], list[str]] = {}  # the same, required by a ruleset
        self.log_reads = 0
        self.log_storage_down = False  # the log storage answers 503 (GitHub's API itself still answers)
        self._decide: dict[str, Decide] = {}
        self._ids = itertools.count(4_000_001)

    # --- what a test sets up -----------------------------------------------------------------------------

    def on_commit(self, repo: str, decide: Decide) -> None:
        self._decide[repo.lower()] = decide

    def require(self, repo: str, branch: str, names: list[str], *, ruleset: bool = False) -> None:
        """``names`` required on ``branch``: by its branch protection, or by a ruleset."""
        (self.ruleset_required if ruleset else self.required)[(repo.lower(), branch)] = names

    def finish(self, repo: str, sha: str, name: str, conclusion: str) -> None:
        job = next(j for j in self.jobs[(repo.lower(), sha)] if j.name == name)
        job.conclusion, job.pending_reads = conclusion, job.reads - 1

    @property
    def comments(self) -> list[tuple[str, int, str]]:
        """The conversation comments posted to pull requests, as (repo, number, body), read from the recorded
        requests: whichever part of the fake answered them."""
        posted = [(_COMMENT.fullmatch(r.path), r.json) for r in self._server.requests if r.method == "POST"]
        return [(f"{m['owner']}/{m['repo']}", int(m["n"]), body["body"]) for m, body in posted if m]

    def status_of(self, repo: str, sha: str, context: str) -> dict[str, Any] | None:
        return next((s for s in reversed(self.statuses.get((repo.lower(), sha), [])) if s["context"] == context), None)

    def protection(self, repo: str, branch: str) -> dict[str, Any]:
        names = self.required.get((repo.lower(), branch))
        if names is None:
            return {}
        return {"protection": {"enabled": True, "required_status_checks": {
            "enforcement_level": "non_admins", "contexts": names, "checks": [{"context": n, "app_id": None} for n in names]}}}

    # --- routes -------------------------------------------------------------------------------------------

    def add_routes(self, app: web.Application, prefix: str) -> None:
        repo = f"{prefix}/repos/{{owner}}/{{repo}}"
        app.router.add_get(f"{repo}/commits/{{sha}}/status", self._combined)
        app.router.add_get(f"{repo}/commits/{{sha}}/check-runs", self._check_runs)
        app.router.add_post(f"{repo}/statuses/{{sha}}", self._create_status)
        app.router.add_get(f"{repo}/actions/jobs/{{id}}/logs", self._job_logs)
        comments = f"{repo}/issues/{{n}}/comments"
        if not any(r.canonical == comments for r in app.router.resources()):  # the comments' own part may have it
            app.router.add_post(comments, self._comment)
        app.router.add_get(f"{LOGS_PATH}/{{id}}", self._log_blob)
        app.router.add_get(f"{repo}/rules/branches/{{branch:.+}}", self._rules)

    async def _rules(self, request: web.Request) -> web.Response:
        """The rules that apply to a branch (an empty list when none do)."""
        names = self.ruleset_required.get((_full(request).lower(), request.match_info["branch"]), [])
        rules = [{"type": "required_status_checks", "ruleset_source_type": "Repository", "ruleset_id": 1,
                  "parameters": {"strict_required_status_checks_policy": False,
                                 "required_status_checks": [{"context": n} for n in names]}}] if names else []
        return self._server._json(rules)

    async def _combined(self, request: web.Request) -> web.Response:
        full, sha = _full(request), request.match_info["sha"]
        latest: dict[str, dict[str, Any]] = {}
        for status in self.statuses.get((full.lower(), sha), []):
            latest[status["context"]] = status
        states = [s["state"] for s in latest.values()]
        state = ("failure" if {"failure", "error"} & set(states) else "pending" if "pending" in states or not states
                 else "success")
        return self._server._json({"state": state, "sha": sha, "total_count": len(latest),
                                   "statuses": list(reversed(latest.values())),
                                   "commit_url": f"{self._server.url}/repos/{full}/commits/{sha}"})

    async def _check_runs(self, request: web.Request) -> web.Response:
        full, sha = _full(request), request.match_info["sha"]
        key = (full.lower(), sha)
        if key not in self.jobs:
            decide = self._decide.get(full.lower())
            self.jobs[key] = decide(sha) if decide else []
            for job in self.jobs[key]:
                job.id = job.id or next(self._ids)
        runs = []
        for job in self.jobs[key]:
            job.reads += 1
            runs.append(self._run_json(full, sha, job))
        return self._server._json({"total_count": len(runs), "check_runs": runs})

    async def _create_status(self, request: web.Request) -> web.Response:
        full, sha = _full(request), request.match_info["sha"]
        data = await request.json()
        if data.get("state") not in STATES:
            return self._server._json({"message": "Validation Failed", "errors": [
                {"resource": "Status", "code": "custom", "field": "state"}]}, 422)
        status = {"id": next(self._ids), "state": data["state"], "context": data.get("context", "default"),
                  "description": data.get("description", ""), "target_url": data.get("target_url"),
                  "creator": self._server._owner(), "url": f"{self._server.url}/repos/{full}/statuses/{sha}"}
        self.statuses.setdefault((full.lower(), sha), []).append(status)
        return self._server._json(status, 201)

    async def _job_logs(self, request: web.Request) -> web.StreamResponse:
        job_id = int(request.match_info["id"])
        if not any(j.id == job_id and j.app == "github-actions" for js in self.jobs.values() for j in js):
            return self._server._not_found()
        location = f"http://127.0.0.1:{self._server._port}{LOGS_PATH}/{job_id}?sig=short-lived"
        return web.Response(status=302, headers={"Location": location})

    async def _log_blob(self, request: web.Request) -> web.Response:
        job_id = int(request.match_info["id"])
        job = next((j for js in self.jobs.values() for j in js if j.id == job_id), None)
        if self.log_storage_down:
            return web.Response(status=503, text="<Error>ServerBusy</Error>")
        if job is None or request.headers.get("Authorization"):  # the storage takes no token: one sent leaked
            return web.Response(status=400 if job else 404, text="<Error>no</Error>")
        self.log_reads += 1
        return web.Response(text=job.log, content_type="text/plain")

    async def _comment(self, request: web.Request) -> web.Response:
        full, number = _full(request), int(request.match_info["n"])
        body = (await request.json())["body"]
        return self._server._json({"id": next(self._ids), "body": body, "user": self._server._owner(),
                                   "html_url": f"http://127.0.0.1:{self._server._port}/{full}/pull/{number}"}, 201)

    def _run_json(self, full: str, sha: str, job: Job) -> dict[str, Any]:
        done = job.completed
        html = f"http://127.0.0.1:{self._server._port}/{full}/runs/{job.id}"
        return {"id": job.id, "name": job.name, "head_sha": sha, "status": "completed" if done else "in_progress",
                "conclusion": job.conclusion if done else None, "html_url": html, "details_url": html,
                "url": f"{self._server.url}/repos/{full}/check-runs/{job.id}", "external_id": "",
                "started_at": "2026-01-01T00:00:00Z", "completed_at": "2026-01-01T00:01:00Z" if done else None,
                "app": {"id": 15368, "slug": job.app, "name": job.app},
                "output": {"title": job.output.get("title"), "summary": job.output.get("summary"),
                           "text": job.output.get("text"), "annotations_count": 0}}


def _full(request: web.Request) -> str:
    return f"{request.match_info['owner']}/{request.match_info['repo']}"
