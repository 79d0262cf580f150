"""Whether the process that owns a run or a container is still alive.

A pid alone is not enough: a bot restarted in a container gets the same pid (often 1) as the
process that died, so each owner also records its process's start time, read from /proc.
"""

from __future__ import annotations

import os


def started_at(pid: int) -> str:
    """The process's start time in clock ticks since boot ('' where /proc cannot tell)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def this_process() -> tuple[str, str]:
    """(pid, start time) of this process, to record as an owner."""
    pid = os.getpid()
    return str(pid), started_at(pid)


def gone(pid: str, started: str = "") -> bool:
    """Whether the owner (pid, and its start time when recorded) has ended."""
    if not pid.isdigit():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # alive, someone else's
    return bool(started) and started_at(int(pid)) != started
