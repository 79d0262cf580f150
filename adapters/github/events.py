"""A webhook delivery as the adapter sees it: a comment that may ask the bot for something (``Comment``), or a
commit whose CI changed (``commit_of``). Only what the event names is read from the payload: who wrote, where,
what. Whether they may ask, and what the pull request is (its branch, a fork, its labels), is read from the
API afterwards, never trusted from the payload."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.repos.github_markdown import MARKER

ISSUE_COMMENT, REVIEW_COMMENT, REVIEW = "issue_comment", "pull_request_review_comment", "pull_request_review"
CI_EVENTS = frozenset({"status", "check_run", "check_suite", "workflow_run"})
OWN_CHECKS = "codegen-chat/"  # the bot's own statuses and check runs: its own doing, never a reason to look again


@dataclass(frozen=True)
class Comment:
    """A person's comment on a pull request: a conversation comment, a review comment or a review."""

    event: str  # ISSUE_COMMENT, REVIEW_COMMENT or REVIEW
    repository: str  # owner/name
    number: int  # the pull request
    comment_id: int  # the comment's (or the review's) id
    login: str
    by_bot: bool  # the author is a bot account (user.type "Bot")
    body: str
    thread_root: int = 0  # a review comment's thread: the id of its first comment, which replies go under
    link: str = ""  # the comment's page
    written_at: float = 0.0  # when it was written (Unix time), 0.0 where the payload does not say

    @property
    def key(self) -> str:
        """One key per comment: every redelivery of it carries the same."""
        return f"{self.repository}#{self.number}:{self.event}:{self.comment_id}"

    @property
    def conversation(self) -> str:
        """The pull request is the conversation: its runs wait for each other, a follow-up continues the last."""
        return f"{self.repository}#{self.number}"


def comment_of(event: str, payload: dict[str, Any]) -> Comment | None:
    """The new comment a delivery carries, or None (an edit, a deletion, an issue that is no pull request, or
    a payload not shaped as GitHub sends one)."""
    repository = _text(_object(payload, "repository").get("full_name"))
    if not repository:
        return None
    if event == ISSUE_COMMENT and payload.get("action") == "created":
        issue = _object(payload, "issue")
        if not issue.get("pull_request"):
            return None  # a comment on a plain issue
        return _comment(event, repository, issue.get("number"), _object(payload, "comment"))
    if event == REVIEW_COMMENT and payload.get("action") == "created":
        comment = _object(payload, "comment")
        root = comment.get("in_reply_to_id") or comment.get("id")
        return _comment(event, repository, _object(payload, "pull_request").get("number"), comment, root)
    if event == REVIEW and payload.get("action") == "submitted":
        return _comment(event, repository, _object(payload, "pull_request").get("number"), _object(payload, "review"))
    return None


def _comment(event: str, repository: str, number: Any, comment: dict[str, Any], root: Any = 0) -> Comment | None:
    if not _number(number) or not _number(comment.get("id")):
        return None
    user = _object(comment, "user")
    return Comment(event, repository, number, comment["id"], _text(user.get("login")), user.get("type") == "Bot",
                   _text(comment.get("body")), root if _number(root) else 0, _text(comment.get("html_url")),
                   _time(comment.get("created_at") or comment.get("submitted_at")))


def _time(stamp: Any) -> float:
    """GitHub's ``2026-12-03T08:00:00Z`` as Unix time; 0.0 for anything else."""
    try:
        return datetime.fromisoformat(str(stamp)).timestamp() if stamp else 0.0  # "Z" read as UTC (3.11)
    except ValueError:
        return 0.0


def commit_of(event: str, payload: dict[str, Any]) -> tuple[str, str] | None:
    """(``owner/name``, sha) of the commit whose CI a delivery says changed; None for the bot's own checks."""
    if event not in CI_EVENTS:
        return None
    repository = _text(_object(payload, "repository").get("full_name"))
    if event == "status":
        sha, own = payload.get("sha"), _text(payload.get("context"))
    else:
        item = _object(payload, event)
        sha, own = item.get("head_sha"), _text(item.get("name"))
    if not repository or not isinstance(sha, str) or not sha or own.startswith(OWN_CHECKS):
        return None
    return repository, sha


def request_in(body: str, login: str) -> str | None:
    """The request a comment makes of ``@login``: its text without the mention, or None when it does not
    mention the bot outside a quotation (a reply quoting an earlier request asks nothing by quoting it)."""
    if MARKER in body:
        return None  # the bot's own words
    lines = [line for line in body.splitlines() if not line.lstrip().startswith(">")]
    text = "\n".join(lines)
    mention = re.compile(rf"(?<![\w@/-])@{re.escape(login)}(?![\w-])", re.IGNORECASE)
    if not mention.search(text):
        return None
    return mention.sub("", text, count=1).strip()


def _object(payload: dict[str, Any], key: str) -> dict[str, Any]:
    value = payload.get(key)
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0
