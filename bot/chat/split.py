"""Long chat text in pieces a platform accepts, without breaking code blocks.

A piece that ends inside a code block closes it, and the next piece opens it again with its language,
so every piece renders on its own; every size check counts the fences a piece will get.
"""

from __future__ import annotations

from dataclasses import dataclass

from agents.fences import Fence

MIN_SPLIT_LIMIT = 20
MAX_FENCE_MARKER = 16  # a longer run of backticks is taken as text: closing it would eat the room for code


def split_message(text: str, limit: int) -> list[str]:
    """Pieces of at most ``limit`` characters, split at line ends where possible. A code block cut in
    two is closed at the end of one piece and reopened, with its language, at the start of the next."""
    if limit < MIN_SPLIT_LIMIT:
        raise ValueError("limit too small to split code fences")
    splitter = _Splitter(limit)
    for line in text.splitlines(keepends=True):
        splitter.add(line)
    return splitter.finish()


def whole_lines(text: str) -> str:
    """``text`` up to its last line break: what a turn still being written may show. A secret cut in two
    by a delta would slip past redaction, and no secret holds a line break."""
    return text[: text.rfind("\n") + 1]


@dataclass(frozen=True)
class _Open:
    """The code block open where the next line goes."""

    fence: Fence
    reopen: str  # the line that opens it again at the start of the next piece

    @property
    def close(self) -> str:
        return "\n" + self.fence.marker


class _Splitter:
    """Takes lines in order and packs them into pieces; a piece that ends inside a code block is closed,
    and the next one starts by reopening it, so every size check counts the fences a piece will get."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.max_marker = min(MAX_FENCE_MARKER, limit // 8)
        self.pieces: list[str] = []
        self.current: list[str] = []
        self.size = 0
        self.open: _Open | None = None
        self.bare = False  # ``current`` holds only the reopened fence: nothing worth a piece of its own

    def add(self, line: str) -> None:
        while line:  # a line too long for a piece goes in parts, each measured where it lands
            width = self._width()
            part, line = (line[:width] + "\n", line[width:]) if len(line) > width + 1 else (line, "")
            self._append(part)

    def finish(self) -> list[str]:
        self._flush()  # an unterminated block is closed too
        return [p.rstrip("\n") for p in self.pieces if p.strip()]

    def _width(self) -> int:
        """The longest part of a line (before its newline) that fits in a piece with its fences."""
        if self.open:
            return self.limit - len(self.open.reopen) - len(self.open.close) - 1
        return self.limit - (self.max_marker + 1) - 1  # the part may open a block that must be closed

    def _append(self, part: str) -> None:
        after = self._open_after(part.rstrip("\n"))
        needed = len(part) + (len(after.close) if after else 0)
        if self.current and not self.bare and self.size + needed > self.limit:
            closing = self.open is not None and after is None
            self._flush()
            if closing:  # the piece just ended closes this block already; reopening it only to close it is noise
                self.current, self.size, self.open, self.bare = [], 0, None, False
                return
        self.current.append(part)
        self.size += len(part)
        self.open, self.bare = after, False

    def _open_after(self, line: str) -> _Open | None:
        fence = Fence.parse(line)
        if fence is None or len(fence.marker) > self.max_marker:
            return self.open
        if self.open is not None:
            return None if self.open.fence.closed_by(line) else self.open
        return _Open(fence, self._reopen_line(fence))

    def _reopen_line(self, fence: Fence) -> str:
        room = self.limit // 4 - len(fence.marker) - 1
        info = fence.info
        if len(info) > room:  # keep the language at least, as far as it fits
            info = info.split()[0][:room] if info.split() else ""
        return f"{fence.marker}{info}\n"

    def _flush(self) -> None:
        if not self.current or self.bare:
            return
        body = "".join(self.current)
        if self.open:
            body = body.rstrip("\n") + self.open.close
        self.pieces.append(body)
        self.current = [self.open.reopen] if self.open else []
        self.size = sum(map(len, self.current))
        self.bare = bool(self.current)
