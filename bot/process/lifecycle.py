"""How the bot stops: one way for every entry point that runs the team (``serve``, ``web``, ``run``).

The first SIGTERM, SIGHUP or SIGINT (Ctrl-C) asks for a graceful shutdown. The entry point stops taking
work and the service stops the runs under way with a reason (``Service.shutdown``): each run ends
"stopped", recorded so in the store, its thread (or the terminal) is told in one line that it can be
continued, and its test container is removed. Then the entry point's own work is cancelled, which closes
its connections, and the process exits 0.

It is bounded: ``[runtime] shutdown_grace_s`` after the signal, a watchdog ends the process whatever is
still running (what it leaves, a container or a run still marked running, the next start cleans up and
shows as interrupted). A second signal ends it at once. The handlers are plain ``signal`` handlers, not
the event loop's, so both still work when the loop is stuck.

An entry point uses it as ``serve`` does: ``with signals_handled(grace) as shutdown:`` around its work,
and ``until_shutdown(shutdown, work, wind_down)`` where ``wind_down`` is ``service.shutdown(reason,
grace)``. A server library that installs signal handlers of its own (uvicorn does, in ``Server.serve``)
must be told not to, so this stays the one place that decides how the process stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from types import FrameType
from typing import Any, TypeVar

SHUTDOWN_REASON = "the bot was shut down"  # why its runs end: SIGTERM, SIGHUP or Ctrl-C stopped the process

log = logging.getLogger(__name__)

SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
T = TypeVar("T")
Exit = Callable[[int], Any]


class Shutdown:
    """The process's signals, turned into one request to stop (``requested``), bounded by a watchdog."""

    def __init__(self, grace_s: float, loop: asyncio.AbstractEventLoop, exit_now: Exit = os._exit) -> None:
        self.grace_s = grace_s
        self.signal: signal.Signals | None = None
        self._loop, self._exit_now = loop, exit_now
        self._requested = asyncio.Event()
        self._previous: dict[signal.Signals, Any] = {}

    @property
    def requested(self) -> bool:
        return self.signal is not None

    async def wait(self) -> signal.Signals:
        await self._requested.wait()
        assert self.signal is not None
        return self.signal

    def install(self) -> None:
        for number in SIGNALS:
            self._previous[number] = signal.signal(number, self._on_signal)

    def uninstall(self) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        self._previous.clear()

    def _on_signal(self, number: int, _frame: FrameType | None) -> None:
        name = signal.Signals(number).name
        if self.signal is not None:
            _say(f"{name} again: exiting now")
            self._exit_now(128 + number)
            return
        self.signal = signal.Signals(number)
        _say(f"{name}: shutting down; runs under way are stopped and can be continued "
             f"(at most {self.grace_s:g}s; a second signal exits at once)")
        watchdog = threading.Timer(self.grace_s, self._overdue)
        watchdog.daemon = True
        watchdog.start()
        self._loop.call_soon_threadsafe(self._requested.set)

    def _overdue(self) -> None:
        _say(f"the shutdown took longer than {self.grace_s:g}s: exiting now")
        self._exit_now(0)


@contextlib.contextmanager
def signals_handled(grace_s: float) -> Iterator[Shutdown]:
    """SIGTERM, SIGHUP and SIGINT handled as one graceful shutdown while the block runs (call it inside the
    event loop). After a shutdown the handlers stay, so a second signal still exits at once."""
    shutdown = Shutdown(grace_s, asyncio.get_running_loop())
    shutdown.install()
    try:
        yield shutdown
    finally:
        if not shutdown.requested:
            shutdown.uninstall()


async def until_shutdown(shutdown: Shutdown, work: Awaitable[T],
                         wind_down: Callable[[signal.Signals], Awaitable[None]], ends_by_itself: bool = False) -> T | None:
    """Run ``work`` until it ends or a shutdown is asked for. Then ``wind_down`` (stop the runs, tell their
    threads); then ``work`` is cancelled (a server, which never ends by itself), or awaited when it
    ``ends_by_itself`` once its runs stop (a terminal run printing its summary). Its result, or None."""
    running = asyncio.ensure_future(work)
    asked = asyncio.ensure_future(shutdown.wait())
    try:
        await asyncio.wait({running, asked}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        asked.cancel()
    if shutdown.signal is not None and not running.done():
        try:
            await wind_down(shutdown.signal)
        finally:
            if not running.done() and not ends_by_itself:
                running.cancel()
            await asyncio.wait({running})  # the watchdog bounds this
    try:
        return running.result()
    except asyncio.CancelledError:
        if shutdown.signal is None:
            raise
        return None  # cancelled as part of the shutdown


def _say(text: str) -> None:
    # Straight to stderr's file descriptor: logging may be what is stuck, and a person at a terminal should see it.
    # Not through sys.stderr: a signal landing while the interrupted code writes a line there would find its buffer
    # busy, and a buffered stream refuses a write from inside its own (a reentrant call), which lost this line.
    if sys.__stderr__ is None:  # started with stderr closed: its number may be another file's now
        return
    with contextlib.suppress(OSError, ValueError):
        os.write(sys.__stderr__.fileno(), f"codegen-chat: {text}\n".encode("utf-8", "replace"))
