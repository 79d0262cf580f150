"""The Optimizer's review as one pull request review (``[github] inline_review``): each request it makes that
names a file and a line, or quotes a line of code found in a file, becomes a comment on that line; the rest go
into the review's body, so nothing it asked is lost.

GitHub takes a comment only on a line of the pull request's diff (an added line or a context line, on the
right side) and refuses the whole review (422) otherwise, so a request is placed only on a line the diff holds.
A quoted line is trusted over a line number (models miscount lines, they copy code well), and a quote found on
more than one line places nothing: a comment on the wrong line is worse than one in the body."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot.repos.github_markdown import quiet

MIN_QUOTE_CHARS = 8  # a shorter quote (a name, a keyword) says too little to pick a line by a part of it
_ITEM = re.compile(r"^\s{0,3}(?:[-*+]|\d{1,3}[.)])\s+")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_LINE = re.compile(r"(?::|#L|\blines?\s+|\bL)(\d{1,7})\b", re.I)  # "lines 12-14": the first
_INLINE_CODE = re.compile(r"`([^`\n]+)`")


@dataclass(frozen=True)
class Request:
    """One thing the review asks, as written, and the line it is about (``line`` 0: none found)."""

    text: str
    path: str = ""
    line: int = 0


@dataclass(frozen=True)
class Placed:
    comments: tuple[dict[str, object], ...]  # GitHub's review comments: path, line, side, body
    unplaced: tuple[Request, ...]


def requests(notes: str, files: Mapping[str, str]) -> list[Request]:
    """The review's requests (its list items, else its paragraphs), each with the line of ``files`` it is about."""
    return [_anchored(_ITEM.sub("", item, count=1), files) for item in _items(notes)]


def _items(notes: str) -> list[str]:
    """List items with their continuation lines (code blocks included); text outside a list goes by paragraph."""
    items: list[list[str]] = []
    fence = ""
    in_list = False
    for line in notes.splitlines():
        opening = _FENCE.match(line)
        if fence:
            items[-1].append(line)
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = ""
            continue
        if _ITEM.match(line):
            items.append([line])
            in_list = True
        elif not line.strip():
            in_list = False
            if items and items[-1]:
                items.append([])
        elif items and items[-1] and (in_list or not _ITEM.match(items[-1][0])):
            items[-1].append(line)
        else:
            items.append([line])
        if opening:
            fence = opening.group(1)
    return [text for text in ("\n".join(lines).strip() for lines in items) if text]


def _anchored(item: str, files: Mapping[str, str]) -> Request:
    path = _named_path(item, files)
    candidates = [path] if path else list(files)
    for quote in _quotes(item):
        found = [(p, n) for p in candidates for n in _lines_with(files[p], quote)]
        if len(found) == 1:
            return Request(item, *found[0])
    if path:
        number = _line_number(item, path)
        if 0 < number <= len(files[path].splitlines()):
            return Request(item, path, number)
    return Request(item, path)


def _named_path(item: str, files: Mapping[str, str]) -> str:
    """The file the request names: its path, else a file name only one file has (longest first)."""
    for path in sorted(files, key=len, reverse=True):
        if re.search(rf"(?<![\w/.-]){re.escape(path)}(?![\w/-])", item):
            return path
    by_name: dict[str, list[str]] = {}
    for path in files:
        by_name.setdefault(path.rsplit("/", 1)[-1], []).append(path)
    for name, paths in sorted(by_name.items(), key=lambda kv: len(kv[0]), reverse=True):
        if len(paths) == 1 and re.search(rf"(?<![\w/.-]){re.escape(name)}(?![\w/-])", item):
            return paths[0]
    return ""


def _line_number(item: str, path: str) -> int:
    """The line named right after the path (``app.py:12``, ``app.py#L12``, ``app.py, line 12``), else anywhere."""
    after = item.split(path.rsplit("/", 1)[-1], 1)[-1]
    match = re.match(r"`?\s*(?::|#L)(\d{1,7})\b", after) or _LINE.search(after) or _LINE.search(item)
    return int(match.group(1)) if match else 0


def _quotes(item: str) -> list[str]:
    """The code the request quotes: each line of its code blocks, then its inline code, longest first."""
    quoted: list[str] = []
    fenced = re.findall(r"^\s*(`{3,}|~{3,})[^\n]*\n(.*?)^\s*\1", item, re.M | re.S)
    for _, block in fenced:
        quoted += [line.strip() for line in block.splitlines() if line.strip()]
    quoted += [code.strip() for code in _INLINE_CODE.findall(re.sub(r"(`{3,}|~{3,}).*?\1", "", item, flags=re.S))]
    return sorted({q for q in quoted if q}, key=len, reverse=True)


def _lines_with(text: str, quote: str) -> list[int]:
    """The lines that are ``quote`` (spaces aside), else the ones holding it when it is long enough to tell."""
    lines = [line.strip() for line in text.splitlines()]
    whole = [n for n, line in enumerate(lines, 1) if line == quote]
    if whole or len(quote) < MIN_QUOTE_CHARS:
        return whole
    return [n for n, line in enumerate(lines, 1) if quote in line]


def diff_lines(patch: str) -> set[int]:
    """The right-side lines of a file's diff (GitHub's ``patch``: its hunks): where a review comment may go."""
    lines: set[int] = set()
    number = 0
    for line in patch.splitlines():
        hunk = re.match(r"@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@", line)
        if hunk:
            number = int(hunk.group(1))
        elif number and line[:1] in (" ", "+", ""):
            lines.add(number)
            number += 1
    return lines


def place(asked: Sequence[Request], in_diff: Mapping[str, set[int]]) -> Placed:
    """Each request on its line when the pull request's diff holds that line; the others for the body."""
    comments, unplaced = [], []
    for request in asked:
        if request.line and request.line in in_diff.get(request.path, set()):
            comments.append({"path": request.path, "line": request.line, "side": "RIGHT",
                             "body": quiet(request.text)})
        else:
            unplaced.append(request)
    return Placed(tuple(comments), tuple(unplaced))


def review_body(placed: Placed, sha: str) -> str:
    """The review's text: what it is, and every request no line took (with the line it names, if any)."""
    count = len(placed.comments)
    lines = [f"The Optimizer's review of {sha[:12]}" + (f": {count} comment(s) on the lines they are about."
                                                         if count else ".")]
    if placed.unplaced:
        lines += ["", "Not on a line of this diff:"] if count else []
        lines.append("")
        for request in placed.unplaced:
            where = f"`{request.path}`" + (f" line {request.line}" if request.line else "") if request.path else ""
            lines.append(f"- {where + ': ' if where else ''}{_indented(request.text)}")
    return quiet("\n".join(lines))


def body_only(asked: Sequence[Request], sha: str) -> str:
    """The review's text when no comment may go on a line: every request in the body."""
    return review_body(Placed((), tuple(asked)), sha)


def _indented(text: str) -> str:
    return text.replace("\n", "\n  ")
