"""What the sandbox's own user (the keeper's, never the commands') does in a container, so that nothing the
team's code writes is read as the user's tests or as a test runner's report.

- The user's test files are unpacked by this user before any of the team's files exist: they belong to
  it and are read-only to the commands' user, and every folder of the job is made by it with the sticky
  bit (mode 1777, as /tmp), so the commands' user may add files beside them but can neither change,
  remove nor rename them (``/work`` itself is mounted so, ``hardening``). A build script, a lifecycle
  script or the code at run time that rewrites a test file gets "permission denied".
- A runner's structured report is written into a FIFO this user made in a folder only it may write
  (``JUDGE_DIR``, made by the keeper at the container's start). The FIFO's name is removed as soon as a
  writer opened it, so only that first writer (the runner, which opens it before any code of the team's
  runs) can write the report. This user reads it while the runner writes and keeps the copy where the
  commands' user cannot reach it; once the runner has closed it the copy is final, so a write after the
  runner's (``atexit``, a process left behind) is lost.
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Iterable

JUDGE_DIR = "/tmp/.judge"
FIFO_WAIT_S = 30.0  # at most this long a test command waits for its report's FIFO (started just before it)
SEAL_WAIT_S = 10.0  # at most this long a read waits for the sealed copy (the reader is ended first)


def folders(paths: Iterable[str], workdir: str) -> str:
    """Shell making every folder of ``paths`` under ``workdir``, parents first, sticky and open to all."""
    found: set[str] = set()
    for path in paths:
        parent = posixpath.dirname(path)
        while parent:
            found.add(parent)
            parent = posixpath.dirname(parent)
    ordered = sorted(found, key=lambda p: (p.count("/"), p))
    if not ordered:
        return ""
    return f"cd {shlex.quote(workdir)} && mkdir -m 1777 -- {' '.join(shlex.quote(p) for p in ordered)} && cd / && "


def sealed(path: str) -> str:
    return path + ".sealed"


def seal(path: str) -> str:
    """The reader, run as this user beside the test command: makes the FIFO the runner writes its report
    into and keeps what came through it, whole, at ``sealed(path)``."""
    fifo, part, final = (shlex.quote(p) for p in (path, path + ".part", sealed(path)))
    # Its name goes as soon as the runner opened it: nothing else (the code under test, a build script, a
    # process beside it) can open the channel by its path and write a report of its own into it.
    return (f"mkdir -p -m 755 {shlex.quote(posixpath.dirname(path))} && rm -f {fifo} {part} {final} && "
            f"mkfifo -m 622 {fifo} && exec 3< {fifo} && rm -f {fifo} && cat <&3 > {part} && mv {part} {final}")


def sealing(paths: Iterable[str]) -> str:
    """Shell starting each path's reader (``seal``) in the background: it outlives the shell that started it,
    its output going nowhere, so the command that starts it ends at once."""
    return "".join(f"(sh -c {shlex.quote(seal(path))} </dev/null >/dev/null 2>&1 &); " for path in paths)


def await_fifo(path: str) -> str:
    """Shell put before a test command: wait until the report's FIFO is there (its reader started with it)."""
    tries = int(FIFO_WAIT_S / 0.02)
    return (f"i=0; until [ -p {shlex.quote(path)} ]; do i=$((i+1)); [ $i -le {tries} ] || "
            f"{{ echo '[sandbox] the report channel was not ready' >&2; break; }}; sleep 0.02; done; ")


def read_sealed(path: str, end: str) -> str:
    """Shell printing the sealed report ('' when the runner never wrote one), then a line ``end`` (a word made for
    this read): a read the engine cut short (an exec that failed to start, a stream that broke) lacks it, and is
    not taken for a runner that wrote no report. Run once nothing of the commands' user is left: opening the FIFO
    for a moment ends a reader still waiting for a writer that never came (it reads nothing), and never blocks."""
    tries = int(SEAL_WAIT_S / 0.05)
    fifo, final = shlex.quote(path), shlex.quote(sealed(path))
    return (f"[ -p {fifo} ] && {{ exec 4<> {fifo}; exec 4>&-; }}; "
            f"i=0; until [ -f {final} ] || [ $i -gt {tries} ]; do i=$((i+1)); sleep 0.05; done; "
            f"[ -f {final} ] && cat {final}; printf '\\n%s\\n' {shlex.quote(end)}")


def report_read(output: str, end: str) -> str | None:
    """The report a ``read_sealed`` printed, or None when its ``end`` line is missing (the read was cut short)."""
    found = output.find(f"\n{end}\n")
    return None if found < 0 else output[:found]
