"""Output capped while it streams: the first and the last bytes are kept, the middle is counted.

Memory stays below ``limit`` bytes whatever a test prints. Both ends matter: the start shows what
ran, the end holds the runner's summary line (which the result parsers read).
"""

from __future__ import annotations

import threading
from collections import deque

CUT_NOTE = "\n[... {dropped} bytes of output cut ...]\n"


class CappedOutput:
    def __init__(self, limit: int) -> None:
        self._head_limit = limit // 2
        self._tail_limit = limit - self._head_limit
        self._head = bytearray()
        self._tail: deque[bytes] = deque()
        self._tail_size = 0
        self.dropped = 0

    @property
    def truncated(self) -> bool:
        return self.dropped > 0

    def add(self, chunk: bytes) -> None:
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self._tail.append(chunk)
        self._tail_size += len(chunk)
        self._trim_tail()

    def _trim_tail(self) -> None:
        while self._tail_size > self._tail_limit:
            excess = self._tail_size - self._tail_limit
            first = self._tail[0]
            if len(first) <= excess:
                self._tail.popleft()
                self._tail_size -= len(first)
                self.dropped += len(first)
            else:
                self._tail[0] = first[excess:]
                self._tail_size -= excess
                self.dropped += excess

    def text(self) -> str:
        tail = b"".join(self._tail)
        middle = CUT_NOTE.format(dropped=self.dropped).encode() if self.dropped else b""
        return (bytes(self._head) + middle + tail).decode("utf-8", errors="replace")


class SplitOutput:
    """stdout and stderr sharing one budget, half each, so neither can crowd the other out."""

    def __init__(self, limit: int) -> None:
        self.stdout = CappedOutput(limit - limit // 2)
        self.stderr = CappedOutput(limit // 2)
        # A reader thread may still be adding when a timed-out run reads what it has.
        self._lock = threading.Lock()

    @property
    def truncated(self) -> bool:
        return self.stdout.truncated or self.stderr.truncated

    def add(self, out: bytes | None, err: bytes | None) -> None:
        with self._lock:
            if out:
                self.stdout.add(out)
            if err:
                self.stderr.add(err)

    def texts(self) -> tuple[str, str]:
        with self._lock:
            return self.stdout.text(), self.stderr.text()
