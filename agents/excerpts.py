"""The part of a failing test run's output a thread shows: the failing tests' names and their assertion
lines first, then the end of the output, cut at line boundaries, saying how much was left out. Lines that
only say a test passed (``test_x PASSED``, ``--- PASS:``, ``ok 3 - name``...) are left out of that end: in
a long run they would push the summary's neighbours out for nothing.

The lines that name a failure are recognised for the report formats the sandbox knows (pytest, go test,
node --test and other TAP, cargo test, JUnit: ``agents.language.reports``); whatever the runner, the end of
the output follows, where the summary and the last error usually are. Every place that shows a run's
failures to a person (a thread, the terminal, the web panel, a Gist's README) reads it from here.
"""

from __future__ import annotations

from agents.language.reports import FAILURE_LINE, FAILURE_NAME_LINE, PASSING_LINE
from agents.types import TestReport

LONGEST_LINE = 240  # a longer line shows its start and an ellipsis
KEY_SHARE = 0.6  # of the room, at most, for the lines naming failures; the rest is the output's end


def failure_excerpt(report: TestReport, limit: int) -> str:
    """At most ``limit`` characters of whole lines: the lines naming failures first, then the end of the
    output (without those lines again), between them one line saying how many lines were left out."""
    lines = [_shortened(line) for line in (report.stdout + ("\n" + report.stderr if report.stderr else "")).splitlines()]
    while lines and not lines[-1].strip():
        lines.pop()
    if _size(lines) <= limit:
        return "\n".join(lines)
    room = limit - len(_gap(len(lines), len(lines))) - 1
    keys = _fitting([i for i, line in enumerate(lines) if FAILURE_LINE.search(line)], lines, int(room * KEY_SHARE))
    passing = {i for i, line in enumerate(lines) if PASSING_LINE.search(line)} - set(keys)
    tail = _tail(lines, room - _size([lines[i] for i in keys]), skip=set(keys) | passing)
    hidden = len(lines) - len(keys) - len(tail)
    return "\n".join([*(lines[i] for i in keys), _gap(hidden, len(passing)), *(lines[i] for i in tail)])


def _fitting(indexes: list[int], lines: list[str], room: int) -> list[int]:
    """The lines that fit in ``room``, the failing tests' names before their details, in output order."""
    kept, used = [], 0
    for index in sorted(indexes, key=lambda i: (not FAILURE_NAME_LINE.search(lines[i]), i)):
        used += len(lines[index]) + 1
        if used > room:
            break
        kept.append(index)
    return sorted(kept)


def _tail(lines: list[str], room: int, skip: set[int]) -> list[int]:
    """The last lines that fit in ``room``, leaving out the ones in ``skip`` (shown already)."""
    kept: list[int] = []
    for index in range(len(lines) - 1, -1, -1):
        if index in skip:
            continue
        room -= len(lines[index]) + 1
        if room < 0:
            break
        kept.append(index)
    return kept[::-1]


def _gap(count: int, passing: int) -> str:
    of_them = f" ({passing:,} of them only progress or passing tests)" if passing else ""
    return f"[… {count:,} more line{'s' if count != 1 else ''} not shown{of_them}; the end of the output:]"


def _shortened(line: str) -> str:
    return line if len(line) <= LONGEST_LINE else line[: LONGEST_LINE - 1] + "…"


def _size(lines: list[str]) -> int:
    return sum(len(line) + 1 for line in lines)
