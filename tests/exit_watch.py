"""A finished test run always ends, and says what would have kept it from ending.

Two things can hold a run whose summary is already printed: a thread the interpreter joins at exit (a worker
thread still blocked in a call nobody waits for any more) and a process started during the run that still holds
the run's stdout or stderr (whoever reads that pipe, CI included, waits for every writer to close it). Both are
test leftovers, so once pytest is done this plugin names what is still there, ends leftover processes that hold
the output, and, if the interpreter has still not ended after a grace period, prints every thread's stack and
ends the process with the session's own exit status.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

GRACE_ENV = "CODEGEN_TEST_EXIT_GRACE_S"
_status = {"code": 0}


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _status["code"] = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    for pid, command in output_holders():
        _say(f"tests: ending pid {pid}, left running by the tests and holding the run's output: {command}")
        _end(pid)
    lingering = [thread.name for thread in threading.enumerate()
                 if thread.is_alive() and not thread.daemon and thread is not threading.main_thread()]
    if lingering:
        _say(f"tests: threads still running as the run ends: {', '.join(lingering)}")
    grace = float(os.environ.get(GRACE_ENV, "60"))
    threading.Thread(target=_end_after, args=(grace,), name="exit-watch", daemon=True).start()


def output_holders() -> list[tuple[int, str]]:
    """Processes started after this run began, other than this one, that hold this process's stdout or stderr
    open for writing (a pipe or a file someone else waits on)."""
    ours = {_identity(fd) for fd in (1, 2)} - {None}
    if not ours:
        return []
    ours_started, ancestors = _started_at(Path("/proc/self")), _ancestors()
    holders = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in ancestors:
            continue
        try:
            if _started_at(entry) < ours_started:
                continue
            if any(_writes(entry, fd.name) and _identity_of(fd) in ours for fd in (entry / "fd").iterdir()):
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
                holders.append((int(entry.name), command[:200]))
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile, or not ours to read
    return holders


def _identity(fd: int) -> tuple[int, int] | None:
    try:
        found = os.fstat(fd)
    except OSError:
        return None
    return (found.st_dev, found.st_ino)


def _identity_of(link: Path) -> tuple[int, int] | None:
    try:
        found = link.stat()
    except OSError:
        return None
    return (found.st_dev, found.st_ino)


def _writes(process: Path, fd: str) -> bool:
    flags = next((line.split()[1] for line in (process / "fdinfo" / fd).read_text().splitlines()
                  if line.startswith("flags:")), "0")
    return int(flags, 8) & (os.O_WRONLY | os.O_RDWR) != 0


def _ancestors() -> set[int]:
    """This process and every process above it (what started the run is never a leftover of it)."""
    found, pid = set(), os.getpid()
    while pid > 1 and pid not in found:
        found.add(pid)
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            break
    return found


def _started_at(process: Path) -> int:
    """When the process started, in clock ticks since boot (field 22 of /proc/PID/stat)."""
    return int((process / "stat").read_text().rsplit(")", 1)[1].split()[19])


def _end(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
        for _ in range(50):
            time.sleep(0.1)
            os.kill(pid, 0)
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    except PermissionError:
        _say(f"tests: pid {pid} is not ours to end")


def _end_after(grace: float) -> None:
    time.sleep(grace)
    _say(f"tests: the run finished {grace:.0f}s ago and the process has not ended; every thread's stack:")
    faulthandler.dump_traceback(file=sys.__stderr__, all_threads=True)
    _say(f"tests: ending with the session's status {_status['code']}")
    os._exit(_status["code"])


def _say(line: str) -> None:
    print(line, file=sys.__stderr__, flush=True)
