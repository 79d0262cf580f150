"""Persistence in SQLite through aiosqlite (WAL): conversations, runs, turns, and what happened in them.

The store is one of a run's event sinks: it records each finished turn, test report, check-in and
the final status as they happen, so a crash loses at most the turn that was being written.

Each write is one transaction, taken one at a time (runs share the connection, and SQLite's
transaction is the connection's): an event is recorded whole or not at all. When the store cannot
write (a full disk, a read-only or damaged file) it raises ``StoreError`` saying what to do; a run
that cannot be recorded ends with status error (``bot.runs.runner``), and reads fail the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import socket
import sqlite3
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

import aiosqlite

from agents.events import CheckedIn, Event, Notice, RunFinished, TestReported, TurnFinished, WorkSaved
from agents.types import (
    PriorWork,
    RunStatus,
    ThreadContext,
)
from bot.store import owners
from bot.store import rows as decode
from bot.store.errors import StoreError
from bot.store.records import (
    INTERRUPTED_REASON,
    ConversationSummary,
    Interrupted,
    RunRecord,
    RunSummary,
)
from bot.store.sqlite_errors import FileIdentity, file_identity, file_lost_error, lost_file, store_error

SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id INTEGER PRIMARY KEY,
    platform TEXT NOT NULL,
    thread_key TEXT NOT NULL,
    created_at REAL NOT NULL,
    gist_id TEXT,
    UNIQUE (platform, thread_key)
);
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    conversation_id INTEGER NOT NULL REFERENCES conversations(id),
    task TEXT NOT NULL,
    user_id TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    owner TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    finished_at REAL,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL NOT NULL DEFAULT 0,
    plan TEXT NOT NULL DEFAULT '',
    language TEXT NOT NULL DEFAULT '',
    files TEXT NOT NULL DEFAULT '{}',
    tests TEXT NOT NULL DEFAULT '{}',
    user_tests TEXT NOT NULL DEFAULT '{}',
    report TEXT,
    checkin TEXT,
    attachments TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX IF NOT EXISTS runs_by_conversation ON runs (conversation_id, created_at);
CREATE TABLE IF NOT EXISTS turns (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs(id),
    agent TEXT NOT NULL,
    round INTEGER NOT NULL,
    text TEXT NOT NULL,
    files TEXT NOT NULL DEFAULT '{}',
    started_at REAL NOT NULL,
    finished_at REAL NOT NULL,
    model TEXT NOT NULL DEFAULT '',
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS turns_by_run ON turns (run_id, id);
CREATE TABLE IF NOT EXISTS notes (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs(id),
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS seen_events (
    key TEXT PRIMARY KEY,
    at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS write_probe (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    at REAL NOT NULL
);
"""

log = logging.getLogger(__name__)

SEEN_EVENTS_KEPT_S = 86_400.0  # platforms redeliver an event within minutes; a day is plenty
THREAD_END_WAIT_S = 5.0  # a connection thread told to stop ends at once; this only bounds a wedged one


class SQLiteStore:
    def __init__(self, db: aiosqlite.Connection, path: Path, identity: FileIdentity | None = None) -> None:
        self._db, self.path = db, path
        self.location = str(path)
        self._identity = identity  # the open file's device and inode, to tell when the path no longer leads to it
        self._writing = asyncio.Lock()
        self._batch: list[tuple[list[Statement], asyncio.Future[str | sqlite3.Error | None]]] = []  # not yet taken
        self._flushes: set[asyncio.Future[None]] = set()  # kept referenced while they run
        self.owner = owners.this_process()

    @classmethod
    async def open(cls, path: Path) -> SQLiteStore:
        """The store at ``path`` (created if new), or a ``StoreError`` saying why it cannot be used."""
        try:
            await asyncio.to_thread(path.parent.mkdir, parents=True, exist_ok=True)
        except OSError as error:
            raise StoreError(f"could not create the folder of the database {path}: {_why_no_folder(path, error)}; "
                             "set storage.path to a place the bot may write") from None
        connecting = aiosqlite.connect(path)
        try:
            db = await connecting
        except sqlite3.Error as error:
            # aiosqlite tells its thread to stop but does not wait for it; a short-lived command would then close
            # its loop first, and the thread's report to the closed loop would reach the person as a traceback
            await asyncio.to_thread(connecting._thread.join, THREAD_END_WAIT_S)
            raise store_error("open", path, error) from None
        db.row_factory = aiosqlite.Row
        try:
            await db.execute("PRAGMA journal_mode=WAL")
            await db.execute("PRAGMA synchronous=NORMAL")
            await db.execute("PRAGMA busy_timeout=5000")
            await db.executescript(SCHEMA)
            await _add_missing_columns(db)
            await db.execute("DELETE FROM seen_events WHERE at < ?", (time.time() - SEEN_EVENTS_KEPT_S,))
            await db.commit()
        except sqlite3.Error as error:
            await _close_quietly(db)
            raise store_error("open", path, error) from None
        return cls(db, path, await asyncio.to_thread(file_identity, path))

    async def close(self) -> None:
        """Always ends the connection's thread (a live one keeps the process from exiting), errors or not; after the
        writes still under way (a caller that stopped waiting for its write still has it made)."""
        if self._flushes:
            await asyncio.wait(self._flushes)
        await _close_quietly(self._db)

    async def __aenter__(self) -> SQLiteStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def check_writable(self, timeout_s: float) -> None:
        """Raise ``StoreError`` unless the database takes a write now (not read-only, locked or failing).

        On a connection of its own, so a failed probe never rolls back what a run is writing; and only while the
        path still leads to the file this store writes (a probe must not create a new file in its place).
        """
        await self._still_there("write to")
        try:
            await asyncio.to_thread(_write_probe, self.path, timeout_s)
        except sqlite3.Error as error:
            raise store_error("write to", self.path, error) from None

    # -- conversations and runs ---------------------------------------------------------------

    async def conversation(self, platform: str, thread_key: str) -> int:
        """The id of the conversation living in ``platform``/``thread_key``, created if new. A known one is only
        read; a new one is written with whatever other runs write meanwhile (a run's start waits on no queue of
        its own behind theirs)."""
        found = "SELECT id FROM conversations WHERE platform = ? AND thread_key = ?"
        row = await self._one(found, platform, thread_key)
        if row is None:
            await self._write_at_once("write to", [_conversation_write(platform, thread_key)])
            row = await self._one(found, platform, thread_key)
        if row is None:
            raise StoreError(f"could not read {self.path}: a conversation just saved is missing; see the log")
        return int(row["id"])

    async def create_run(self, run_id: str, conversation_id: int, task: str, user_id: str,
                         attachments: list[str], thread: ThreadContext | None = None) -> None:
        """``thread``: what was read of the thread the request was made in, kept for its follow-ups."""
        await self._write_at_once("save the run to", [(
            "INSERT INTO runs (id, conversation_id, task, user_id, status, owner, created_at, attachments, thread)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (run_id, conversation_id, task, user_id, RunStatus.RUNNING, self.owner, time.time(),
             json.dumps(attachments), decode.thread_json(thread)),
        )])

    async def mark_interrupted(self) -> int:
        """Runs this host left running in a process that is gone are marked interrupted."""
        rows = await self._all("SELECT id, owner FROM runs WHERE status = ?", RunStatus.RUNNING)
        host = socket.gethostname()
        stale = [r["id"] for r in rows if owners.gone_from(r["owner"], host)]
        async with self._transaction("write to"):
            for run_id in stale:
                await self._execute(
                    "UPDATE runs SET status = ?, reason = ?, finished_at = ? WHERE id = ?",
                    (RunStatus.INTERRUPTED, INTERRUPTED_REASON, time.time(), run_id),
                )
        return len(stale)

    async def set_repository(self, run_id: str, repository: str, branch: str) -> None:
        """The repository and branch a run works on, kept from its start (a follow-up continues there)."""
        async with self._transaction("write to"):
            await self._execute("UPDATE runs SET repository = ?, branch = ? WHERE id = ?", (repository, branch, run_id))

    async def set_status_message(self, run_id: str, message_id: str) -> None:
        async with self._transaction("write to"):
            await self._execute("UPDATE runs SET status_message = ? WHERE id = ?", (message_id, run_id))

    async def untold_interrupted(self, platform: str) -> list[Interrupted]:
        """The interrupted runs of ``platform`` whose threads have not been told, oldest first."""
        rows = await self._all(
            "SELECT r.*, c.thread_key FROM runs r JOIN conversations c ON c.id = r.conversation_id"
            " WHERE c.platform = ? AND r.status = ? AND r.told_interrupted = 0 ORDER BY r.rowid",
            platform, RunStatus.INTERRUPTED,
        )
        return [decode.interrupted(r) for r in rows]

    async def told_interrupted(self, run_id: str) -> None:
        async with self._transaction("write to"):
            await self._execute("UPDATE runs SET told_interrupted = 1 WHERE id = ?", (run_id,))

    async def prior_work(self, conversation_id: int, before_run: str) -> PriorWork | None:
        """What earlier runs of the conversation left: their tasks and the latest files, for a follow-up."""
        rows = await self._all(  # only runs before this one: later follow-ups wait in the queue behind it
            "SELECT * FROM runs WHERE conversation_id = ? AND rowid < (SELECT rowid FROM runs WHERE id = ?)"
            " ORDER BY rowid",
            conversation_id, before_run,
        )
        with self._decoding():
            return decode.prior_work(rows)

    async def has_conversation(self, platform: str, thread_key: str) -> bool:
        """Whether the bot has worked in this thread (so a reply there needs no mention)."""
        row = await self._one("SELECT 1 FROM conversations WHERE platform = ? AND thread_key = ?", platform, thread_key)
        return row is not None

    async def conversation_of(self, run_id: str) -> tuple[str, str] | None:
        row = await self._one(
            "SELECT c.platform, c.thread_key FROM runs r JOIN conversations c ON c.id = r.conversation_id WHERE r.id = ?",
            run_id,
        )
        return (row["platform"], row["thread_key"]) if row else None

    # -- the event sink -----------------------------------------------------------------------

    async def record(self, event: Event) -> None:
        """Persist what a run event tells, whole or not at all (``StoreError``); events with nothing
        lasting in them are ignored."""
        statements = _writes(event)
        if statements:
            await self._write_at_once("save the run to", statements)

    # -- reading back -------------------------------------------------------------------------

    async def runs(self, limit: int = 20) -> list[RunSummary]:
        rows = await self._all(
            "SELECT r.*, c.platform, c.thread_key FROM runs r JOIN conversations c ON c.id = r.conversation_id"
            " ORDER BY r.created_at DESC, r.rowid DESC LIMIT ?", limit,
        )
        with self._decoding():
            return [decode.summary(r) for r in rows]

    async def run(self, run_id: str) -> RunRecord | None:
        row = await self._one(
            "SELECT r.*, c.platform, c.thread_key FROM runs r JOIN conversations c ON c.id = r.conversation_id"
            " WHERE r.id = ?", run_id,
        )
        if row is None:
            return None
        turns = await self._all("SELECT * FROM turns WHERE run_id = ? ORDER BY id", run_id)
        notes = await self._all("SELECT kind, body FROM notes WHERE run_id = ? ORDER BY id", run_id)
        with self._decoding():
            return decode.run_record(row, turns, notes)

    async def conversations(self, platform: str, user_id: str, limit: int = 50) -> list[ConversationSummary]:
        """The conversations ``user_id`` started on ``platform``, the most recently active first."""
        rows = await self._all(
            "SELECT c.thread_key, c.created_at, first.task AS title, latest.status, latest.created_at AS updated_at,"
            " (SELECT COUNT(*) FROM runs WHERE conversation_id = c.id) AS runs FROM conversations c"
            " JOIN runs first ON first.rowid = (SELECT MIN(rowid) FROM runs WHERE conversation_id = c.id)"
            " JOIN runs latest ON latest.rowid = (SELECT MAX(rowid) FROM runs WHERE conversation_id = c.id)"
            " WHERE c.platform = ? AND first.user_id = ? ORDER BY latest.rowid DESC LIMIT ?",
            platform, user_id, limit,
        )
        return [ConversationSummary(r["thread_key"], r["title"], r["status"], r["created_at"], r["updated_at"], r["runs"])
                for r in rows]

    async def conversation_runs(self, platform: str, thread_key: str) -> list[RunSummary]:
        """The runs of one conversation, in the order they were asked for."""
        rows = await self._all(
            "SELECT r.*, c.platform, c.thread_key FROM runs r JOIN conversations c ON c.id = r.conversation_id"
            " WHERE c.platform = ? AND c.thread_key = ? ORDER BY r.rowid", platform, thread_key,
        )
        with self._decoding():
            return [decode.summary(r) for r in rows]

    async def timeline(self, run_id: str) -> list[Event]:
        """A stored run's events in the order they happened: its start, finished turns, test reports, notices
        and, once it has ended, where it was checked in and its ``RunFinished``. Enough to draw the run again
        after the process that drew it is gone."""
        record = await self.run(run_id)
        if record is None:
            return []
        earlier = await self._one(
            "SELECT COUNT(*) AS n FROM runs WHERE conversation_id = (SELECT conversation_id FROM runs WHERE id = ?)"
            " AND rowid < (SELECT rowid FROM runs WHERE id = ?)", run_id, run_id)
        turns = await self._all("SELECT * FROM turns WHERE run_id = ? ORDER BY id", run_id)
        notes = await self._all("SELECT kind, body, at FROM notes WHERE run_id = ? ORDER BY id", run_id)
        with self._decoding():
            return decode.timeline(record, int(earlier["n"]) if earlier else 0, turns, notes)

    # -- the gist index and event de-duplication ----------------------------------------------

    async def gist_for(self, conversation_key: str) -> str | None:
        platform, _, thread_key = conversation_key.partition(":")
        row = await self._one("SELECT gist_id FROM conversations WHERE platform = ? AND thread_key = ?", platform, thread_key)
        return row["gist_id"] if row and row["gist_id"] else None

    async def remember(self, conversation_key: str, gist_id: str) -> None:
        platform, _, thread_key = conversation_key.partition(":")
        async with self._transaction("write to"):
            await self._ensure_conversation(platform, thread_key)
            await self._execute("UPDATE conversations SET gist_id = ? WHERE platform = ? AND thread_key = ?",
                                (gist_id, platform, thread_key))

    async def first_sighting(self, key: str) -> bool:
        """True the first time ``key`` is seen (a platform event id), False for every redelivery."""
        async with self._transaction("write to"):
            cursor = await self._execute("INSERT OR IGNORE INTO seen_events (key, at) VALUES (?, ?)", (key, time.time()))
        return cursor.rowcount == 1

    async def check(self) -> None:
        """The file still where it was opened, every page readable (SQLite's quick_check) and a write lock to be
        had, else ``StoreError``."""
        await self._still_there("read")
        rows = await self._all("PRAGMA quick_check")
        if [tuple(r) for r in rows] != [("ok",)]:
            log.info("quick_check of %s: %s", self.path, [tuple(r) for r in rows][:10])
            raise StoreError(f"could not read {self.path}: the database file is damaged; move it aside (a new one "
                             "is made at the next start) or restore a backup")
        async with self._transaction("write to"):
            await self._execute("BEGIN IMMEDIATE")  # takes the write lock without changing anything

    # -- talking to SQLite ----------------------------------------------------------------------

    @asynccontextmanager
    async def _transaction(self, doing: str) -> AsyncIterator[None]:
        """One write, committed whole or rolled back whole; a failure is a ``StoreError`` ("could not
        {doing} PATH: ..."). Writes take turns, so one run's failure never undoes another's work."""
        async with self._writing:
            try:
                yield
                await self._still_there(doing)
                await self._db.commit()
            except sqlite3.Error as error:
                await self._rollback()
                raise store_error(doing, self.path, error) from None
            except StoreError:
                await self._rollback()
                raise

    async def _write_at_once(self, doing: str, statements: list[Statement]) -> None:
        """``statements`` committed whole or not at all (``StoreError``), as ``_transaction`` does, but together with
        the writes other runs asked for meanwhile: one call to the connection's thread and one commit for all of
        them (each in a savepoint of its own, so one run's failure still undoes no other run's work). Each call is
        a hand-over between threads: with fifty runs at once, one per statement was most of the loop's time."""
        done: asyncio.Future[str | sqlite3.Error | None] = asyncio.get_running_loop().create_future()
        self._batch.append((statements, done))
        if len(self._batch) == 1:  # the first of a batch: a flush takes it (and whatever joins before it starts)
            self._flushes.add(task := asyncio.ensure_future(self._flush()))
            task.add_done_callback(self._flushes.discard)
        outcome = await asyncio.shield(done)  # a caller that stops waiting does not take the others' write with it
        if isinstance(outcome, sqlite3.Error):
            raise store_error(doing, self.path, outcome)
        if outcome:
            raise file_lost_error(doing, self.path, outcome)

    async def _flush(self) -> None:
        async with self._writing:
            batch, self._batch = self._batch, []
            try:
                # aiosqlite's own hand-over to its connection's thread: it has no public way to run one function
                # there (pyproject.toml bounds the version; tests/bot/test_aiosqlite_internals.py checks it)
                outcomes = await self._db._execute(self._apply, [statements for statements, _ in batch])
            except BaseException as error:  # the commit failed (or the loop stops): no write of the batch was made
                for _, done in batch:
                    if not done.done():
                        done.set_result(error if isinstance(error, sqlite3.Error) else sqlite3.Error(str(error)))
                if not isinstance(error, Exception):
                    raise
                return
        for (_, done), outcome in zip(batch, outcomes, strict=True):
            if not done.done():
                done.set_result(outcome)

    def _apply(self, batch: list[list[Statement]]) -> list[str | sqlite3.Error | None]:
        """In the connection's thread: each write in a savepoint, then one commit. Per write, its error or None;
        for all of them, what became of the file when the path no longer leads to it (nothing is then committed)."""
        connection: sqlite3.Connection = self._db._conn  # aiosqlite's sqlite3 connection, used in its thread alone
        outcomes: list[str | sqlite3.Error | None] = []
        try:
            if not connection.in_transaction:
                connection.execute("BEGIN")  # else the first savepoint's release would commit on its own
            for statements in batch:
                connection.execute("SAVEPOINT record")
                try:
                    for sql, args in statements:
                        connection.execute(sql, tuple(_storable(a) for a in args))
                except sqlite3.Error as error:
                    connection.execute("ROLLBACK TO record")
                    outcomes.append(error)
                else:
                    outcomes.append(None)
                connection.execute("RELEASE record")
            problem = lost_file(self.path, self._identity) if self._identity is not None else ""
            if problem:
                connection.rollback()
                return [problem] * len(batch)
            connection.commit()
        except sqlite3.Error:
            try:
                connection.rollback()
            except sqlite3.Error:
                log.warning("could not roll back a failed write to %s", self.path, exc_info=True)
            raise
        return outcomes

    async def _still_there(self, doing: str) -> None:
        """A ``StoreError`` when the path no longer leads to the open file (deleted, moved or replaced by another
        program): SQLite would go on writing to a file no one can open again, and a run would look recorded."""
        if self._identity is None:
            return
        problem = await asyncio.to_thread(lost_file, self.path, self._identity)
        if problem:
            raise file_lost_error(doing, self.path, problem)

    @contextmanager
    def _decoding(self) -> Iterator[None]:
        """Rows SQLite read fine but whose content is not what the store wrote (JSON cut short, say)."""
        try:
            yield
        except (ValueError, KeyError, TypeError) as error:
            log.warning("a damaged record in %s", self.path, exc_info=True)
            raise StoreError(f"could not read {self.path}: a stored record is damaged ({type(error).__name__}); "
                             "move the file aside (a new one is made at the next start) or restore a backup") from None

    async def _rollback(self) -> None:
        try:
            await self._db.rollback()
        except sqlite3.Error:
            log.warning("could not roll back a failed write to %s", self.path, exc_info=True)

    async def _ensure_conversation(self, platform: str, thread_key: str) -> None:
        await self._execute(*_conversation_write(platform, thread_key))

    async def _execute(self, sql: str, args: tuple[Any, ...] = ()) -> aiosqlite.Cursor:
        return await self._db.execute(sql, tuple(_storable(a) for a in args))

    async def _one(self, sql: str, *args: Any) -> aiosqlite.Row | None:
        rows = await self._all(sql, *args)
        return rows[0] if rows else None

    async def _all(self, sql: str, *args: Any) -> list[aiosqlite.Row]:
        try:  # one call to the connection's thread (a cursor's execute, fetch and close were three)
            return list(await self._db.execute_fetchall(sql, tuple(_storable(a) for a in args)))
        except sqlite3.Error as error:
            raise store_error("read", self.path, error) from None


# Columns added after the first release: a database made before them gets them at open.
ADDED_COLUMNS = {
    ("runs", "user_tests"): "TEXT NOT NULL DEFAULT '{}'",
    ("runs", "status_message"): "TEXT NOT NULL DEFAULT ''",  # the chat message with the run's Stop control
    ("runs", "told_interrupted"): "INTEGER NOT NULL DEFAULT 0",  # its thread was told it was interrupted
    # Token counts estimated from text (the server reported none): shown as estimates when read back.
    ("runs", "usage_estimated"): "INTEGER NOT NULL DEFAULT 0",
    ("turns", "usage_estimated"): "INTEGER NOT NULL DEFAULT 0",
    # The repository a run worked in ("acme/billing", or a local folder), its branch, pull request and head commit.
    ("runs", "repository"): "TEXT NOT NULL DEFAULT ''",
    ("runs", "branch"): "TEXT NOT NULL DEFAULT ''",
    ("runs", "pr_url"): "TEXT NOT NULL DEFAULT ''",
    ("runs", "head_commit"): "TEXT NOT NULL DEFAULT ''",
    ("runs", "thread"): "TEXT NOT NULL DEFAULT ''",  # what was read of the chat thread the request came from
    ("turns", "meaning"): "TEXT NOT NULL DEFAULT ''",  # what the turn decided (verdict, triage, plan, README)
    ("turns", "cut_short"): "INTEGER NOT NULL DEFAULT 0",  # the run's end cut the reply short
}


def _why_no_folder(path: Path, error: OSError) -> str:
    in_the_way = next((p for p in reversed(path.parents) if p.exists() and not p.is_dir()), None)
    return f"{in_the_way} is a file, not a folder" if in_the_way else (error.strerror or str(error)).lower()


async def _close_quietly(db: aiosqlite.Connection) -> None:
    try:
        await db.close()
    except sqlite3.Error:
        log.warning("closing the database reported an error", exc_info=True)


async def _add_missing_columns(db: aiosqlite.Connection) -> None:
    for (table, column), declaration in ADDED_COLUMNS.items():
        async with db.execute(f"PRAGMA table_info({table})") as cursor:
            present = {row[1] for row in await cursor.fetchall()}
        if column not in present:
            await db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")


def _storable(value: Any) -> Any:
    """Text SQLite can hold: a lone surrogate (a model's JSON may carry one) becomes U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    return value


_SURROGATE = re.compile("[\ud800-\udfff]")


def _write_probe(path: Path, timeout_s: float) -> None:
    with contextlib.closing(sqlite3.connect(path, timeout=timeout_s, isolation_level=None)) as db:
        db.execute("INSERT OR REPLACE INTO write_probe (id, at) VALUES (1, ?)", (time.time(),))


Statement = tuple[str, tuple[Any, ...]]


def _conversation_write(platform: str, thread_key: str) -> Statement:
    return ("INSERT OR IGNORE INTO conversations (platform, thread_key, created_at) VALUES (?, ?, ?)",
            (platform, thread_key, time.time()))


def _writes(event: Event) -> list[Statement]:
    """What an event leaves in the store, as statements of one transaction; none for events with nothing lasting."""
    if isinstance(event, TurnFinished):
        return _turn_writes(event)
    if isinstance(event, TestReported):
        return [_note(event.run_id, "test_report", decode.report_note(event)),
                ("UPDATE runs SET report = ? WHERE id = ?", (json.dumps(decode.report_dict(event.report)), event.run_id))]
    if isinstance(event, CheckedIn):
        writes: list[Statement] = [("UPDATE runs SET checkin = ? WHERE id = ?", (json.dumps(asdict(event.result)), event.run_id))]
        repository = decode.checked_in_repository(event)
        if repository:
            writes.append(("UPDATE runs SET repository = ?, branch = ?, head_commit = ?, pr_url = ? WHERE id = ?",
                           (*repository, event.run_id)))
        return writes
    if isinstance(event, Notice):
        return [_note(event.run_id, "notice", {"text": event.text})]
    if isinstance(event, WorkSaved):
        return [("UPDATE runs SET files = ?, tests = ?, user_tests = ? WHERE id = ?",
                 (*decode.saved_work(event), event.run_id))]
    if isinstance(event, RunFinished):
        return [_finish_write(event)]
    return []


def _turn_writes(event: TurnFinished) -> list[Statement]:
    now = time.time()
    estimated = int(event.usage.estimated and event.usage.total_tokens > 0)  # as a sum of usages counts it
    return [
        ("INSERT INTO turns (run_id, agent, round, text, files, started_at, finished_at, model, prompt_tokens,"
         " completion_tokens, cost_usd, usage_estimated, meaning, cut_short)"
         " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
         (event.run_id, event.agent, event.round, event.text, json.dumps(event.files.as_dict()),
          now - event.duration_s, now, event.model, event.usage.prompt_tokens, event.usage.completion_tokens,
          event.usage.cost_usd, estimated, decode.meaning_json(event.meaning), int(event.cut_short))),
        ("UPDATE runs SET prompt_tokens = prompt_tokens + ?, completion_tokens = completion_tokens + ?,"
         " cost_usd = cost_usd + ?, usage_estimated = MAX(usage_estimated, ?) WHERE id = ?",
         (event.usage.prompt_tokens, event.usage.completion_tokens, event.usage.cost_usd, estimated, event.run_id)),
    ]


def _finish_write(event: RunFinished) -> Statement:
    """The final state. A bare final event (stopped, or an internal error) carries no files or report;
    what earlier events recorded is kept rather than blanked."""
    status, reason, *kept = decode.finish_values(event)
    return ("UPDATE runs SET status = ?, reason = ?, finished_at = ?, files = COALESCE(?, files),"
            " tests = COALESCE(?, tests), user_tests = COALESCE(?, user_tests), report = COALESCE(?, report),"
            " checkin = COALESCE(?, checkin), plan = COALESCE(NULLIF(?, ''), plan),"
            " language = COALESCE(NULLIF(?, ''), language) WHERE id = ?",
            (status, reason, time.time(), *kept, event.run_id))


def _note(run_id: str, kind: str, body: dict[str, Any]) -> Statement:
    return "INSERT INTO notes (run_id, kind, body, at) VALUES (?, ?, ?, ?)", (run_id, kind, json.dumps(body), time.time())
