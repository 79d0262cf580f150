"""Text for chat platforms, shared by the Slack and Discord adapters: splitting long messages without
breaking code fences, and the words a thread shows for each kind of event."""

from __future__ import annotations

import re

from agents.events import RunFinished
from agents.types import RunStatus, TestReport

AGENT_TITLES = {
    "planner": "Planner", "programmer": "Programmer", "optimizer": "Optimizer (review)",
    "tester": "Tester", "manager": "Manager (triage)", "checkin": "Check-In",
}
STATUS_WORDS = {
    RunStatus.PASSED: "Passed", RunStatus.FAILED: "Failed", RunStatus.STOPPED: "Stopped",
    RunStatus.ERROR: "Error", RunStatus.INTERRUPTED: "Interrupted", RunStatus.RUNNING: "Running",
}
_FENCE_LINE = re.compile(r"^\s{0,3}(`{3,}|~{3,})(.*)$")


def agent_title(agent: str) -> str:
    return AGENT_TITLES.get(agent, agent.title())


def split_message(text: str, limit: int) -> list[str]:
    """Pieces of at most ``limit`` characters, split at line ends where possible. A code block cut in
    two is closed at the end of one piece and reopened, with its language, at the start of the next."""
    if limit < 20:
        raise ValueError("limit too small to split code fences")
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    fence: tuple[str, str] | None = None  # (marker, info) of the block open at this point

    def flush() -> None:
        nonlocal current, size
        if not current:
            return
        body = "".join(current)
        if fence:
            body = body.rstrip("\n") + "\n" + fence[0]
        pieces.append(body)
        current = [f"{fence[0]}{fence[1]}\n"] if fence else []
        size = sum(map(len, current))

    for line in _lines(text, limit - 10):
        closing = len(fence[0]) + 1 if fence else 0
        if size + len(line) + closing > limit and current:
            flush()
        current.append(line)
        size += len(line)
        match = _FENCE_LINE.match(line.rstrip("\n"))
        if match:
            marker, info = match.group(1), match.group(2).strip()
            if fence is None:
                fence = (marker, info)
            elif marker.startswith(fence[0][0]) and len(marker) >= len(fence[0]) and not info:
                fence = None
    flush()  # an unterminated block is closed too
    return [p.rstrip("\n") for p in pieces if p.strip()]


def _lines(text: str, width: int) -> list[str]:
    """Lines with their newlines; a line longer than ``width`` is cut into parts."""
    out = []
    for line in text.splitlines(keepends=True):
        while len(line) > width:
            out.append(line[:width] + "\n")
            line = line[width:]
        out.append(line)
    return out


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
