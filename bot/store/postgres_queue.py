"""Runs as durable jobs on the store's own tables: the PostgreSQL queue several replicas share.

A job is a run row with its request in ``runs.job`` (``runs.owner`` empty while it waits), inserted in the
transaction that records the run and announced with ``NOTIFY`` at its commit. Any replica's worker claims
waiting jobs (``claim``): under one transaction-scoped advisory lock, so the limits are counted across replicas
exactly (how many runs are under way, per user, one per conversation), with ``FOR UPDATE SKIP LOCKED`` on the
rows themselves. A claim bumps the run's ``epoch``, the fencing counter: the store refuses (``Fenced``) any
write of a process whose epoch is no longer the run's, so a replica that lost its run (paused, partitioned,
taken for dead) can no longer record it or end it in its thread.

An owner heartbeats its runs (``beat``); one whose heartbeat is older than ``lost_after_s`` (or whose process is
gone from this host) has its runs put back in the queue (``requeue_lost``), and the next claim resumes them from
what they saved. A Stop pressed on any replica is persisted (``request_stop``), and the owner's next beat sees it.
Every time written here is the database's clock (``NOW``), never a replica's: hosts whose clocks disagree must not
take a job before its status message is drawn, or an event another replica is still handling.
"""

from __future__ import annotations

import dataclasses
import json
import socket
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agents.types import PriorWork
from bot.store import owners
from bot.store import rows as decode
from bot.store.errors import Fenced

JOBS_CHANNEL = "codegen_jobs"  # NOTIFY: a job is waiting, or a Stop was asked for
QUEUE_LOCK = 0x6A6F6273  # pg_advisory_xact_lock key: one claim at a time, so the limits are exact
UNPOSTED_GRACE_S = 30.0  # a job whose receiver died before drawing its status message is claimed after this
NOW = "EXTRACT(EPOCH FROM clock_timestamp())"  # every time the replicas compare: the database's clock, not theirs
MAX_CLAIMS = 5  # a job claimed this often without finishing (nor being handed over) is ended, not claimed again
GIVEN_UP = (f"it was started {MAX_CLAIMS} times and never finished (its replicas died or lost the database each "
            "time); the bot's log says why")

if TYPE_CHECKING:  # psycopg is imported only by those who use PostgreSQL (the store's module does)
    import psycopg

Transaction = Callable[[str], AbstractAsyncContextManager["psycopg.AsyncConnection[dict[str, Any]]"]]


@dataclass(frozen=True)
class Claimed:
    """A job this process now owns at ``epoch``."""

    run_id: str
    epoch: int
    platform: str
    thread_key: str
    conversation_id: int
    user_id: str
    task: str
    job: str  # the request, as the receiving replica encoded it
    status_message: str  # the message drawn for it, to edit (empty: its receiver died before drawing one)
    stop_reason: str  # a Stop asked for before it was claimed: end it at once
    resumed: bool  # an earlier owner ran it and was lost: go on from what it saved
    ended: bool = False  # it finished, but its owner died before drawing its end: draw only that


@dataclass(frozen=True)
class Queued:
    made: bool  # False: the message this run was asked in has one already
    follows: str | None  # the run it waits for in its conversation


@dataclass(frozen=True)
class Limits:
    max_running: int
    max_per_user: int


@dataclass(frozen=True)
class Beat:
    lost: tuple[str, ...]  # runs this process thought it owned, claimed by another since
    stops: tuple[tuple[str, str], ...]  # (run, why) a Stop was asked for


class PostgresQueue:
    def __init__(self, transaction: Transaction, owner: str) -> None:
        self._transaction, self.owner = transaction, owner
        self.epochs: dict[str, int] = {}  # run -> the epoch this process claimed it at (read by the store's fence)

    async def enqueue(self, run_id: str, conversation_id: int, task: str, user_id: str, attachments: list[str],
                      thread: str, job: str, source: str = "") -> Queued:
        """Record the run and queue it, in one transaction; the run it waits for in its conversation, if any.
        ``source`` (the message it was asked in): a second run of one message is not made (``Queued.made``
        False), so an event handled again after a crash starts none."""
        async with self._transaction("save the run to") as db:
            cursor = await db.execute("SELECT id FROM runs WHERE conversation_id = %s AND status = 'running'"
                                      " ORDER BY seq DESC LIMIT 1", (conversation_id,))
            before = await cursor.fetchone()
            cursor = await db.execute(
                "INSERT INTO runs (id, conversation_id, task, user_id, status, owner, created_at, attachments, thread,"
                f" job, source) VALUES (%s, %s, %s, %s, 'running', '', {NOW}, %s, %s, %s, %s)"
                " ON CONFLICT (source) WHERE source <> '' DO NOTHING",
                (run_id, conversation_id, task, user_id, json.dumps(attachments), thread, job, source))
            made = cursor.rowcount == 1
            if made:
                await db.execute(f"NOTIFY {JOBS_CHANNEL}")
        return Queued(made, None if before is None else str(before["id"]))

    async def publish(self, run_id: str, status_message: str) -> None:
        """Its status message is drawn: the job may be claimed now (its claimer edits that message)."""
        async with self._transaction("write to") as db:
            await db.execute("UPDATE runs SET status_message = %s WHERE id = %s", (status_message, run_id))
            await db.execute(f"NOTIFY {JOBS_CHANNEL}")

    async def claim(self, limits: Limits, platforms: Sequence[str], wanted: int) -> list[Claimed]:
        """Up to ``wanted`` waiting jobs of ``platforms`` the limits let start now, oldest first, owned by this
        process from now on (a job with a Stop asked for is claimed whatever the limits, to be ended)."""
        if wanted <= 0 or not platforms:
            return []
        async with self._transaction("write to") as db:
            await db.execute("SELECT pg_advisory_xact_lock(%s)", (QUEUE_LOCK,))
            cursor = await db.execute(
                "SELECT r.id, r.epoch, r.job, r.stop_requested, r.status_message, r.user_id, r.task, r.status,"
                " r.conversation_id, c.platform, c.thread_key,"
                " (SELECT COUNT(*) FROM run_claims k WHERE k.run_id = r.id) AS claims,"
                " (SELECT COUNT(*) FROM run_claims k WHERE k.run_id = r.id AND k.handed_over = 0) AS failed"
                " FROM runs r JOIN conversations c ON c.id = r.conversation_id"
                " WHERE r.job <> '' AND r.owner = '' AND c.platform = ANY(%s) AND ((r.status = 'running'"
                f" AND (r.status_message <> '' OR r.created_at < {NOW} - %s OR r.stop_requested <> '')"
                " AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.conversation_id = r.conversation_id"
                "   AND o.status = 'running' AND (o.owner <> '' OR o.seq < r.seq)))"
                "  OR (r.status <> 'running' AND r.drawn = 0))"
                " ORDER BY r.seq FOR UPDATE OF r SKIP LOCKED",
                (list(platforms), UNPOSTED_GRACE_S))
            waiting = await cursor.fetchall()
            if not waiting:
                return []
            cursor = await db.execute("SELECT user_id, COUNT(*) AS n FROM runs WHERE status = 'running'"
                                      " AND owner <> '' GROUP BY user_id")
            per_user = {row["user_id"]: int(row["n"]) for row in await cursor.fetchall()}
            running = sum(per_user.values())
            chosen: list[dict[str, Any]] = []
            for row in waiting:
                if len(chosen) >= wanted:
                    break
                ended = row["status"] != "running"  # its owner died before its end was drawn: only that is left
                if int(row["failed"]) >= MAX_CLAIMS and not row["stop_requested"] and not ended:  # it keeps breaking
                    row["stop_requested"] = GIVEN_UP
                if not row["stop_requested"] and not ended:
                    if running >= limits.max_running or per_user.get(row["user_id"], 0) >= limits.max_per_user:
                        continue
                    running += 1
                    per_user[row["user_id"]] = per_user.get(row["user_id"], 0) + 1
                chosen.append(row)
            claimed = []
            for row in chosen:
                epoch = int(row["epoch"]) + 1
                await db.execute(f"UPDATE runs SET owner = %s, epoch = %s, heartbeat_at = {NOW} WHERE id = %s",
                                 (self.owner, epoch, row["id"]))
                await db.execute("INSERT INTO run_claims (run_id, epoch, owner, claimed_at)"
                                 f" VALUES (%s, %s, %s, {NOW})", (row["id"], epoch, self.owner))
                claimed.append(Claimed(row["id"], epoch, row["platform"], row["thread_key"],
                                       int(row["conversation_id"]), row["user_id"], row["task"], row["job"],
                                       row["status_message"], row["stop_requested"], int(row["claims"]) > 0,
                                       ended=row["status"] != "running"))
        for run in claimed:
            self.epochs[run.run_id] = run.epoch
        return claimed

    async def beat(self) -> Beat:
        """Tell the database this process's jobs have a live owner; which of them it has lost, which to stop."""
        async with self._transaction("write to") as db:
            cursor = await db.execute(
                f"UPDATE runs SET heartbeat_at = {NOW} WHERE owner = %s AND job <> '' AND (status = 'running'"
                " OR drawn = 0) RETURNING id, epoch, stop_requested", (self.owner,))
            held = {row["id"]: (int(row["epoch"]), row["stop_requested"]) for row in await cursor.fetchall()}
            # Lost: claimed by another since (a later epoch), or put back in the queue. A run that has just ended
            # here is neither (its final event is committed; the service lets go of it a moment later).
            cursor = await db.execute("SELECT id, epoch, owner FROM runs WHERE id = ANY(%s)", (list(self.epochs),))
            rows = {row["id"]: (int(row["epoch"]), row["owner"]) for row in await cursor.fetchall()}
            # and the Stops asked for this replica's own runs (a web chat's), which no job row carries
            cursor = await db.execute("SELECT id, stop_requested FROM runs WHERE owner = %s AND status = 'running'"
                                      " AND job = '' AND stop_requested <> ''", (self.owner,))
            own_stops = tuple((row["id"], row["stop_requested"]) for row in await cursor.fetchall())
        lost = tuple(run for run, epoch in self.epochs.items() if rows.get(run) != (epoch, self.owner))
        stops = tuple((run, why) for run, (epoch, why) in held.items() if why and self.epochs.get(run) == epoch)
        return Beat(lost, stops + own_stops)

    def let_go(self, run_id: str) -> None:
        """The run ended here (or was lost): no more beats or fencing for it."""
        self.epochs.pop(run_id, None)

    async def drawn(self, run_id: str) -> None:
        """The run's end is shown in its thread: nothing of it is left for another replica to do."""
        async with self._transaction("write to") as db:
            await db.execute("UPDATE runs SET drawn = 1 WHERE id = %s", (run_id,))

    async def release(self, run_ids: Sequence[str], handed_over: bool = False) -> None:
        """Hand runs back to the queue: another claims them at once and resumes them; this one's late writes are
        refused from now on. ``handed_over``: this replica is shutting down, which is no failure of the jobs (a
        rolling update hands a long job on several times); else (the database lost meanwhile) the claim counts
        toward ``MAX_CLAIMS``."""
        async with self._transaction("write to") as db:
            cursor = await db.execute("UPDATE runs SET owner = '' WHERE id = ANY(%s) AND owner = %s"
                                      " AND (status = 'running' OR drawn = 0) RETURNING id, epoch",
                                      (list(run_ids), self.owner))
            released = [(row["id"], int(row["epoch"])) for row in await cursor.fetchall()]
            if handed_over and released:
                await db.execute("UPDATE run_claims SET handed_over = 1 WHERE (run_id, epoch) IN"
                                 " (SELECT * FROM UNNEST(%s::text[], %s::bigint[]))",
                                 ([run for run, _ in released], [epoch for _, epoch in released]))
            await db.execute(f"NOTIFY {JOBS_CHANNEL}")

    async def requeue_lost(self, lost_after_s: float) -> list[str]:
        """Put back in the queue the jobs whose owner is gone: its heartbeat older than ``lost_after_s``, or its
        process ended on this host. The next claim resumes them."""
        async with self._transaction("write to") as db:
            cursor = await db.execute("SELECT id, owner FROM runs WHERE (status = 'running' OR drawn = 0) AND job <> ''"
                                      " AND owner <> '' AND owner <> %s", (self.owner,))
            host = socket.gethostname()
            ended = [row["id"] for row in await cursor.fetchall() if owners.gone_from(row["owner"], host)]
            # A row another transaction holds (its owner stopped in the middle of a write) is left for the next
            # heartbeat rather than waited on: the worker waiting would stop claiming and beating meanwhile.
            cursor = await db.execute(
                "UPDATE runs SET owner = '' WHERE id IN (SELECT id FROM runs WHERE (status = 'running' OR drawn = 0)"
                " AND job <> '' AND owner <> '' AND owner <> %s"
                f" AND (id = ANY(%s) OR COALESCE(heartbeat_at, 0) < {NOW} - %s) FOR UPDATE SKIP LOCKED) RETURNING id",
                (self.owner, ended, lost_after_s))
            requeued = [row["id"] for row in await cursor.fetchall()]
            if requeued:
                await db.execute(f"NOTIFY {JOBS_CHANNEL}")
        return requeued

    async def request_stop(self, run_id: str, reason: str) -> str | None:
        """Ask whoever owns the run (or will claim it) to stop it; who started it, or None when it has ended."""
        async with self._transaction("write to") as db:
            cursor = await db.execute("UPDATE runs SET stop_requested = %s WHERE id = %s AND status = 'running'"
                                      " RETURNING user_id", (reason, run_id))
            row = await cursor.fetchone()
            if row is not None:
                await db.execute(f"NOTIFY {JOBS_CHANNEL}")
        return None if row is None else str(row["user_id"])

    async def starter(self, run_id: str) -> str | None:
        """Who started a job under way or waiting, on any replica; None when there is none by that id."""
        async with self._transaction("read") as db:
            cursor = await db.execute("SELECT user_id FROM runs WHERE id = %s AND status = 'running'", (run_id,))
            row = await cursor.fetchone()
        return None if row is None else str(row["user_id"])

    async def resume_work(self, conversation_id: int, run_id: str) -> PriorWork | None:
        """What a job taken over goes on from: the conversation's earlier runs, and the files the job itself saved
        (the same run going on, not a follow-up of itself)."""
        async with self._transaction("read") as db:
            cursor = await db.execute(
                "SELECT * FROM runs WHERE conversation_id = %s AND seq <= (SELECT seq FROM runs WHERE id = %s)"
                " ORDER BY seq", (conversation_id, run_id))
            found = await cursor.fetchall()
        if not found:
            return None
        earlier, own = found[:-1], found[-1]
        base = decode.prior_work(found if json.loads(own["files"]) else earlier)  # its own files, once it saved any
        return None if base is None else dataclasses.replace(base, tasks=tuple(r["task"] for r in earlier))

    # -- persist, then acknowledge ------------------------------------------------------------

    async def received(self, key: str, platform: str, payload: str) -> None:
        """An event kept before the platform is told it arrived (a redelivery of it changes nothing)."""
        async with self._transaction("write to") as db:
            await db.execute("INSERT INTO inbox (key, platform, payload, received_at, taken_at) VALUES (%s, %s, %s,"
                             f" {NOW}, {NOW}) ON CONFLICT DO NOTHING", (key, platform, payload))

    async def handled(self, key: str) -> None:
        async with self._transaction("write to") as db:
            await db.execute(f"UPDATE inbox SET done_at = {NOW} WHERE key = %s", (key,))

    async def unhandled(self, platform: str, older_than_s: float, limit: int = 20) -> list[tuple[str, str]]:
        """Events of ``platform`` received ``older_than_s`` ago and never handled (the replica that took them died):
        (key, payload), taken by this replica to handle now (another asks again only ``older_than_s`` later)."""
        async with self._transaction("write to") as db:
            cursor = await db.execute(
                f"UPDATE inbox SET taken_at = {NOW} WHERE key IN (SELECT key FROM inbox WHERE done_at IS NULL"
                f" AND platform = %s AND taken_at < {NOW} - %s ORDER BY received_at LIMIT %s FOR UPDATE SKIP LOCKED)"
                " RETURNING key, payload", (platform, older_than_s, limit))
            return [(row["key"], row["payload"]) for row in await cursor.fetchall()]

    async def fence(self, db: psycopg.AsyncConnection[dict[str, Any]], run_id: str) -> None:
        """Inside a write's transaction: ``Fenced`` unless this process may write the run: a job only while it is
        this process's at the epoch it claimed it at (the row stays locked until the write commits, so a claim
        cannot slip in between); a run a process drives itself (no job: the terminal's, the web chat's) always.
        Judged from the row, not from what this process remembers: a job it has let go of (lost, say, while its
        run here was still ending) is refused too."""
        epoch = self.epochs.get(run_id)
        cursor = await db.execute("SELECT epoch, owner, job <> '' AS job FROM runs WHERE id = %s FOR UPDATE",
                                  (run_id,))
        row = await cursor.fetchone()
        if row is None:
            if epoch is None:
                return
        elif not row["job"] or (int(row["epoch"]) == epoch and row["owner"] == self.owner):
            return
        raise Fenced(f"run {run_id} was taken over by another replica; this one stops writing it")

    async def finished(self, db: psycopg.AsyncConnection[dict[str, Any]], run_id: str) -> None:
        """Inside the final event's transaction: the claim that finished it, noted."""
        epoch = self.epochs.get(run_id)
        if epoch is not None:
            await db.execute(f"UPDATE run_claims SET finished_at = {NOW} WHERE run_id = %s AND epoch = %s",
                             (run_id, epoch))

