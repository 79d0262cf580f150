"""Persistence in PostgreSQL through psycopg 3 (async) and a connection pool: the store several replicas share.

The same records as the SQLite store (``bot.store.sqlite``), decoded by the same code (``bot.store.rows``); the
schema comes from the numbered steps in ``bot.store.migrations``, applied at open. Each write is one
transaction on a connection of the pool, so runs write side by side and an event is recorded whole or not at
all. Every psycopg or pool failure leaves as ``StoreError`` (``bot.store.postgres_errors``), naming the database
by its URL with the password masked.

Owners across hosts: each store heartbeats the runs it owns (the database's clock, so hosts' clocks need not
agree); a run whose owner's heartbeat is older than ``OWNER_LOST_AFTER`` heartbeats is marked interrupted by
whichever replica starts next, as a run whose owner died on the same host is at once. ``serve``'s chat runs are
durable jobs instead (``self.queue``, ``bot.store.postgres_queue``): taken over, not interrupted.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import socket
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import asdict
from typing import Any

import psycopg
import psycopg_pool
from psycopg.rows import dict_row

from agents.events import CheckedIn, Event, Notice, RunFinished, TestReported, TurnFinished, WorkSaved
from agents.types import PriorWork, RunStatus, ThreadContext
from bot.store import owners
from bot.store import rows as decode
from bot.store.errors import StoreError
from bot.store.migrations import LATEST, MIGRATIONS, Migration
from bot.store.postgres_errors import store_error
from bot.store.postgres_listen import Listener, PostgresFanout
from bot.store.postgres_queue import PostgresQueue
from bot.store.records import INTERRUPTED_REASON, ConversationSummary, Interrupted, RunRecord, RunSummary

log = logging.getLogger(__name__)

SEEN_EVENTS_KEPT_S = 86_400.0  # as SQLite's: platforms redeliver an event within minutes
HEARTBEAT_S = 10.0  # how often a store tells the database its runs' owner is alive
OWNER_LOST_AFTER = 6  # heartbeats missed before another replica judges the owner dead
CONNECT_TIMEOUT_S = 10
POOL_MAX = 10  # connections per process; runs hold one only while a write or read is under way
MIGRATION_LOCK = 0x636F6465  # pg_advisory_xact_lock key: replicas starting together migrate one at a time
NOW = "EXTRACT(EPOCH FROM clock_timestamp())"  # the database's clock, the one every replica shares
# A transaction left open this long belongs to a process that stopped inside it (paused, cut off with its connection
# still up): the server ends it, so its locks (a run's row, the queue's claim lock) hold up no other replica's worker.
# Every transaction here runs its statements back to back, so a live one is never idle nearly this long.
STALLED_TRANSACTION_S = 15.0

Connection = psycopg.AsyncConnection[dict[str, Any]]


class PostgresStore:
    def __init__(self, pool: psycopg_pool.AsyncConnectionPool[Connection], location: str,
                 heartbeat_s: float = HEARTBEAT_S, url: str = "") -> None:
        self._pool, self.location, self._url = pool, location, url
        self.owner = owners.this_process()
        self.queue = PostgresQueue(self._transaction, self.owner)  # runs as durable jobs (``serve``'s workers)
        self._heartbeat_s = heartbeat_s
        self._closing = asyncio.Event()
        self._heartbeat = asyncio.create_task(self._beat(), name="store heartbeat")

    @classmethod
    async def open(cls, url: str, location: str, heartbeat_s: float = HEARTBEAT_S) -> PostgresStore:
        """The store at ``url``, its schema brought up to date; ``location`` is how messages name it (the URL
        with its password masked). A ``StoreError`` says why it cannot be used."""
        await migrate(url, location)
        pool: psycopg_pool.AsyncConnectionPool[Connection] = psycopg_pool.AsyncConnectionPool(
            url, min_size=1, max_size=POOL_MAX, open=False, timeout=CONNECT_TIMEOUT_S,
            kwargs={"row_factory": dict_row, "connect_timeout": CONNECT_TIMEOUT_S},
            check=psycopg_pool.AsyncConnectionPool.check_connection,  # a server restart breaks idle connections
            configure=_end_stalled_transactions,
            name="codegen-chat store",
        )
        try:
            await pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
            store = cls(pool, location, heartbeat_s, url)
            async with store._transaction("open") as db:
                await db.execute("DELETE FROM seen_events WHERE at < %s", (time.time() - SEEN_EVENTS_KEPT_S,))
        except (psycopg.Error, psycopg_pool.PoolTimeout) as error:
            await pool.close()
            raise store_error("open", location, error) from None
        return store

    async def close(self) -> None:
        """Ends the heartbeat (told to stop rather than cancelled: psycopg turns a cancelled query into an error of
        its own, which would hide the cancellation) and closes the pool's connections."""
        self._closing.set()
        with contextlib.suppress(asyncio.CancelledError):
            await self._heartbeat
        await self._pool.close()

    def fanout(self) -> PostgresFanout:
        """Messages to every replica's subscribers (``NOTIFY``), e.g. the web chat's live updates."""
        return PostgresFanout(self._url)

    def listen(self, channels: tuple[str, ...], heard: Callable[[str, str], None]) -> Listener:
        """``heard(channel, payload)`` for every notification on ``channels`` until the listener is closed."""
        return Listener(self._url, channels, heard)

    async def __aenter__(self) -> PostgresStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def check_writable(self, timeout_s: float) -> None:
        """``StoreError`` unless the database takes a write within ``timeout_s``."""
        try:
            async with asyncio.timeout(timeout_s), self._transaction("write to") as db:
                await db.execute(f"SET LOCAL statement_timeout = {max(1, int(timeout_s * 1000))}")
                await db.execute("INSERT INTO write_probe (id, at) VALUES (1, %s)"
                                 " ON CONFLICT (id) DO UPDATE SET at = EXCLUDED.at", (time.time(),))
        except TimeoutError:
            raise StoreError(f"could not write to {self.location}: the database server did not answer within "
                             f"{timeout_s:g} s; check the server and the network to it") from None

    # -- conversations and runs ---------------------------------------------------------------

    async def conversation(self, platform: str, thread_key: str) -> int:
        async with self._transaction("write to") as db:
            await self._ensure_conversation(db, platform, thread_key)
            cursor = await db.execute("SELECT id FROM conversations WHERE platform = %s AND thread_key = %s",
                                      _storable((platform, thread_key)))
            row = await cursor.fetchone()
        if row is None:
            raise StoreError(f"could not read {self.location}: a conversation just saved is missing; see the log")
        return int(row["id"])

    async def create_run(self, run_id: str, conversation_id: int, task: str, user_id: str,
                         attachments: list[str], thread: ThreadContext | None = None) -> None:
        async with self._transaction("save the run to") as db:
            # created_at on the database's clock: runs of several replicas list in the order they were asked
            await db.execute(
                "INSERT INTO runs (id, conversation_id, task, user_id, status, owner, created_at, attachments, thread,"
                f" heartbeat_at) VALUES (%s, %s, %s, %s, %s, %s, {NOW}, %s, %s, {NOW})",
                _storable((run_id, conversation_id, task, user_id, RunStatus.RUNNING.value, self.owner,
                           json.dumps(attachments), decode.thread_json(thread))),
            )

    async def mark_interrupted(self) -> int:
        """Runs whose owner is gone are marked interrupted: on this host, a process that has ended; on any host,
        an owner whose heartbeat stopped ``OWNER_LOST_AFTER`` heartbeats ago. Durable jobs are left to the queue,
        which puts them back for another replica to resume (``bot.store.postgres_queue``)."""
        running = await self._all("SELECT id, owner FROM runs WHERE status = %s AND job = ''", RunStatus.RUNNING.value)
        host = socket.gethostname()
        ended = [r["id"] for r in running if owners.gone_from(r["owner"], host)]
        async with self._transaction("write to") as db:
            cursor = await db.execute(
                "UPDATE runs SET status = %s, reason = %s, finished_at = %s WHERE status = %s AND job = ''"
                f" AND (id = ANY(%s) OR (owner <> %s AND COALESCE(heartbeat_at, 0) < {NOW} - %s))",
                (RunStatus.INTERRUPTED.value, INTERRUPTED_REASON, time.time(), RunStatus.RUNNING.value, ended,
                 self.owner, self._heartbeat_s * OWNER_LOST_AFTER),
            )
            return max(cursor.rowcount, 0)

    async def set_repository(self, run_id: str, repository: str, branch: str) -> None:
        """The repository and branch a run works on, kept from its start (a follow-up continues there)."""
        async with self._transaction("write to") as db:
            await self.queue.fence(db, run_id)
            await db.execute("UPDATE runs SET repository = %s, branch = %s WHERE id = %s",
                             _storable((repository, branch, run_id)))

    async def set_status_message(self, run_id: str, message_id: str) -> None:
        await self._write("write to", "UPDATE runs SET status_message = %s WHERE id = %s", (message_id, run_id))

    async def untold_interrupted(self, platform: str) -> list[Interrupted]:
        rows = await self._all(
            "SELECT r.*, c.thread_key FROM runs r JOIN conversations c ON c.id = r.conversation_id"
            " WHERE c.platform = %s AND r.status = %s AND r.told_interrupted = 0 ORDER BY r.seq",
            platform, RunStatus.INTERRUPTED.value,
        )
        return [decode.interrupted(r) for r in rows]

    async def told_interrupted(self, run_id: str) -> None:
        await self._write("write to", "UPDATE runs SET told_interrupted = 1 WHERE id = %s", (run_id,))

    async def prior_work(self, conversation_id: int, before_run: str) -> PriorWork | None:
        rows = await self._all(  # only runs before this one: later follow-ups wait in the queue behind it
            "SELECT * FROM runs WHERE conversation_id = %s AND seq < (SELECT seq FROM runs WHERE id = %s) ORDER BY seq",
            conversation_id, before_run,
        )
        with self._decoding():
            return decode.prior_work(rows)

    async def has_conversation(self, platform: str, thread_key: str) -> bool:
        rows = await self._all("SELECT 1 FROM conversations WHERE platform = %s AND thread_key = %s", platform, thread_key)
        return bool(rows)

    async def conversation_of(self, run_id: str) -> tuple[str, str] | None:
        rows = await self._all(
            "SELECT c.platform, c.thread_key FROM runs r JOIN conversations c ON c.id = r.conversation_id"
            " WHERE r.id = %s", run_id,
        )
        return (rows[0]["platform"], rows[0]["thread_key"]) if rows else None

    # -- the event sink -----------------------------------------------------------------------

    async def record(self, event: Event) -> None:
        """Persist what a run event tells, whole or not at all (``StoreError``)."""
        if isinstance(event, TurnFinished | TestReported | CheckedIn | Notice | WorkSaved | RunFinished):
            async with self._transaction("save the run to") as db:
                await self.queue.fence(db, event.run_id)  # a replica that lost the run writes nothing more of it
                await self._record(db, event)
                if isinstance(event, RunFinished):
                    await self.queue.finished(db, event.run_id)

    async def _record(self, db: Connection, event: Event) -> None:
        if isinstance(event, TurnFinished):
            await self._record_turn(db, event)
        elif isinstance(event, TestReported):
            await self._note(db, event.run_id, "test_report", decode.report_note(event))
            await db.execute("UPDATE runs SET report = %s WHERE id = %s",
                             _storable((json.dumps(decode.report_dict(event.report)), event.run_id)))
        elif isinstance(event, CheckedIn):
            await db.execute("UPDATE runs SET checkin = %s WHERE id = %s",
                             _storable((_json(event.result), event.run_id)))
            repository = decode.checked_in_repository(event)
            if repository:
                await db.execute("UPDATE runs SET repository = %s, branch = %s, head_commit = %s, pr_url = %s"
                                 " WHERE id = %s", _storable((*repository, event.run_id)))
        elif isinstance(event, Notice):
            await self._note(db, event.run_id, "notice", {"text": event.text})
        elif isinstance(event, WorkSaved):
            await db.execute("UPDATE runs SET files = %s, tests = %s, user_tests = %s WHERE id = %s",
                             _storable((*decode.saved_work(event), event.run_id)))
        elif isinstance(event, RunFinished):
            status, reason, *kept = decode.finish_values(event)
            await db.execute(
                "UPDATE runs SET status = %s, reason = %s, finished_at = %s, files = COALESCE(%s, files),"
                " tests = COALESCE(%s, tests), user_tests = COALESCE(%s, user_tests), report = COALESCE(%s, report),"
                " checkin = COALESCE(%s, checkin), plan = COALESCE(NULLIF(%s, ''), plan),"
                " language = COALESCE(NULLIF(%s, ''), language) WHERE id = %s",
                _storable((str(status), reason, time.time(), *kept, event.run_id)),
            )

    async def _record_turn(self, db: Connection, event: TurnFinished) -> None:
        now = time.time()
        estimated = int(event.usage.estimated and event.usage.total_tokens > 0)  # as a sum of usages counts it
        await db.execute(
            "INSERT INTO turns (run_id, agent, round, text, files, started_at, finished_at, model, prompt_tokens,"
            " completion_tokens, cost_usd, usage_estimated, meaning, cut_short)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            _storable((event.run_id, event.agent, event.round, event.text, json.dumps(event.files.as_dict()),
                       now - event.duration_s, now, event.model, event.usage.prompt_tokens,
                       event.usage.completion_tokens, event.usage.cost_usd, estimated,
                       decode.meaning_json(event.meaning), int(event.cut_short))),
        )
        await db.execute(
            "UPDATE runs SET prompt_tokens = prompt_tokens + %s, completion_tokens = completion_tokens + %s,"
            " cost_usd = cost_usd + %s, usage_estimated = GREATEST(usage_estimated, %s) WHERE id = %s",
            _storable((event.usage.prompt_tokens, event.usage.completion_tokens, event.usage.cost_usd, estimated,
                       event.run_id)),
        )

    async def _note(self, db: Connection, run_id: str, kind: str, body: dict[str, Any]) -> None:
        await db.execute("INSERT INTO notes (run_id, kind, body, at) VALUES (%s, %s, %s, %s)",
                         _storable((run_id, kind, json.dumps(body), time.time())))

    # -- reading back -------------------------------------------------------------------------

    async def runs(self, limit: int = 20) -> list[RunSummary]:
        rows = await self._all(
            "SELECT r.*, c.platform, c.thread_key FROM runs r JOIN conversations c ON c.id = r.conversation_id"
            " ORDER BY r.created_at DESC, r.seq DESC LIMIT %s", limit,
        )
        with self._decoding():
            return [decode.summary(r) for r in rows]

    async def run(self, run_id: str) -> RunRecord | None:
        found = await self._all(
            "SELECT r.*, c.platform, c.thread_key FROM runs r JOIN conversations c ON c.id = r.conversation_id"
            " WHERE r.id = %s", run_id,
        )
        if not found:
            return None
        turns = await self._all("SELECT * FROM turns WHERE run_id = %s ORDER BY id", run_id)
        notes = await self._all("SELECT kind, body, at FROM notes WHERE run_id = %s ORDER BY id", run_id)
        with self._decoding():
            return decode.run_record(found[0], turns, notes)

    async def conversations(self, platform: str, user_id: str, limit: int = 50) -> list[ConversationSummary]:
        rows = await self._all(
            "SELECT c.thread_key, c.created_at, first.task AS title, latest.status, latest.created_at AS updated_at,"
            " (SELECT COUNT(*) FROM runs WHERE conversation_id = c.id) AS runs FROM conversations c"
            " JOIN runs first ON first.seq = (SELECT MIN(seq) FROM runs WHERE conversation_id = c.id)"
            " JOIN runs latest ON latest.seq = (SELECT MAX(seq) FROM runs WHERE conversation_id = c.id)"
            " WHERE c.platform = %s AND first.user_id = %s ORDER BY latest.seq DESC LIMIT %s",
            platform, user_id, limit,
        )
        return [ConversationSummary(r["thread_key"], r["title"], r["status"], r["created_at"], r["updated_at"],
                                    int(r["runs"])) for r in rows]

    async def conversation_runs(self, platform: str, thread_key: str) -> list[RunSummary]:
        rows = await self._all(
            "SELECT r.*, c.platform, c.thread_key FROM runs r JOIN conversations c ON c.id = r.conversation_id"
            " WHERE c.platform = %s AND c.thread_key = %s ORDER BY r.seq", platform, thread_key,
        )
        with self._decoding():
            return [decode.summary(r) for r in rows]

    async def timeline(self, run_id: str) -> list[Event]:
        record = await self.run(run_id)
        if record is None:
            return []
        earlier = await self._all(
            "SELECT COUNT(*) AS n FROM runs WHERE conversation_id = (SELECT conversation_id FROM runs WHERE id = %s)"
            " AND seq < (SELECT seq FROM runs WHERE id = %s)", run_id, run_id)
        turns = await self._all("SELECT * FROM turns WHERE run_id = %s ORDER BY id", run_id)
        notes = await self._all("SELECT kind, body, at FROM notes WHERE run_id = %s ORDER BY id", run_id)
        with self._decoding():
            return decode.timeline(record, int(earlier[0]["n"]) if earlier else 0, turns, notes)

    # -- the gist index and event de-duplication ----------------------------------------------

    async def gist_for(self, conversation_key: str) -> str | None:
        platform, _, thread_key = conversation_key.partition(":")
        rows = await self._all("SELECT gist_id FROM conversations WHERE platform = %s AND thread_key = %s",
                               platform, thread_key)
        return rows[0]["gist_id"] if rows and rows[0]["gist_id"] else None

    async def remember(self, conversation_key: str, gist_id: str) -> None:
        platform, _, thread_key = conversation_key.partition(":")
        async with self._transaction("write to") as db:
            await self._ensure_conversation(db, platform, thread_key)
            await db.execute("UPDATE conversations SET gist_id = %s WHERE platform = %s AND thread_key = %s",
                             _storable((gist_id, platform, thread_key)))

    async def first_sighting(self, key: str) -> bool:
        """True the first time ``key`` is seen by any replica: the insert that wins is the only one that counts."""
        async with self._transaction("write to") as db:
            cursor = await db.execute("INSERT INTO seen_events (key, at) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                                      _storable((key, time.time())))
            return cursor.rowcount == 1

    async def check(self) -> None:
        """The schema at this version's migration, the server a primary, and a write to be had."""
        rows = await self._all("SELECT MAX(version) AS version, pg_is_in_recovery() AS standby FROM schema_migrations")
        version, standby = (rows[0]["version"] or 0, rows[0]["standby"]) if rows else (0, False)
        if version != LATEST:
            raise StoreError(f"could not read {self.location}: its schema is at migration {version}, this version "
                             f"needs {LATEST}; run `codegen-chat store migrate`")
        if standby:
            raise StoreError(f"could not write to {self.location}: the database server is read-only (a standby); "
                             "point storage.url at the primary")
        await self.check_writable(CONNECT_TIMEOUT_S)

    # -- the heartbeat ------------------------------------------------------------------------

    async def _beat(self) -> None:
        """Tell the database, every heartbeat, that the runs this process owns still have a live owner. A failed
        beat is logged and tried again: the runs' own writes say what broke."""
        while not self._closing.is_set():
            try:
                async with self._transaction("write to") as db:
                    await db.execute(f"UPDATE runs SET heartbeat_at = {NOW} WHERE owner = %s AND status = %s",
                                     (self.owner, RunStatus.RUNNING.value))
            except StoreError as error:
                log.warning("the store's heartbeat failed: %s", error)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), self._heartbeat_s)

    # -- talking to PostgreSQL ----------------------------------------------------------------

    @asynccontextmanager
    async def _transaction(self, doing: str) -> AsyncIterator[Connection]:
        """One transaction on a pooled connection, committed whole or rolled back whole; a failure is a
        ``StoreError`` ("could not {doing} URL: ...")."""
        try:
            async with self._pool.connection() as db, db.transaction():
                yield db
        except (psycopg.Error, psycopg_pool.PoolTimeout) as error:
            log.info("PostgreSQL: %s: %s", type(error).__name__, error)
            raise store_error(doing, self.location, error) from None

    async def _write(self, doing: str, sql: str, args: tuple[Any, ...]) -> None:
        async with self._transaction(doing) as db:
            await db.execute(sql, _storable(args))

    async def _all(self, sql: str, *args: Any) -> list[dict[str, Any]]:
        async with self._transaction("read") as db:
            cursor = await db.execute(sql, _storable(args))
            return list(await cursor.fetchall())

    async def _ensure_conversation(self, db: Connection, platform: str, thread_key: str) -> None:
        await db.execute("INSERT INTO conversations (platform, thread_key, created_at) VALUES (%s, %s, %s)"
                         " ON CONFLICT DO NOTHING", _storable((platform, thread_key, time.time())))

    @contextmanager
    def _decoding(self) -> Iterator[None]:
        """Rows read fine whose content is not what the store wrote (JSON changed by hand, say)."""
        try:
            yield
        except (ValueError, KeyError, TypeError) as error:
            log.warning("a damaged record in %s", self.location, exc_info=True)
            raise StoreError(f"could not read {self.location}: a stored record is damaged ({type(error).__name__}); "
                             "restore it from a backup") from None


async def migrate(url: str, location: str) -> list[Migration]:
    """Bring the database at ``url`` up to the latest schema; the steps this applied (none when current).
    One transaction under an advisory lock: replicas migrating at once apply each step once."""
    try:
        async with await psycopg.AsyncConnection.connect(url, connect_timeout=CONNECT_TIMEOUT_S) as db:
            async with db.transaction():
                await db.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
                await db.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY,"
                                 " description TEXT NOT NULL, applied_at DOUBLE PRECISION NOT NULL)")
                cursor = await db.execute("SELECT version FROM schema_migrations")
                applied = {int(row[0]) for row in await cursor.fetchall()}
                newer = max(applied, default=0)
                if newer > LATEST:
                    raise StoreError(f"could not open {location}: its schema is at migration {newer}, newer than this "
                                     f"version of codegen-chat knows ({LATEST}); upgrade codegen-chat")
                due = [m for m in MIGRATIONS if m.version not in applied]
                for step in due:
                    await db.execute(step.sql.encode())  # bytes: a script of several statements, no parameters
                    await db.execute("INSERT INTO schema_migrations (version, description, applied_at)"
                                     " VALUES (%s, %s, %s)", (step.version, step.description, time.time()))
    except psycopg.Error as error:
        raise store_error("open", location, error) from None
    return due


async def _end_stalled_transactions(db: Connection) -> None:
    """Each pooled connection: a transaction of it idle ``STALLED_TRANSACTION_S`` is ended by the server."""
    await db.execute(f"SET idle_in_transaction_session_timeout = {int(STALLED_TRANSACTION_S * 1000)}")
    await db.commit()


def _json(value: Any) -> str:
    return json.dumps(asdict(value))


def _storable(values: tuple[Any, ...]) -> tuple[Any, ...]:
    """Text PostgreSQL can hold: a lone surrogate (a model's JSON may carry one) and NUL (which PostgreSQL's
    text refuses) become U+FFFD."""
    return tuple(_UNSTORABLE.sub("\ufffd", v) if isinstance(v, str) else v for v in values)


_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
