"""A replica that stops in the middle of a transaction (paused by SIGSTOP or a long GC, cut off with its connection
left open) holds row and queue locks: the other replicas' workers must not wait on it for as long as it stays
stopped. The server ends such a transaction, the others take its run over, and the stalled replica's write, once it
goes on, is refused."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from bot.store import postgres
from bot.store.errors import StoreError
from bot.store.postgres_queue import QUEUE_LOCK, Limits

WIDE = Limits(max_running=100, max_per_user=100)
HANG_GUARD_S = 60.0  # far longer than the stall the server allows here; reached only when a worker waits for ever


@pytest.fixture(autouse=True)
def short_stalls(monkeypatch):
    """Before the replicas open their pools: the test's patience, not the product's."""
    monkeypatch.setattr(postgres, "STALLED_TRANSACTION_S", 1.0, raising=False)


async def job(store, run_id, thread):
    conversation = await store.conversation("slack", thread)
    await store.queue.enqueue(run_id, conversation, f"task {run_id}", "ann", [], "", '{"text": "t"}')
    await store.queue.publish(run_id, f"ts-{run_id}")


@contextlib.asynccontextmanager
async def stopped_inside(store, first_statement):
    """``store``'s process stops inside a transaction after ``first_statement(db)``; on leaving, it goes on and
    commits (what it says then is the outcome)."""
    stalled, resume = asyncio.Event(), asyncio.Event()
    outcome: list[BaseException | None] = []

    async def transaction():
        try:
            async with store._transaction("write to") as db:
                await first_statement(db)
                stalled.set()
                await resume.wait()
                await db.execute("SELECT 1")
            outcome.append(None)
        except StoreError as error:
            outcome.append(error)

    task = asyncio.create_task(transaction())
    await stalled.wait()
    try:
        yield outcome
    finally:
        resume.set()
        await task


async def test_a_replica_stopped_inside_a_write_does_not_hold_up_the_takeover(replicas):
    paused, other = replicas
    await job(paused, "r1", "C1:1.1")
    [claimed] = await paused.queue.claim(WIDE, ["slack"], 1)
    async with stopped_inside(paused, lambda db: paused.queue.fence(db, "r1")) as outcome:
        async def take_over():
            while not await other.queue.requeue_lost(lost_after_s=0.0):
                await asyncio.sleep(0.2)  # its run is held by the stalled write: asked again next heartbeat
            return await other.queue.claim(WIDE, ["slack"], 1)
        [again] = await asyncio.wait_for(take_over(), HANG_GUARD_S)
        assert (again.run_id, again.epoch) == ("r1", claimed.epoch + 1)
    assert isinstance(outcome[0], StoreError)  # the stalled write, going on, commits nothing


async def test_a_replica_stopped_inside_a_claim_does_not_stop_the_others_claiming(replicas):
    paused, other = replicas
    await job(paused, "r1", "C1:1.1")
    async with stopped_inside(paused, lambda db: db.execute("SELECT pg_advisory_xact_lock(%s)", (QUEUE_LOCK,))):
        [claimed] = await asyncio.wait_for(other.queue.claim(WIDE, ["slack"], 1), HANG_GUARD_S)
        assert claimed.run_id == "r1"
