"""PostgreSQL's ``LISTEN`` and ``NOTIFY``. ``Listener``: one connection of its own (outside the pool, in autocommit,
as LISTEN needs) that hands each notification's payload to a callback, until closed. ``PostgresFanout``: messages to
every replica's subscribers on a channel (the web chat's live updates), sent in order over one connection.

A notification sent while the connection was down is lost, so after every (re)connection the callback is
called once with ``RECONNECTED``: whoever listens reads again what it may have missed (the queue polls, a web
page re-reads its conversation). A server restart is waited out: the listener reconnects every ``RETRY_S``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from collections.abc import Callable

import psycopg
from psycopg import sql

log = logging.getLogger(__name__)

RECONNECTED = "\x00reconnected"  # not a payload anyone sends (PostgreSQL's text holds no NUL)
RETRY_S = 1.0
POLL_S = 0.5  # how often the wait for a notification looks up to see whether it is asked to stop


class Listener:
    def __init__(self, conninfo: str, channels: tuple[str, ...], heard: Callable[[str, str], None]) -> None:
        self._conninfo, self._channels, self._heard = conninfo, channels, heard  # heard(channel, payload)
        self._closing = asyncio.Event()
        self._task = asyncio.create_task(self._listen(), name=f"listen {','.join(channels)}")

    async def close(self) -> None:
        """Told to stop rather than cancelled (a cancelled psycopg call turns into an error of its own)."""
        self._closing.set()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def _listen(self) -> None:
        while not self._closing.is_set():
            try:
                async with await psycopg.AsyncConnection.connect(self._conninfo, autocommit=True,
                                                                 connect_timeout=10) as db:
                    for channel in self._channels:
                        await db.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
                    for channel in self._channels:
                        self._tell(channel, RECONNECTED)
                    while not self._closing.is_set():
                        async for note in db.notifies(timeout=POLL_S):
                            self._tell(note.channel, note.payload)
            except psycopg.Error as error:
                log.info("PostgreSQL LISTEN: %s: %s; listening again in %g s", type(error).__name__, error, RETRY_S)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._closing.wait(), RETRY_S)

    def _tell(self, channel: str, payload: str) -> None:
        try:
            self._heard(channel, payload)
        except Exception:  # one listener's bug must not end the listening for the others
            log.exception("a LISTEN callback failed on %s", channel)


MAX_BACKLOG = 10_000  # messages waiting while the database is away; older ones are dropped (subscribers resync)


class PostgresFanout:
    """``publish(channel, payload)`` reaches every ``subscribe``d callback on that channel in every replica (this
    one's too), in the order published here; a payload is at most ``MAX_PAYLOAD`` bytes (the caller splits).
    While the database is away, messages wait (up to ``MAX_BACKLOG``); after a reconnection subscribers get
    ``RECONNECTED`` and should re-read what they may have missed."""

    def __init__(self, conninfo: str) -> None:
        self._conninfo = conninfo
        self._heard: dict[str, list[Callable[[str], None]]] = defaultdict(list)
        self._outbox: asyncio.Queue[tuple[str, str]] = asyncio.Queue(MAX_BACKLOG)
        self._listener: Listener | None = None
        self._closing = asyncio.Event()
        self._sender = asyncio.create_task(self._send(), name="notify sender")

    def subscribe(self, channel: str, heard: Callable[[str], None]) -> None:
        """Before the first ``publish`` (the channels listened to are fixed when the first subscriber comes)."""
        self._heard[channel].append(heard)
        if self._listener is None:
            self._listener = Listener(self._conninfo, tuple(self._heard), self._tell)

    def publish(self, channel: str, payload: str) -> None:
        try:
            self._outbox.put_nowait((channel, payload))
        except asyncio.QueueFull:
            log.warning("NOTIFY backlog full while the database is away: a live update to other replicas was dropped")

    async def close(self) -> None:
        self._closing.set()
        with contextlib.suppress(asyncio.CancelledError):
            await self._sender
        if self._listener is not None:
            await self._listener.close()

    def _tell(self, channel: str, payload: str) -> None:
        for heard in self._heard.get(channel, []):
            heard(payload)

    async def _send(self) -> None:
        pending: tuple[str, str] | None = None
        while not self._closing.is_set():
            try:
                async with await psycopg.AsyncConnection.connect(self._conninfo, autocommit=True,
                                                                 connect_timeout=10) as db:
                    while not self._closing.is_set() or not self._outbox.empty():
                        if pending is None:
                            try:
                                pending = await asyncio.wait_for(self._outbox.get(), POLL_S)
                            except TimeoutError:
                                continue
                        await db.execute("SELECT pg_notify(%s, %s)", pending)
                        pending = None
                    return
            except psycopg.Error as error:
                log.info("PostgreSQL NOTIFY: %s: %s; sending again in %g s", type(error).__name__, error, RETRY_S)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._closing.wait(), RETRY_S)
