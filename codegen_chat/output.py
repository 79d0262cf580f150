"""Standard output (and error) that a reader going away cannot break.

``codegen-chat history | head -1`` closes the pipe after one line; stdout may also be closed (``>&-``) or a full
disk (``> /dev/full``). Writing there raises ``OSError`` on every later line: a run's renderer failed on each
event (dozens of tracebacks in the log), the command ended in a traceback with exit status 1 (for ``run``, "the
tests failed"), and the work still under way was cut short. Once a write fails, output goes nowhere and nothing
else changes: the run goes on, its files land in ``--out`` and the store, and the exit status is the run's own.
A closed stderr is wrapped too: ``print(..., file=None)`` writes to stdout, where ``--json`` keeps only JSON.
"""

from __future__ import annotations

import os
from typing import Any, TextIO


class SteadyOutput:
    """Wraps a text stream (``None``: stdout is closed). Everything but writing and flushing is the stream's own."""

    def __init__(self, stream: TextIO | None) -> None:
        self._stream = stream
        self.lost = stream is None

    def write(self, text: str) -> int:
        if not self.lost:
            try:
                self._stream.write(text)  # type: ignore[union-attr]
            except OSError:  # a closed pipe, a closed descriptor, a full disk
                self._lose()
        return len(text)

    def flush(self) -> None:
        if not self.lost:
            try:
                self._stream.flush()  # type: ignore[union-attr]
            except OSError:
                self._lose()

    def isatty(self) -> bool:
        return not self.lost and self._stream.isatty()  # type: ignore[union-attr]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    def _lose(self) -> None:
        """No more output. The stream still holds what it could not write, and Python flushes it at exit: its
        descriptor now leads to the null device, so that last flush succeeds rather than print a traceback."""
        self.lost = True
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(null, self._stream.fileno())  # type: ignore[union-attr]
            finally:
                os.close(null)
        except (OSError, ValueError, AttributeError):  # no descriptor (a StringIO), or it cannot be replaced
            pass
