"""Text for chat platforms, shared by the Slack and Discord adapters: splitting long messages without
breaking code fences, the words a thread shows for each kind of event, and the files a thread gets when
the run's files are attached there instead of to a Gist."""

from __future__ import annotations

import re
from dataclasses import dataclass

from agents.events import RunFinished
from agents.types import Publication, RunStatus, TestReport
from bot.checkin.files import README_NAME, gist_layout
from bot.checkin.readme import compose_readme

AGENT_TITLES = {
    "planner": "Planner", "programmer": "Programmer", "optimizer": "Optimizer (review)",
    "tester": "Tester", "manager": "Manager (triage)", "checkin": "Check-In",
}
STATUS_WORDS = {
    RunStatus.PASSED: "Passed", RunStatus.FAILED: "Failed", RunStatus.STOPPED: "Stopped",
    RunStatus.ERROR: "Error", RunStatus.INTERRUPTED: "Interrupted", RunStatus.RUNNING: "Running",
}
MAX_ATTACHED_FILE_BYTES = 8 * 1024 * 1024  # under Discord's upload limit; a larger file is left out with a note
MIN_SPLIT_LIMIT = 20
MAX_FENCE_MARKER = 16  # a longer run of backticks is taken as text: closing it would eat the room for code
FENCE_LINE = re.compile(r"^(?P<indent>[ \t]{0,3})(?P<marker>`{3,}|~{3,})(?P<info>.*)$")
"""A line that opens or closes a code block (without its newline): indent, marker, info string."""


def agent_title(agent: str) -> str:
    return AGENT_TITLES.get(agent, agent.title())


def turn_header(agent: str, round_: int) -> str:
    """The first line of a turn's message, in Markdown. Round 0 is the planning before the first round of code."""
    return f"**{agent_title(agent)}**" + (f" · round {round_}" if round_ else "")


def whole_lines(text: str) -> str:
    """``text`` up to its last line break: what a turn still being written may show. A secret cut in two
    by a delta would slip past redaction, and no secret holds a line break."""
    return text[: text.rfind("\n") + 1]


def split_message(text: str, limit: int) -> list[str]:
    """Pieces of at most ``limit`` characters, split at line ends where possible. A code block cut in
    two is closed at the end of one piece and reopened, with its language, at the start of the next."""
    if limit < MIN_SPLIT_LIMIT:
        raise ValueError("limit too small to split code fences")
    splitter = _Splitter(limit)
    for line in text.splitlines(keepends=True):
        splitter.add(line)
    return splitter.finish()


@dataclass(frozen=True)
class _Fence:
    """The code block open where the next line goes."""

    marker: str
    reopen: str  # the line that opens it again at the start of the next piece

    @property
    def close(self) -> str:
        return "\n" + self.marker

    def closed_by(self, match: re.Match[str]) -> bool:
        marker = match["marker"]
        return marker[0] == self.marker[0] and len(marker) >= len(self.marker) and not match["info"].strip()


class _Splitter:
    """Takes lines in order and packs them into pieces; a piece that ends inside a code block is closed,
    and the next one starts by reopening it, so every size check counts the fences a piece will get."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.max_marker = min(MAX_FENCE_MARKER, limit // 8)
        self.pieces: list[str] = []
        self.current: list[str] = []
        self.size = 0
        self.fence: _Fence | None = None
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
        if self.fence:
            return self.limit - len(self.fence.reopen) - len(self.fence.close) - 1
        return self.limit - (self.max_marker + 1) - 1  # the part may open a block that must be closed

    def _append(self, part: str) -> None:
        match = FENCE_LINE.match(part.rstrip("\n"))
        after = self._fence_after(match)
        needed = len(part) + (len(after.close) if after else 0)
        if self.current and not self.bare and self.size + needed > self.limit:
            closing = self.fence is not None and after is None
            self._flush()
            if closing:  # the piece just ended closes this block already; reopening it only to close it is noise
                self.current, self.size, self.fence, self.bare = [], 0, None, False
                return
        self.current.append(part)
        self.size += len(part)
        self.fence, self.bare = after, False

    def _fence_after(self, match: re.Match[str] | None) -> _Fence | None:
        if match is None or len(match["marker"]) > self.max_marker:
            return self.fence
        if self.fence is not None:
            return None if self.fence.closed_by(match) else self.fence
        return _Fence(match["marker"], self._reopen_line(match["marker"], match["info"].strip()))

    def _reopen_line(self, marker: str, info: str) -> str:
        room = self.limit // 4 - len(marker) - 1
        if len(info) > room:  # keep the language at least, as far as it fits
            info = info.split()[0][:room] if info.split() else ""
        return f"{marker}{info}\n"

    def _flush(self) -> None:
        if not self.current or self.bare:
            return
        body = "".join(self.current)
        if self.fence:
            body = body.rstrip("\n") + self.fence.close
        self.pieces.append(body)
        self.current = [self.fence.reopen] if self.fence else []
        self.size = sum(map(len, self.current))
        self.bare = bool(self.current)


def report_line(report: TestReport) -> str:
    return f"Tests: {report.summary()} ({report.duration_s:.1f}s)"


def final_summary(event: RunFinished, cost_usd: float | None = None) -> str:
    """The last message of a run: status, why, the test result, tokens, where the result is."""
    reason = event.reason.rstrip(".")  # some reasons are whole sentences already; one full stop either way
    lines = [f"{STATUS_WORDS.get(event.status, event.status)}: {reason}."]
    if event.report:
        lines.append(report_line(event.report))
    usage = f"Tokens: {event.usage.prompt_tokens:,} in / {event.usage.completion_tokens:,} out"
    lines.append(usage + (f" (about ${cost_usd:.4f})" if cost_usd else ""))
    if event.checkin:
        lines.append(f"Result: {event.checkin.location}" + (f" ({event.checkin.note})" if event.checkin.note else ""))
    return "\n".join(lines)


def attached_files(publication: Publication) -> dict[str, str]:
    """What a chat fallback attaches to the thread, by file name: the README first, as the Gist would have
    it (a banner when the tests did not pass, notes on renamed and left-out files), then the files under
    the Gist's flat, distinct names (``a/b.py`` as ``a__b.py``, which ``a_b.py`` cannot collide with)."""
    layout = gist_layout(publication.files, MAX_ATTACHED_FILE_BYTES)
    return {README_NAME: compose_readme(publication, layout.renamed, layout.skipped), **layout.files}
