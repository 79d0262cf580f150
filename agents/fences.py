"""Fenced code blocks in Markdown: the one reading of them that everything finding, showing, splitting or
attaching code shares.

A block opens with a line of three or more backticks or tildes (indented at most three spaces) followed
by an info string (``python path=src/app.py``); it closes at a line of the same character, at least as
long, with nothing after it, or at the end of the text. A longer fence may hold shorter ones. As in
CommonMark, a fence indented (inside a list item, say) takes as much indentation off each line of its body
as its own, a tab counting to the next multiple of four columns::

    segments(text)   prose (str) and Block items, in order; "".join(s.source ...) gives the text back
    Fence.parse      one line: the fence it opens, or None; fence.closed_by(line)
    info_path        the file a block names in its info string (path=, title=, a bare file name)
    inert            text that cannot open or close a block it is put in (test output, model text)
    fenced           a block that shows a text byte for byte, whatever the text holds
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FENCE_LINE = re.compile(r"^\ufeff?(?P<indent>[ \t]{0,3})(?P<marker>`{3,}|~{3,})(?P<info>.*)$")
"""A line that opens or closes a code block (without its newline): indent, marker, info string. A byte-order
mark before it (some servers start a reply with one) hides nothing: the line is still a fence."""

_PATH = r"[\w.\-/\\]+\.[\w]+|[\w.\-/]*(?:Makefile|Dockerfile|Cargo\.toml|go\.mod)"
_INFO_PATH = re.compile(
    r"(?:^|\s|:)(?:path|file|filename|title|name)\s*[=:]\s*[\"']?(?P<path>[^\"'\s]+)"
    r"|(?:^[\w+#-]*[:\s]+|^)(?P<bare>" + _PATH + r")\s*$"
)
_MARKER_RUN = re.compile(r"`{3,}|^\ufeff?[ \t]*~{3,}", re.MULTILINE)
_BACKTICK_FENCES = re.compile(r"^\ufeff?[ \t]{0,3}(`{3,})", re.MULTILINE)
ZERO_WIDTH_SPACE = "\u200b"


@dataclass(frozen=True)
class Fence:
    """An opening fence line."""

    indent: str
    marker: str
    info: str

    @classmethod
    def parse(cls, line: str) -> Fence | None:
        """The fence ``line`` (without its newline) opens, or None when it is no fence line."""
        match = FENCE_LINE.match(line)
        if match is None or (match["marker"][0] == "`" and "`" in match["info"]):
            return None  # a backtick fence's info string holds no backtick (it would be inline code)
        return cls(match["indent"], match["marker"], match["info"].strip())

    def closed_by(self, line: str) -> bool:
        match = FENCE_LINE.match(line)
        if match is None or match["info"].strip():
            return False
        marker = match["marker"]
        return marker[0] == self.marker[0] and len(marker) >= len(self.marker)

    @property
    def language(self) -> str:
        """The info string's first word (``python``), without a ``:path`` glued to it."""
        first = self.info.split()[0] if self.info.split() else ""
        return first.split(":", 1)[0] if "=" not in first else ""

    @property
    def path(self) -> str:
        return info_path(self.info)


@dataclass(frozen=True)
class Block:
    """One fenced code block: its fence, its body (whole lines), and the text it was read from."""

    fence: Fence
    body: str
    source: str
    closed: bool = True

    @property
    def line_count(self) -> int:
        return self.body.count("\n") + (0 if self.body.endswith("\n") or not self.body else 1)


def segments(text: str) -> list[str | Block]:
    """The text as runs of prose and code blocks, in order; an unterminated block runs to the end."""
    out: list[str | Block] = []
    prose: list[str] = []
    lines = text.splitlines(keepends=True)
    index = 0
    while index < len(lines):
        fence = Fence.parse(lines[index].rstrip("\r\n"))
        if fence is None:
            prose.append(lines[index])
            index += 1
            continue
        if prose:
            out.append("".join(prose))
            prose = []
        end = next((i for i in range(index + 1, len(lines)) if fence.closed_by(lines[i].rstrip("\r\n"))), None)
        stop = len(lines) if end is None else end + 1
        width = _columns(fence.indent)
        body = "".join(_dedented(line, width) for line in lines[index + 1:end if end is not None else len(lines)])
        out.append(Block(fence, body, "".join(lines[index:stop]), closed=end is not None))
        index = stop
    if prose:
        out.append("".join(prose))
    return out


TAB_STOP = 4


def _columns(indent: str) -> int:
    """How many columns the spaces and tabs ``indent`` take, a tab running to the next tab stop."""
    column = 0
    for char in indent:
        column = column + TAB_STOP - column % TAB_STOP if char == "\t" else column + 1
    return column


def _dedented(line: str, width: int) -> str:
    """``line`` with up to ``width`` columns of its leading spaces and tabs taken off; a tab only partly taken
    leaves the rest of its columns as spaces."""
    column, index = 0, 0
    while column < width and index < len(line) and line[index] in " \t":
        column = column + TAB_STOP - column % TAB_STOP if line[index] == "\t" else column + 1
        index += 1
    return " " * max(0, column - width) + line[index:]


def info_path(info: str) -> str:
    """The file an info string names: ``python path=src/app.py``, ``rust title="lib.rs"``, ``go main.go``,
    ``js:index.js``; empty when it names none."""
    match = _INFO_PATH.search(info.strip())
    if not match:
        return ""
    return match.group("path") or match.group("bare") or ""


def inert(text: str) -> str:
    """``text`` as it may sit inside (or beside) a code block without opening or closing one: every run of
    three or more backticks (chat platforms take one anywhere in a line) and every tilde fence gets
    zero-width spaces between its characters, so it reads the same. For output nobody controls, such as a
    test run's."""
    return _MARKER_RUN.sub(lambda m: _broken(m.group()), text)


def _broken(run: str) -> str:
    marks = run.lstrip("\ufeff \t")
    return run[: len(run) - len(marks)] + ZERO_WIDTH_SPACE.join(marks)


def fenced(text: str, info: str = "") -> str:
    """``text`` in a code block that gives it back exactly: the fence is longer than any backtick fence inside
    (so no line of the text closes it), and a closing newline is added only when the text has none, so blank
    lines, trailing spaces, tabs and a missing final newline all survive."""
    longest = max((len(m) for m in _BACKTICK_FENCES.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    ending = "" if text.endswith("\n") or not text else "\n"
    return f"{fence}{info}\n{text}{ending}{fence}"
