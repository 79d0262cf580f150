"""GitHub links in a thread, read through the API: a pull request (its description, its diff within
``[input] max_link_diff_chars``, its review comments), a commit (its message and diff) or a file (given
as a file). Only links to repositories the allow-list names are fetched, with the bot's ``GITHUB_TOKEN``;
every other link is left as text. PyGithub blocks, so each read runs in a worker thread; it is imported
only when a link is read, so a run with none (and ``codegen-chat run``'s start) never loads it.

The allow-list is its own small check (``AllowedRepositories``) so that a repositories table kept
elsewhere in the config can stand in for it.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Protocol
from urllib.parse import unquote, urlsplit

from agents.errors import UserInputError
from agents.types import Attachment, ThreadMessage
from bot.chat.badges import cut_at_word
from bot.config.sections import InputConfig
from bot.runs.attachments import check_size, to_attachment

log = logging.getLogger(__name__)

MAX_LINKS = 5  # links read per request; more are left as text
MAX_REVIEW_COMMENTS = 50
TIMEOUT_S = 15
_LINK = re.compile(r"https?://[^\s<>|\"')\]]+")
_NAME = r"[A-Za-z0-9_.-]+"
_PULL = re.compile(rf"^/({_NAME})/({_NAME})/pull/(\d+)(?:/.*)?$")
_COMMIT = re.compile(rf"^/({_NAME})/({_NAME})/commit/([0-9a-fA-F]{{7,40}})/?$")
_BLOB = re.compile(rf"^/({_NAME})/({_NAME})/blob/([^/]+)/(.+)$")


class AllowedRepositories(Protocol):
    def allows(self, repository: str) -> bool: ...


@dataclass(frozen=True)
class RepositoryPatterns:
    """``owner/name`` entries, or ``owner/*`` for all of an owner's; matched without regard to case."""

    patterns: tuple[str, ...]

    def allows(self, repository: str) -> bool:
        return any(fnmatchcase(repository.lower(), p.lower()) for p in self.patterns if "/" in p)


@dataclass(frozen=True)
class Link:
    kind: str  # "pull", "commit", "file"
    repository: str  # owner/name
    ref: str  # the pull request's number, the commit's sha, or the file's ref
    path: str = ""  # the file's path

    @property
    def label(self) -> str:
        return {"pull": f"{self.repository}#{self.ref}", "commit": f"{self.repository}@{self.ref[:12]}",
                "file": f"{self.repository}/{self.path}@{self.ref}"}[self.kind]


@dataclass(frozen=True)
class Linked:
    messages: tuple[ThreadMessage, ...] = ()  # pull requests and commits, as quoted material
    files: tuple[Attachment, ...] = ()
    notes: tuple[str, ...] = ()


def github_links(texts: Iterable[str], host: str = "github.com") -> list[Link]:
    """The GitHub pull request, commit and file links in ``texts``, each once, in order."""
    found: list[Link] = []
    for text in texts:
        for url in _LINK.findall(text):
            parts = urlsplit(url)
            if (parts.hostname or "").lower() != host:
                continue
            link = _parse(unquote(parts.path))
            if link is not None and link not in found:
                found.append(link)
    return found


def _parse(path: str) -> Link | None:
    if match := _PULL.match(path):
        return Link("pull", f"{match[1]}/{match[2]}", match[3])
    if match := _COMMIT.match(path):
        return Link("commit", f"{match[1]}/{match[2]}", match[3])
    if match := _BLOB.match(path):
        return Link("file", f"{match[1]}/{match[2]}", match[3], match[4])
    return None


class LinkReader:
    """Reads the allowed GitHub links of a thread; without a token or an allowed repository, none."""

    def __init__(self, limits: InputConfig, api_url: str, token: str,
                 allowed: AllowedRepositories | None = None) -> None:
        self._limits, self._api_url, self._token = limits, api_url.rstrip("/"), token
        self._allowed = allowed or RepositoryPatterns(limits.link_repositories)
        self._host = _html_host(api_url)

    async def read(self, texts: Sequence[str], may_read: Callable[[str], bool] = lambda repository: True) -> Linked:
        """What the allowed links say; ``may_read``: whether the person who asked may have ``owner/name`` read
        for them (a repository kept for some people is read for them alone)."""
        links = [link for link in github_links(texts, self._host) if self._allowed.allows(link.repository)]
        theirs = sorted({link.repository for link in links if not may_read(link.repository)})
        links = [link for link in links if link.repository not in theirs]
        refused = [f"Links to {name} were not read: you are not on the list of people who may use it "
                   f'([repos."{name}"] users).' for name in theirs]
        if not links:
            return Linked(notes=tuple(refused))
        if not self._token:
            return Linked(notes=("GitHub links in the thread were not read: GITHUB_TOKEN is not set.",))
        notes = [*refused, *([f"Only the first {MAX_LINKS} GitHub links were read."] if len(links) > MAX_LINKS else [])]
        chosen = links[:MAX_LINKS]
        results = await asyncio.gather(*(asyncio.to_thread(self._read_one, link) for link in chosen),
                                       return_exceptions=True)  # at once: each may take up to TIMEOUT_S
        messages: list[ThreadMessage] = []
        files: list[Attachment] = []
        for link, read in zip(chosen, results, strict=True):
            if isinstance(read, BaseException):
                notes.append(self._why_not(link, read))
            elif isinstance(read, Attachment):
                files.append(read)
            else:
                messages.append(read)
        return Linked(tuple(messages), tuple(files), tuple(notes))

    @staticmethod
    def _why_not(link: Link, error: BaseException) -> str:
        """One line for a link that could not be read; the run goes on without it."""
        from github import GithubException

        if isinstance(error, UserInputError):  # a file a person could not attach either
            return f"{link.label} was not read: {error}"
        if isinstance(error, GithubException):
            log.warning("reading %s from GitHub failed: HTTP %s", link.label, error.status)
            return f"{link.label} could not be read from GitHub (HTTP {error.status})."
        if not isinstance(error, Exception):
            raise error  # a cancellation or an exit is not a link's trouble
        log.warning("reading %s from GitHub failed: %s", link.label, type(error).__name__)
        return f"{link.label} could not be read from GitHub ({type(error).__name__})."

    def _read_one(self, link: Link) -> ThreadMessage | Attachment:
        from github import Auth, Github, GithubException

        github = Github(auth=Auth.Token(self._token), base_url=self._api_url, timeout=TIMEOUT_S, retry=None,
                        user_agent="codegen-chat", lazy=True)  # no request until something is read
        try:
            repo = github.get_repo(link.repository)
            if link.kind == "file":
                content = repo.get_contents(link.path, ref=link.ref)
                if isinstance(content, list):
                    raise GithubException(404, "a folder, not a file", None)
                bound = self._limits.max_attachment_bytes  # as for a file shared in the thread: text, within the bound
                check_size(link.path, content.size, bound)
                return to_attachment(link.path, content.decoded_content, bound, folders=True)
            if link.kind == "commit":
                commit = repo.get_commit(link.ref)
                text = f"Commit {link.label}: {self._within(commit.commit.message)}\n\n{self._diff(commit.files)}"
                return ThreadMessage(f"GitHub commit {link.label}", text)
            pull = repo.get_pull(int(link.ref))
            comments = [f"- {c.user.login} on {c.path}: {c.body}"
                        for c in list(pull.get_review_comments())[:MAX_REVIEW_COMMENTS]]
            text = (f"Pull request {link.label}: {pull.title}\n\n{self._within(pull.body or '(no description)')}\n\n"
                    f"{self._diff(pull.get_files())}"
                    + ("\n\nReview comments:\n" + self._within("\n".join(comments)) if comments else ""))
            return ThreadMessage(f"GitHub pull request {link.label}", text)
        finally:
            github.close()

    def _within(self, written: str) -> str:
        """What people wrote on GitHub (a description, review comments, a commit message), within the bound of what
        they write in a thread (``thread_chars``), the cut said: a description can be as long as a release's notes."""
        bound = self._limits.thread_chars
        if len(written) <= bound:
            return written
        return f"{cut_at_word(written, bound)}\n[the rest is cut: [input] thread_chars = {bound:,}]"

    def _diff(self, files: Iterable[object]) -> str:
        """The changed files' patches as one diff, cut at ``max_link_diff_chars`` (the cut said)."""
        bound = self._limits.max_link_diff_chars
        out, size = [], 0
        for file in files:
            patch = f"--- a/{file.filename}\n+++ b/{file.filename}\n{file.patch or '(binary or too large)'}\n"  # type: ignore[attr-defined]
            if size + len(patch) > bound:
                out.append(f"[the rest of the diff is cut: [input] max_link_diff_chars = {bound:,}]")
                break
            out.append(patch)
            size += len(patch)
        return "Diff:\n" + "".join(out) if out else ""


def _html_host(api_url: str) -> str:
    """Where the links point: github.com for its API, the server itself for GitHub Enterprise."""
    host = (urlsplit(api_url).hostname or "").lower()
    return "github.com" if host in ("api.github.com", "") else host
