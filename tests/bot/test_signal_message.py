"""The line a signal handler prints when the process is asked to stop, whatever the interrupted code was doing."""

from __future__ import annotations

import asyncio
import io
import signal
import sys
from unittest import mock

from bot.process.lifecycle import Shutdown


def test_a_signal_that_lands_while_a_line_is_written_to_stderr_still_says_it_is_shutting_down(capfd):
    loop = asyncio.new_event_loop()
    shutdown = Shutdown(600.0, loop, exit_now=lambda code: None)

    class Interrupted(io.RawIOBase):
        """stderr's raw file, where the signal lands while the buffered stream above it is writing."""

        def writable(self) -> bool:
            return True

        def write(self, data) -> int:  # type: ignore[override]
            shutdown._on_signal(signal.SIGTERM, None)
            return len(data)

    stream = io.TextIOWrapper(io.BufferedWriter(Interrupted()), line_buffering=True)
    try:
        with mock.patch.object(sys, "stderr", stream):
            stream.write("a log line\n")
        assert shutdown.requested
        assert "codegen-chat: SIGTERM: shutting down; runs under way are stopped" in capfd.readouterr().err
    finally:
        loop.close()
