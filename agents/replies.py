"""Parsing of model replies. The formats are documented in ``prompts/FORMATS.md``.

Parsers are tolerant of the common variants models produce; when a reply cannot be read at all
they raise ``ReplyFormatError`` with a reason the model is shown once in a format reminder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from agents.paths import UnsafePath, project_path
from agents.types import FileSet


class ReplyFormatError(ValueError):
    """The reply does not follow its format; the message says what is missing."""


_FENCE = re.compile(
    r"^(?P<indent>[ \t]{0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
_PATH = r"[\w.\-/\\]+\.[\w]+|[\w.\-/]*(?:Makefile|Dockerfile|Cargo\.toml|go\.mod)"
_INFO_PATH = re.compile(
    r"(?:^|\s|:)(?:path|file|filename|title|name)\s*[=:]\s*[\"']?(?P<path>[^\"'\s]+)"
    r"|(?:^[\w+#-]*[:\s]+|^)(?P<bare>" + _PATH + r")\s*$"
)
_LABEL = re.compile(
    r"^\s*(?:#+\s*|[-*]\s*|\d+\.\s*)?(?:\*\*|__)?\s*(?:(?:file(?:name)?|path)\s*[:=]?\s*)?[`*\"']*(?P<path>" + _PATH
    + r")[`*\"']*\s*(?:\*\*|__)?\s*:?\s*(?:\(.*\))?\s*$",
    re.IGNORECASE,
)
_MARKER_LINE = re.compile(r"^\s*(?:#|//|--|;|/\*)\s*(?:file(?:name)?|path)\s*:\s*(?P<path>\S+?)\s*(?:\*/)?\s*$", re.I)


def parse_files(text: str) -> FileSet:
    """Files from fenced code blocks, each named by its info string, a label line just above, or a
    ``# file: path`` first line. Blocks with no name are skipped; no named block at all is an error."""
    files: dict[str, str] = {}
    unnamed = 0
    for match in _FENCE.finditer(text):
        body = match.group("body")
        path = _path_from_info(match.group("info")) or _path_from_label(text, match.start())
        first, _, rest = body.partition("\n")
        marker = _MARKER_LINE.match(first)
        if marker:
            path, body = path or marker.group("path"), rest
        if not path:
            unnamed += 1
            continue
        files[safe_path(path)] = body if body.endswith("\n") or not body else body + "\n"
    if not files:
        if unnamed:
            raise ReplyFormatError("code blocks had no file names; put the path after the language: ```python path=src/app.py")
        raise ReplyFormatError("no fenced code block with a file was found")
    return FileSet(files)


def safe_path(path: str) -> str:
    """A relative, normalised path the team may write (see ``agents.paths``), or ``ReplyFormatError``."""
    try:
        return project_path(path)
    except UnsafePath as error:
        raise ReplyFormatError(str(error)) from None


def _path_from_info(info: str) -> str | None:
    info = info.strip()
    if not info:
        return None
    match = _INFO_PATH.search(info)
    if not match:
        return None
    return match.group("path") or match.group("bare")


def _path_from_label(text: str, fence_start: int) -> str | None:
    """A file name on one of the two non-blank lines above a fence ("**src/app.py**", "File: app.py")."""
    before = text[:fence_start].rstrip("\n").split("\n")
    looked = 0
    for line in reversed(before):
        if not line.strip():
            continue
        match = _LABEL.match(line)
        if match:
            return match.group("path")
        looked += 1
        if looked == 2 or line.strip().startswith(("```", "~~~")):
            return None
    return None


@dataclass(frozen=True)
class Review:
    approved: bool
    notes: str


_VERDICT = re.compile(r"^[\s>*_#-]*verdict[\s*_]*[:=\-][\s*_`]*(?P<word>[a-z _\-]+?)[\s*_`.!]*$", re.I | re.M)
_APPROVE = {"approve", "approved", "accept", "accepted", "lgtm", "pass", "ok", "yes", "ship it"}
_CHANGES = {"changes", "changes requested", "changes_requested", "request changes", "request_changes",
            "reject", "rejected", "needs changes", "needs work", "revise", "no", "fail"}


def parse_review(text: str) -> Review:
    """The Optimizer's verdict line (``VERDICT: APPROVE`` or ``VERDICT: CHANGES``) and its notes."""
    matches = list(_VERDICT.finditer(text))
    if not matches:
        raise ReplyFormatError("no VERDICT line; end with 'VERDICT: APPROVE' or 'VERDICT: CHANGES'")
    word = re.sub(r"[\s_\-]+", " ", matches[-1].group("word").strip().lower())
    if word in _APPROVE:
        approved = True
    elif word in {w.replace("_", " ") for w in _CHANGES}:
        approved = False
    else:
        raise ReplyFormatError(f"VERDICT must be APPROVE or CHANGES, not {word!r}")
    notes = _VERDICT.sub("", text).strip()
    return Review(approved=approved, notes=notes)


class Action(StrEnum):
    FIX_CODE = "fix_code"
    FIX_TESTS = "fix_tests"
    REPLAN = "replan"


@dataclass(frozen=True)
class Triage:
    action: Action
    reason: str


_DECISION = re.compile(r"^[\s>*_#-]*decision[\s*_]*[:=\-][\s*_`]*(?P<word>[a-z _\-]+?)[\s*_`.!]*$", re.I | re.M)
_ACTIONS = {
    Action.FIX_CODE: {"fix code", "code", "fix the code", "fix_code", "programmer"},
    Action.FIX_TESTS: {"fix tests", "fix test", "tests", "test", "fix the tests", "fix_tests", "tester"},
    Action.REPLAN: {"replan", "re plan", "re-plan", "plan", "planner", "new plan"},
}


def parse_triage(text: str) -> Triage:
    """The Manager's decision after failing tests: ``DECISION: fix_code|fix_tests|replan``."""
    matches = list(_DECISION.finditer(text))  # the last one decides, as with the review verdict
    match = matches[-1] if matches else None
    if not match:
        raise ReplyFormatError("no DECISION line; end with 'DECISION: fix_code', 'DECISION: fix_tests' or 'DECISION: replan'")
    word = match.group("word").strip().lower().replace("_", " ")
    for action, words in _ACTIONS.items():
        if word in words or word.replace(" ", "_") in words:
            return Triage(action=action, reason=_DECISION.sub("", text).strip())
    raise ReplyFormatError(f"DECISION must be fix_code, fix_tests or replan, not {word!r}")


_LANGUAGE = re.compile(r"^[\s>*_#-]*language[\s*_]*[:=][\s*_`]*(?P<name>[\w+#]+)", re.I | re.M)


def parse_plan(text: str) -> tuple[str, str]:
    """The Planner's plan and its ``LANGUAGE:`` line (empty when missing)."""
    plan = text.strip()
    if not plan:
        raise ReplyFormatError("the plan was empty")
    match = _LANGUAGE.search(plan)
    return plan, (match.group("name") if match else "")


def parse_readme(text: str) -> str:
    """The Check-In's README: the reply itself, unwrapped if the model fenced it whole."""
    body = text.strip()
    whole = re.fullmatch(r"(`{3,}|~{3,})(?:markdown|md)?\s*\n(.*)\n\1", body, re.DOTALL | re.I)
    if whole:
        body = whole.group(2).strip()
    if not body:
        raise ReplyFormatError("the README was empty")
    return body + "\n"
