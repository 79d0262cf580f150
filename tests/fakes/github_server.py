"""A loopback GitHub REST API for the calls the check-in makes, spoken to by the real PyGithub.

    POST /gists, GET|PATCH /gists/{id}, GET /user
    GET /repos/{owner}/{name}, GET /repos/{owner}/{name}/branches/{branch},
    GET|POST /repos/{owner}/{name}/pulls, PATCH /repos/{owner}/{name}/pulls/{n}, POST .../issues/{n}/labels
    GET .../collaborators/{user}/permission; POST .../issues/{n}/comments, PATCH .../issues/comments/{id};
    POST .../pulls/{n}/comments/{id}/replies, PATCH .../pulls/comments/{id}; POST .../comments/{id}/reactions;
    and, the other way, signed webhook deliveries to the bot (``send_webhook``, ``comment_payload``)
    GET /repos/{owner}/{repo}/pulls/{n}, .../pulls/{n}/files, .../pulls/{n}/comments   (paginated with Link)
    POST .../pulls/{n}/reviews (a review's comments only on lines of the diff, else 422, as GitHub)
    GET /repos/{owner}/{repo}/commits/{sha}, GET /repos/{owner}/{repo}/contents/{path}?ref=
    and CI's commit statuses, check runs and Actions job logs (``self.ci``: tests/fakes/github_ci.py)

Responses have GitHub's shapes (the attributes PyGithub's ``Gist``, ``GistFile``, ``GistHistoryState`` and
``AuthenticatedUser`` read), its validation rules (no empty files, no ``/`` in names), its auth answers
(401 "Bad credentials"; 404 on gist writes for a classic token without the ``gist`` scope) and, on demand,
its errors with the real rate-limit headers. Every request is recorded.

It runs on the test's own event loop, so a client that blocked the loop would hang the test: the check-in's
calls have to run in worker threads for any test to pass.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import itertools
import json
import re
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from tests.fakes import loopback
from tests.fakes.github_ci import LOGS_PATH, FakeCi

DOCS = "https://docs.github.com/rest"
LOGIN = "octocat"


@dataclass
class Recorded:
    method: str
    path: str  # without the API prefix, e.g. "/gists/abc"
    headers: dict[str, str]
    json: Any


@dataclass
class Fault:
    status: int
    body: dict[str, Any]
    headers: dict[str, str]
    times: int | None  # None: forever
    method: str | None
    path: str | None  # a prefix of the request path, e.g. "/gists"
    delay_s: float = 0.0  # answer this late (a status of 0: then answer normally)


@dataclass
class StoredRepo:
    full_name: str
    default_branch: str = "main"
    size_kb: int = 10
    push: bool = True
    protected: tuple[str, ...] = ("main",)


@dataclass
class OpenedPull:
    number: int
    repo: str
    head: str
    base: str
    title: str
    body: str
    draft: bool
    state: str = "open"  # "closed" once a person closes or merges it
    labels: list[str] = field(default_factory=list)
    merged: bool = False


@dataclass
class StoredPull:
    """A pull request as a test sets it up: its text, changed files (path -> patch) and review comments."""

    number: int
    title: str
    body: str
    files: dict[str, str] = field(default_factory=dict)
    comments: list[tuple[str, str, str]] = field(default_factory=list)  # (login, path, body)
    head: str = "feature"  # its branch, and the repository that branch is in ("" = the pull request's own)
    head_repo: str = ""
    base: str = "main"
    labels: list[str] = field(default_factory=list)


@dataclass
class PostedReview:
    """A pull request review as posted: its event, body, commit and comments (path, line, side, body)."""

    repo: str
    number: int
    event: str
    body: str
    commit_id: str
    comments: list[dict[str, Any]]


@dataclass
class StoredGist:
    id: str
    description: str
    public: bool
    files: dict[str, str]
    history: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Comment:
    """A conversation comment on a pull request, or a review comment (it has a ``path``) in a review thread."""

    id: int
    repo: str
    number: int
    login: str
    body: str
    path: str = ""
    line: int = 0
    in_reply_to: int | None = None
    kind: str = "User"  # the author's account type: "User" or "Bot"
    edits: int = 0
    reactions: list[str] = field(default_factory=list)
    at: float = field(default_factory=time.monotonic)  # when it was made (a benchmark's clock)
    reacted_at: float = 0.0
    written: float = field(default_factory=time.time)  # when GitHub says it was written (created_at)

    def user(self, fake: FakeGitHub) -> dict[str, Any]:
        return {**fake._owner(), "login": self.login, "type": self.kind}

    def json(self, fake: FakeGitHub) -> dict[str, Any]:
        where = "pulls" if self.path else "issues"
        shape: dict[str, Any] = {
            "id": self.id, "body": self.body, "user": self.user(fake), "created_at": _stamp(self.written),
            "updated_at": _stamp(self.written),
            "url": f"{fake.url}/repos/{self.repo}/{where}/comments/{self.id}",
            "html_url": f"http://127.0.0.1:{fake._port}/{self.repo}/pull/{self.number}#discussion_r{self.id}"}
        if self.path:
            shape |= {"path": self.path, "line": self.line, "pull_request_review_id": 1,
                      "pull_request_url": f"{fake.url}/repos/{self.repo}/pulls/{self.number}"}
            if self.in_reply_to is not None:
                shape["in_reply_to_id"] = self.in_reply_to
        return shape


class FakeGitHub:
    """``url`` is the API base URL to configure; ``prefix="/api/v3"`` mimics GitHub Enterprise Server."""

    def __init__(self, *, token: str = "ghp_fake_token", scopes: str | None = "gist, repo", prefix: str = "") -> None:
        self.token = token
        self.scopes = scopes  # the X-OAuth-Scopes header; None: omitted, as for fine-grained tokens
        self.prefix = prefix
        self.requests: list[Recorded] = []
        self.gists: dict[str, StoredGist] = {}
        self.repos: dict[str, StoredRepo] = {}
        self.opened: list[OpenedPull] = []  # pull requests the bot opened
        self.tokens: set[str] = {token}  # every token it accepts: installation tokens it minted join them
        self.apps: dict[str, tuple[str, int]] = {}  # app id -> (public key PEM, installation id)
        self.pulls: dict[tuple[str, int], StoredPull] = {}  # ("owner/repo", number) -> the pull request
        self.commits: dict[tuple[str, str], tuple[str, dict[str, str]]] = {}  # -> (message, path -> patch)
        self.contents: dict[tuple[str, str, str], str] = {}  # ("owner/repo", ref, path) -> the file
        # pull requests people comment on (their own section below)
        self.permissions: dict[tuple[str, str], str] = {}  # ("owner/repo", login) -> admin, write, read...
        self.issue_comments: list[Comment] = []
        self.review_comments: list[Comment] = []
        self.reviews: list[PostedReview] = []
        self.git_root: Path | None = None  # where the bot's pull requests' diffs come from (``serve_diffs_from``)
        self._comment_ids = itertools.count(1001)
        # GitHub numbers reviews in a sequence of their own, apart from comments: their ids say nothing of order.
        self._review_ids = itertools.count(501)
        self._faults: list[Fault] = []
        self._ids = itertools.count(1)
        self.ci = FakeCi(self)  # commit statuses, check runs, Actions job logs (tests/fakes/github_ci.py)
        self._runner: web.AppRunner | None = None
        self._port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}{self.prefix}"

    @property
    def html_url(self) -> str:
        return f"http://127.0.0.1:{self._port}/gist"

    # --- errors on demand -------------------------------------------------------------------------------

    def fail(self, status: int, message: str = "", *, times: int | None = 1, headers: dict[str, str] | None = None,
             method: str | None = None, path: str | None = None) -> None:
        """The next ``times`` matching requests get ``status`` (``times=None``: every one from now on)."""
        body = {"message": message or _REASONS.get(status, "Error"), "documentation_url": DOCS}
        self._faults.append(Fault(status, body, headers or {}, times, method, path))

    def stall(self, seconds: float, *, times: int | None = 1) -> None:
        """The next ``times`` requests are answered normally, but only after ``seconds``."""
        self._faults.append(Fault(0, {}, {}, times, None, None, delay_s=seconds))

    def rate_limit(self, *, reset_in_s: float, times: int = 1, status: int = 403) -> None:
        """GitHub's primary rate limit: 403, ``x-ratelimit-remaining: 0`` and the reset time."""
        headers = {"x-ratelimit-limit": "5000", "x-ratelimit-remaining": "0",
                   "x-ratelimit-reset": str(int(time.time() + reset_in_s)), "x-ratelimit-used": "5000"}
        self.fail(status, "API rate limit exceeded for user ID 1.", times=times, headers=headers)

    def secondary_rate_limit(self, *, retry_after_s: int, times: int = 1, status: int = 403) -> None:
        message = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
        self.fail(status, message, times=times, headers={"retry-after": str(retry_after_s)})

    def calls(self) -> list[tuple[str, str]]:
        return [(r.method, r.path) for r in self.requests]

    # --- lifecycle --------------------------------------------------------------------------------------

    async def start(self) -> FakeGitHub:
        app = web.Application(middlewares=[self._record, self._inject_faults, self._authenticate])
        p = self.prefix
        app.router.add_get(f"{p}/user", self._user)
        app.router.add_post(f"{p}/gists", self._create)
        app.router.add_get(f"{p}/gists/{{id}}", self._get)
        app.router.add_patch(f"{p}/gists/{{id}}", self._edit)
        repo = f"{p}/repos/{{owner}}/{{repo}}"
        app.router.add_get(f"{repo}/pulls/{{n}}", self._pull)
        app.router.add_get(f"{repo}/pulls/{{n}}/files", self._pull_files)
        app.router.add_get(f"{repo}/pulls/{{n}}/comments", self._pull_comments)
        app.router.add_post(f"{repo}/pulls/{{n}}/reviews", self._post_review)
        app.router.add_get(f"{repo}/commits/{{sha}}", self._commit_json)
        app.router.add_get(f"{repo}/contents/{{path:.+}}", self._contents)
        self._route_comments(app, repo)
        app.router.add_post(f"{p}/app/installations/{{id}}/access_tokens", self._mint)
        r = f"{p}/repos/{{owner}}/{{name}}"
        app.router.add_get(r, self._repo)
        app.router.add_get(f"{r}/branches/{{branch:.+}}", self._branch)
        app.router.add_get(f"{r}/pulls", self._list_pulls)
        app.router.add_post(f"{r}/pulls", self._create_pull)
        app.router.add_patch(f"{r}/pulls/{{number}}", self._edit_pull)
        app.router.add_post(f"{r}/issues/{{number}}/labels", self._add_labels)
        self.ci.add_routes(app, p)
        self._runner, self._port = await loopback.start(app)
        return self

    async def close(self) -> None:
        if self._runner:
            await self._runner.cleanup()

    async def __aenter__(self) -> FakeGitHub:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- middlewares ------------------------------------------------------------------------------------

    @web.middleware
    async def _record(self, request: web.Request, handler: Any) -> web.StreamResponse:
        body = await request.text()
        path = request.path.removeprefix(self.prefix)
        self.requests.append(Recorded(request.method, path, dict(request.headers), json.loads(body) if body else None))
        return await handler(request)

    @web.middleware
    async def _inject_faults(self, request: web.Request, handler: Any) -> web.StreamResponse:
        path = request.path.removeprefix(self.prefix)
        for fault in self._faults:
            if fault.times != 0 and fault.method in (None, request.method) and path.startswith(fault.path or ""):
                if fault.times is not None:
                    fault.times -= 1
                await asyncio.sleep(fault.delay_s)
                if fault.status:
                    return self._json(fault.body, fault.status, fault.headers)
                break
        return await handler(request)

    @web.middleware
    async def _authenticate(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if request.path.startswith(f"{self.prefix}/app/"):
            return await handler(request)  # a GitHub App's JWT, checked by the endpoint
        if request.path.startswith(LOGS_PATH):
            return await handler(request)  # the log storage GitHub redirects to: its address is the grant
        if request.headers.get("Authorization", "").removeprefix("token ") not in self.tokens:
            return self._json({"message": "Bad credentials", "documentation_url": DOCS}, 401)
        writes_gist = request.method in ("POST", "PATCH") and request.path.startswith(f"{self.prefix}/gists")
        if writes_gist and self.scopes is not None and "gist" not in self.scopes.split(", "):
            return self._json({"message": "Not Found", "documentation_url": DOCS}, 404)
        return await handler(request)

    # --- endpoints --------------------------------------------------------------------------------------

    async def _user(self, request: web.Request) -> web.Response:
        return self._json(self._owner())

    async def _create(self, request: web.Request) -> web.Response:
        data = await request.json()
        files = {name: spec.get("content", "") for name, spec in (data.get("files") or {}).items()}
        problem = _invalid(files)
        if problem:
            return problem
        gist = StoredGist(f"{next(self._ids):032x}", data.get("description", ""), bool(data.get("public")), files)
        self._commit(gist, additions=sum(c.count("\n") + 1 for c in files.values()), deletions=0)
        self.gists[gist.id] = gist
        return self._json(self._gist_json(gist), 201)

    async def _get(self, request: web.Request) -> web.Response:
        gist = self.gists.get(request.match_info["id"])
        return self._json(self._gist_json(gist)) if gist else self._not_found()

    async def _edit(self, request: web.Request) -> web.Response:
        gist = self.gists.get(request.match_info["id"])
        if not gist:
            return self._not_found()
        data = await request.json()
        files = dict(gist.files)
        for name, spec in (data.get("files") or {}).items():
            if spec is None:
                files.pop(name, None)
            else:
                content = spec.get("content", files.get(name, ""))
                files.pop(name, None)
                files[spec.get("filename") or name] = content
        problem = _invalid(files)
        if problem:
            return problem
        gist.files, gist.description = files, data.get("description", gist.description)
        self._commit(gist, additions=1, deletions=1)
        return self._json(self._gist_json(gist))

    # --- a GitHub App's installation tokens ------------------------------------------------------------

    def add_app(self, app_id: str, public_key_pem: str, installation_id: int) -> None:
        self.apps[app_id] = (public_key_pem, installation_id)

    async def _mint(self, request: web.Request) -> web.Response:
        """An installation token for a JWT the App signed with its private key (RS256, iss = the app id)."""
        import jwt

        bearer = request.headers.get("Authorization", "").removeprefix("Bearer ")
        try:
            app_id = str(jwt.decode(bearer, options={"verify_signature": False})["iss"])
            public_key, installation = self.apps[app_id]
            jwt.decode(bearer, public_key, algorithms=["RS256"])
        except (KeyError, jwt.PyJWTError):
            return self._json({"message": "A JSON web token could not be decoded", "documentation_url": DOCS}, 401)
        if int(request.match_info["id"]) != installation:
            return self._not_found()
        token = f"ghs_{hashlib.sha1(bearer.encode()).hexdigest()[:36]}"
        self.tokens.add(token)
        expires = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
        return self._json({"token": token, "expires_at": expires, "permissions": {
            "contents": "write", "pull_requests": "write"}, "repository_selection": "selected"}, 201)

    # --- repositories and pull requests ------------------------------------------------------------

    def add_repo(self, full_name: str, **kw: Any) -> StoredRepo:
        self.repos[full_name.lower()] = repo = StoredRepo(full_name, **kw)
        return repo

    def _stored_repo(self, request: web.Request) -> StoredRepo | None:
        return self.repos.get(f"{request.match_info['owner']}/{request.match_info['name']}".lower())

    async def _repo(self, request: web.Request) -> web.Response:
        repo = self._stored_repo(request)
        return self._json(self._repo_json(repo)) if repo else self._not_found()

    async def _branch(self, request: web.Request) -> web.Response:
        repo = self._stored_repo(request)
        if repo is None:
            return self._not_found()
        name = request.match_info["branch"]
        if name != repo.default_branch and name not in repo.protected:
            return self._json({"message": "Branch not found", "documentation_url": DOCS}, 404)
        return self._json({"name": name, "protected": name in repo.protected,
                           "commit": {"sha": "0" * 40, "url": ""}, "_links": {},
                           **self.ci.protection(repo.full_name, name)})

    async def _list_pulls(self, request: web.Request) -> web.Response:
        repo = self._stored_repo(request)
        if repo is None:
            return self._not_found()
        owner = repo.full_name.split("/")[0]
        q = request.query
        found = [pr for pr in self.opened if pr.repo == repo.full_name and pr.state == q.get("state", "open")
                 and ("head" not in q or q["head"] == f"{owner}:{pr.head}") and q.get("base", pr.base) == pr.base]
        return self._json([self._pull_json(pr) for pr in found])

    async def _create_pull(self, request: web.Request) -> web.Response:
        repo = self._stored_repo(request)
        if repo is None:
            return self._not_found()
        data = await request.json()
        if any(pr.repo == repo.full_name and pr.head == data["head"] and pr.state == "open" for pr in self.opened):
            return self._json({"message": "Validation Failed", "documentation_url": DOCS, "errors": [
                {"resource": "PullRequest", "code": "custom",
                 "message": f"A pull request already exists for {data['head']}."}]}, 422)
        pull = OpenedPull(len(self.opened) + 1, repo.full_name, data["head"], data["base"], data["title"],
                          data.get("body", ""), bool(data.get("draft")))
        self.opened.append(pull)
        return self._json(self._pull_json(pull), 201)

    def _opened_pull(self, request: web.Request) -> OpenedPull | None:
        repo = self._stored_repo(request)
        number = int(request.match_info["number"])
        return next((pr for pr in self.opened if repo and pr.repo == repo.full_name and pr.number == number), None)

    async def _edit_pull(self, request: web.Request) -> web.Response:
        pull = self._opened_pull(request)
        if pull is None:
            return self._not_found()
        data = await request.json()
        pull.body = data.get("body", pull.body)
        pull.title = data.get("title", pull.title)
        return self._json(self._pull_json(pull))

    async def _add_labels(self, request: web.Request) -> web.Response:
        pull = self._opened_pull(request)
        if pull is None:
            return self._not_found()
        data = await request.json()
        names = data.get("labels", data) if isinstance(data, dict) else data
        pull.labels += [n for n in names if n not in pull.labels]
        return self._json([{"name": n, "color": "ededed", "url": ""} for n in pull.labels])

    def _repo_json(self, repo: StoredRepo) -> dict[str, Any]:
        owner, name = repo.full_name.split("/")
        return {"id": 1, "name": name, "full_name": repo.full_name, "private": True, "size": repo.size_kb,
                "default_branch": repo.default_branch, "owner": {**self._owner(), "login": owner},
                "html_url": f"http://127.0.0.1:{self._port}/{repo.full_name}", "url": f"{self.url}/repos/{repo.full_name}",
                "permissions": {"admin": False, "push": repo.push, "pull": True}}

    def _pull_json(self, pull: OpenedPull) -> dict[str, Any]:
        html = f"http://127.0.0.1:{self._port}/{pull.repo}/pull/{pull.number}"
        return {"id": pull.number, "number": pull.number, "state": pull.state, "title": pull.title,
                "body": pull.body, "draft": pull.draft, "html_url": html, "merged": pull.merged,
                "merged_at": "2026-01-01T00:00:00Z" if pull.merged else None,
                "url": f"{self.url}/repos/{pull.repo}/pulls/{pull.number}",
                "issue_url": f"{self.url}/repos/{pull.repo}/issues/{pull.number}",
                "head": {"ref": pull.head, "label": pull.head, "sha": self._head_sha(pull)},
                "base": {"ref": pull.base, "label": pull.base},
                "labels": [{"name": n} for n in pull.labels], "user": self._owner()}
    def _head_sha(self, pull: OpenedPull) -> str:
        """The head commit of a pull request the bot opened: its branch's, on the git host (``serve_diffs_from``)."""
        if self.git_root is None:
            return ""
        return _git(self.git_root / f"{pull.repo}.git", "rev-parse", f"refs/heads/{pull.head}").strip()

    def _stored_pull(self, request: web.Request) -> StoredPull | None:
        full = f"{request.match_info['owner']}/{request.match_info['repo']}"
        return self.pulls.get((full, int(request.match_info["n"])))

    async def _pull(self, request: web.Request) -> web.Response:
        pull = self._stored_pull(request)
        if pull is None:
            opened = self._opened_by_number(request)  # one the bot opened
            return self._json(self._pull_json(opened)) if opened else self._not_found()
        full = f"{request.match_info['owner']}/{request.match_info['repo']}"
        api = f"{self.url}/repos/{full}/pulls/{pull.number}"
        head_repo = pull.head_repo or full
        return self._json({"url": api, "id": pull.number, "number": pull.number, "state": "open", "title": pull.title,
                           "body": pull.body, "user": self._owner(), "html_url": f"{self.html_url}/{full}/pull/{pull.number}",
                           "review_comments_url": f"{api}/comments", "changed_files": len(pull.files),
                           "issue_url": f"{self.url}/repos/{full}/issues/{pull.number}",
                           "head": {"ref": pull.head, "sha": "1" * 40, "label": pull.head,
                                    "repo": {"full_name": head_repo, "name": head_repo.split("/")[-1],
                                             "url": f"{self.url}/repos/{head_repo}"}},
                           "base": {"ref": pull.base, "sha": "0" * 40, "label": pull.base,
                                    "repo": {"full_name": full, "url": f"{self.url}/repos/{full}"}},
                           "labels": [{"name": n, "color": "ededed"} for n in pull.labels]})

    async def _pull_files(self, request: web.Request) -> web.Response:
        files = self._diff_of(request)
        if files is None:
            return self._not_found()
        items = [{"sha": hashlib.sha1(patch.encode()).hexdigest(), "filename": path, "status": "modified",
                  "patch": patch, "additions": patch.count("\n+"), "deletions": patch.count("\n-")}
                 for path, patch in files.items()]
        return self._paged(request, items)

    # --- the bot's pull requests: their diffs (from the git host's repositories) and reviews ---------------

    def serve_diffs_from(self, root: Path) -> None:
        """The bot's pull requests' files and head commits come from the bare repositories ``root/OWNER/NAME.git``
        (a git host's), as GitHub computes them: ``base...head``."""
        self.git_root = root

    def _opened_by_number(self, request: web.Request) -> OpenedPull | None:
        full = f"{request.match_info['owner']}/{request.match_info['repo']}"
        return next((pr for pr in self.opened if pr.repo.lower() == full.lower()
                     and pr.number == int(request.match_info["n"])), None)

    def _diff_of(self, request: web.Request) -> dict[str, str] | None:
        """A pull request's files, path -> patch (its hunks): a stored one's, or the bot's from git."""
        stored = self._stored_pull(request)
        if stored is not None:
            return stored.files
        opened = self._opened_by_number(request)
        if opened is None or self.git_root is None:
            return None if opened is None else {}
        bare = self.git_root / f"{opened.repo}.git"
        diff = _git(bare, "diff", "--no-color", "-U3", f"{opened.base}...{opened.head}")
        files: dict[str, str] = {}
        for section in re.split(r"^diff --git ", diff, flags=re.M)[1:]:
            target = re.search(r"^\+\+\+ b/(.+)$", section, re.M)
            if target and "\n@@" in section:
                files[target.group(1)] = section[section.index("\n@@") + 1:].rstrip("\n")
        return files

    async def _post_review(self, request: web.Request) -> web.Response:
        """GitHub's rules: a known event; a body for COMMENT without comments; the commit the head's; each
        comment on a right-side line of the diff (an added or a context line), or the whole review is refused."""
        files = self._diff_of(request)
        if files is None:
            return self._not_found()
        data = await request.json()
        comments = data.get("comments") or []
        event = data.get("event", "PENDING")
        if event not in ("APPROVE", "REQUEST_CHANGES", "COMMENT", "PENDING"):
            return self._unprocessable(f"Invalid event: {event}")
        if event in ("REQUEST_CHANGES", "COMMENT") and not comments and not data.get("body"):
            return self._unprocessable("Review Body is required for COMMENT events without comments")
        opened = self._opened_by_number(request)
        if opened is not None and self.git_root is not None and data.get("commit_id"):
            head = _git(self.git_root / f"{opened.repo}.git", "rev-parse", opened.head).strip()
            if data["commit_id"] != head:
                return self._unprocessable("commit_id is not part of the pull request")
        for comment in comments:
            lines = _right_lines(files.get(comment.get("path", ""), ""))
            if comment.get("side", "RIGHT") != "RIGHT" or comment.get("line") not in lines or not comment.get("body"):
                return self._unprocessable("Pull request review thread line must be part of the diff and Pull "
                                           "request review thread diff hunk can't be blank")
        full = f"{request.match_info['owner']}/{request.match_info['repo']}"
        number = int(request.match_info["n"])
        review = PostedReview(full, number, event, data.get("body", ""), data.get("commit_id", ""), comments)
        self.reviews.append(review)
        for comment in comments:
            self.add_review_comment(full, number, LOGIN, comment["body"], path=comment["path"], line=comment["line"])
        return self._json({"id": next(self._ids), "user": self._owner(), "body": review.body, "state": "COMMENTED",
                           "commit_id": review.commit_id, "submitted_at": _now(),
                           "html_url": f"http://127.0.0.1:{self._port}/{full}/pull/{number}#pullrequestreview",
                           "pull_request_url": f"{self.url}/repos/{full}/pulls/{number}"})

    def _unprocessable(self, error: str) -> web.Response:
        return self._json({"message": "Unprocessable Entity", "errors": [error], "documentation_url": DOCS}, 422)

    async def _pull_comments(self, request: web.Request) -> web.Response:
        pull = self._stored_pull(request)
        if pull is None:
            return self._not_found()
        items = [{"id": i + 1, "user": {**self._owner(), "login": login}, "path": path, "body": body}
                 for i, (login, path, body) in enumerate(pull.comments)]
        full = f"{request.match_info['owner']}/{request.match_info['repo']}"
        items += [c.json(self) for c in self.review_comments if (c.repo, c.number) == (full, pull.number)]
        return self._paged(request, items)

    async def _commit_json(self, request: web.Request) -> web.Response:
        full = f"{request.match_info['owner']}/{request.match_info['repo']}"
        sha = request.match_info["sha"]
        found = next(((s, c) for (r, s), c in self.commits.items() if r == full and s.startswith(sha)), None)
        if found is None and self.git_root is not None and (self.git_root / f"{full}.git").is_dir():
            pushed = subprocess.run(["git", "log", "-1", "--format=%H%n%B", sha, "--"], capture_output=True, text=True,
                                    cwd=self.git_root / f"{full}.git")  # a commit the bot pushed to the git host
            if pushed.returncode == 0:
                found = (pushed.stdout.split("\n", 1)[0], (pushed.stdout.split("\n", 1)[1].strip(), {}))
        if found is None:
            return self._not_found()
        sha, (message, files) = found
        return self._json({"sha": sha, "url": f"{self.url}/repos/{full}/commits/{sha}",
                           "commit": {"message": message, "author": {"name": "Octo", "email": "o@example.com"}},
                           "files": [{"filename": path, "status": "modified", "patch": patch}
                                     for path, patch in files.items()]})

    async def _contents(self, request: web.Request) -> web.Response:
        full = f"{request.match_info['owner']}/{request.match_info['repo']}"
        path, ref = request.match_info["path"], request.query.get("ref", "main")
        content = self.contents.get((full, ref, path))
        if content is None:
            return self._not_found()
        data = content.encode()
        return self._json({"type": "file", "encoding": "base64", "size": len(data), "name": path.rsplit("/", 1)[-1],
                           "path": path, "content": base64.b64encode(data).decode(), "sha": hashlib.sha1(data).hexdigest(),
                           "url": f"{self.url}/repos/{full}/contents/{path}?ref={ref}"})

    def _paged(self, request: web.Request, items: list[dict[str, Any]]) -> web.Response:
        """GitHub's pagination: ``per_page`` (30 by default) and a ``Link`` header to the next page."""
        per_page = int(request.query.get("per_page", "30"))
        page = int(request.query.get("page", "1"))
        chunk = items[(page - 1) * per_page: page * per_page]
        headers = {}
        if page * per_page < len(items):
            nxt = request.url.update_query(page=str(page + 1), per_page=str(per_page))
            headers["Link"] = f'<{nxt}>; rel="next"'
        return self._json(chunk, headers=headers)

    # --- pull requests people comment on: comments, review threads, reactions, permissions, webhooks ---------

    def add_pull_request(self, full_name: str, number: int, head: str, *, base: str = "main",
                         labels: tuple[str, ...] = (), head_repo: str = "") -> StoredPull:
        """A pull request from ``head`` (in ``head_repo``: a fork, when it is not ``full_name``) into ``base``."""
        self.pulls[(full_name, number)] = pull = StoredPull(number, f"Pull {number}", "", head=head,
                                                            head_repo=head_repo, base=base, labels=list(labels))
        return pull

    def grant(self, full_name: str, login: str, permission: str) -> None:
        """``login``'s permission on the repository: admin, maintain, write, triage or read."""
        self.permissions[(full_name.lower(), login.lower())] = permission

    def add_issue_comment(self, full_name: str, number: int, login: str, body: str, *, kind: str = "User") -> Comment:
        comment = Comment(next(self._comment_ids), full_name, number, login, body, kind=kind)
        self.issue_comments.append(comment)
        return comment

    def add_review_comment(self, full_name: str, number: int, login: str, body: str, *, path: str = "app.py",
                           line: int = 1, in_reply_to: int | None = None, kind: str = "User") -> Comment:
        comment = Comment(next(self._comment_ids), full_name, number, login, body, path=path, line=line,
                          in_reply_to=in_reply_to, kind=kind)
        self.review_comments.append(comment)
        return comment

    def thread_of(self, root: int) -> list[Comment]:
        """A review thread: its first comment and the replies under it, oldest first."""
        return [c for c in self.review_comments if root in (c.id, c.in_reply_to)]

    def conversation(self, full_name: str, number: int) -> list[Comment]:
        return [c for c in self.issue_comments if (c.repo, c.number) == (full_name, number)]

    async def send_webhook(self, url: str, event: str, payload: dict[str, Any], secret: str, *,
                           delivery: str = "", signature: str | None = None) -> tuple[int, str]:
        """POST a delivery as GitHub does: the JSON body, ``X-GitHub-Event``, ``X-GitHub-Delivery`` and
        ``X-Hub-Signature-256`` (HMAC-SHA256 of the body under ``secret``; ``signature`` overrides it, "" omits it)."""
        import aiohttp

        body = json.dumps(payload).encode()
        headers = {"Content-Type": "application/json", "User-Agent": "GitHub-Hookshot/fake", "X-GitHub-Event": event,
                   "X-GitHub-Delivery": delivery or f"{next(self._ids):08x}-0000-4000-8000-000000000000",
                   "X-GitHub-Hook-ID": "1"}
        signed = signature if signature is not None else \
            "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
        if signed:
            headers["X-Hub-Signature-256"] = signed
        async with aiohttp.ClientSession() as session, session.post(url, data=body, headers=headers) as response:
            return response.status, await response.text()

    def comment_payload(self, comment: Comment) -> tuple[str, dict[str, Any]]:
        """The event and payload GitHub sends when ``comment`` is created."""
        common = {"repository": {"full_name": comment.repo, "name": comment.repo.split("/")[1]},
                  "sender": comment.user(self)}
        if comment.path:
            return "pull_request_review_comment", {"action": "created", "comment": comment.json(self), **common,
                                                   "pull_request": {"number": comment.number}}
        return "issue_comment", {"action": "created", "comment": comment.json(self), **common, "issue": {
            "number": comment.number, "pull_request": {"url": f"{self.url}/repos/{comment.repo}/pulls/{comment.number}"}}}

    def review_payload(self, full_name: str, number: int, login: str, body: str) -> tuple[str, dict[str, Any]]:
        review = Comment(next(self._review_ids), full_name, number, login, body)
        return "pull_request_review", {"action": "submitted", "review": {**review.json(self), "state": "commented"},
                                       "pull_request": {"number": number}, "sender": review.user(self),
                                       "repository": {"full_name": full_name}}

    def _route_comments(self, app: web.Application, repo: str) -> None:
        app.router.add_get(f"{repo}/collaborators/{{user}}/permission", self._permission)
        app.router.add_post(f"{repo}/issues/{{n}}/comments", self._post_issue_comment)
        app.router.add_get(f"{repo}/issues/{{n}}/comments", self._list_issue_comments)
        app.router.add_patch(f"{repo}/issues/comments/{{id}}", self._edit_comment)
        app.router.add_post(f"{repo}/issues/comments/{{id}}/reactions", self._react)
        app.router.add_post(f"{repo}/pulls/{{n}}/comments/{{id}}/replies", self._reply)
        app.router.add_patch(f"{repo}/pulls/comments/{{id}}", self._edit_comment)
        app.router.add_post(f"{repo}/pulls/comments/{{id}}/reactions", self._react)

    async def _permission(self, request: web.Request) -> web.Response:
        full, user = f"{request.match_info['owner']}/{request.match_info['repo']}", request.match_info["user"]
        permission = self.permissions.get((full.lower(), user.lower()), "read")  # anyone may read a public one
        return self._json({"permission": permission, "role_name": permission,
                           "user": {**self._owner(), "login": user}})

    async def _post_issue_comment(self, request: web.Request) -> web.Response:
        full = f"{request.match_info['owner']}/{request.match_info['repo']}"
        body = (await request.json())["body"]
        comment = self.add_issue_comment(full, int(request.match_info["n"]), LOGIN, body)
        return self._json(comment.json(self), 201)

    async def _list_issue_comments(self, request: web.Request) -> web.Response:
        full = f"{request.match_info['owner']}/{request.match_info['repo']}"
        return self._paged(request, [c.json(self) for c in self.conversation(full, int(request.match_info["n"]))])

    async def _reply(self, request: web.Request) -> web.Response:
        full = f"{request.match_info['owner']}/{request.match_info['repo']}"
        root = next((c for c in self.review_comments if c.id == int(request.match_info["id"]) and c.repo == full), None)
        if root is None or root.number != int(request.match_info["n"]):
            return self._not_found()
        if root.in_reply_to is not None:  # GitHub answers replies to replies with a 422
            return self._json({"message": "Validation Failed", "documentation_url": DOCS}, 422)
        reply = self.add_review_comment(full, root.number, LOGIN, (await request.json())["body"], path=root.path,
                                        line=root.line, in_reply_to=root.id)
        return self._json(reply.json(self), 201)

    async def _edit_comment(self, request: web.Request) -> web.Response:
        kind = self.review_comments if "/pulls/" in request.path else self.issue_comments
        comment = next((c for c in kind if c.id == int(request.match_info["id"])), None)
        if comment is None:
            return self._not_found()
        comment.body = (await request.json())["body"]
        comment.edits += 1
        return self._json(comment.json(self))

    async def _react(self, request: web.Request) -> web.Response:
        kind = self.review_comments if "/pulls/" in request.path else self.issue_comments
        comment = next((c for c in kind if c.id == int(request.match_info["id"])), None)
        if comment is None:
            return self._not_found()
        content = (await request.json())["content"]
        comment.reactions.append(content)
        comment.reacted_at = comment.reacted_at or time.monotonic()
        return self._json({"id": next(self._ids), "content": content, "user": self._owner()}, 201)

    # --- GitHub's shapes --------------------------------------------------------------------------------

    def _commit(self, gist: StoredGist, additions: int, deletions: int) -> None:
        version = hashlib.sha1(json.dumps([gist.files, len(gist.history)]).encode()).hexdigest()
        gist.history.insert(0, {
            "user": self._owner(), "version": version, "committed_at": _now(),
            "change_status": {"total": additions + deletions, "additions": additions, "deletions": deletions},
            "url": f"{self.url}/gists/{gist.id}/{version}",
        })

    def _gist_json(self, gist: StoredGist) -> dict[str, Any]:
        api = f"{self.url}/gists/{gist.id}"
        return {
            "url": api, "forks_url": f"{api}/forks", "commits_url": f"{api}/commits", "id": gist.id,
            "node_id": f"G_{gist.id}", "git_pull_url": f"{self.html_url}/{gist.id}.git",
            "git_push_url": f"{self.html_url}/{gist.id}.git", "html_url": f"{self.html_url}/{gist.id}",
            "files": {name: self._file_json(gist, name, content) for name, content in sorted(gist.files.items())},
            "public": gist.public, "created_at": gist.history[-1]["committed_at"],
            "updated_at": gist.history[0]["committed_at"], "description": gist.description, "comments": 0,
            "comments_enabled": True, "user": None, "comments_url": f"{api}/comments", "owner": self._owner(),
            "forks": [], "history": gist.history, "truncated": False,
        }

    def _file_json(self, gist: StoredGist, name: str, content: str) -> dict[str, Any]:
        return {
            "filename": name, "type": "text/plain", "language": None, "size": len(content.encode()),
            "raw_url": f"{self.html_url}/{gist.id}/raw/{name}", "truncated": False, "content": content,
        }

    def _owner(self) -> dict[str, Any]:
        return {
            "login": LOGIN, "id": 1, "node_id": "MDQ6VXNlcjE=", "type": "User", "site_admin": False,
            "url": f"{self.url}/users/{LOGIN}", "html_url": f"http://127.0.0.1:{self._port}/{LOGIN}",
            "avatar_url": "", "name": "The Octocat",
        }

    def _json(self, body: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
        base = {"x-ratelimit-limit": "5000", "x-ratelimit-remaining": "4999",
                "x-ratelimit-reset": str(int(time.time()) + 3600), "x-github-media-type": "github.v3"}
        if self.scopes is not None and status != 401:
            base["X-OAuth-Scopes"] = self.scopes
        return web.json_response(body, status=status, headers={**base, **(headers or {})})

    def _not_found(self) -> web.Response:
        return self._json({"message": "Not Found", "documentation_url": DOCS}, 404)


_REASONS = {401: "Bad credentials", 403: "Forbidden", 404: "Not Found", 422: "Validation Failed",
            500: "Server Error", 502: "Bad Gateway", 503: "Service Unavailable"}


def _invalid(files: dict[str, str]) -> web.Response | None:
    """GitHub's 422 for a Gist with no files, a blank file, or a name with a slash."""
    bad = not files or any(not content.strip() or "/" in name for name, content in files.items())
    if not bad:
        return None
    body = {"message": "Validation Failed", "documentation_url": DOCS,
            "errors": [{"resource": "Gist", "code": "missing_field", "field": "files"}]}
    return web.json_response(body, status=422)


def _git(bare: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=bare, capture_output=True, text=True, check=True).stdout


def _right_lines(patch: str) -> set[int]:
    """The new file's line numbers a diff shows (context and added lines): the ones a review comment may take."""
    shown: set[int] = set()
    at = 0
    for text in patch.split("\n"):
        if text.startswith("@@"):
            at = int(text.split("+", 1)[1].split(",")[0].split(" ")[0])
        elif text.startswith(("+", " ")):
            shown.add(at)
            at += 1
    return shown


def _now() -> str:
    return _stamp(time.time())


def _stamp(when: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))
