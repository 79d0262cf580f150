"""The durable job queue on a real PostgreSQL, with two stores as two replicas (each its own pool and owner):
one run at a time per conversation across them, the limits counted across them, the fencing epoch refusing a
replica that lost its run, and a Stop asked on one replica seen by the owner."""

from __future__ import annotations

import asyncio

import psycopg
import pytest

from agents.events import Notice, RunFinished
from agents.types import RunStatus
from bot.store.errors import Fenced
from bot.store.postgres_queue import GIVEN_UP, MAX_CLAIMS, Limits

WIDE = Limits(max_running=100, max_per_user=100)


async def enqueue(store, thread, run_id, user="ann"):
    conversation = await store.conversation("slack", thread)
    await store.queue.enqueue(run_id, conversation, f"task {run_id}", user, [], "", '{"text": "t"}')
    await store.queue.publish(run_id, f"ts-{run_id}")


async def claim_both(replicas, limits=WIDE, wanted=10):
    claimed = await asyncio.gather(*(r.queue.claim(limits, ["slack"], wanted) for r in replicas))
    return [[c.run_id for c in each] for each in claimed]


async def test_two_workers_never_run_one_conversations_runs_at_once(replicas):
    first, second = replicas
    for run_id in ("a1", "a2", "a3"):
        await enqueue(first, "C1:100.1", run_id)
    await enqueue(second, "C1:200.1", "b1")
    taken = await claim_both(replicas)
    assert sorted(every(taken)) == ["a1", "b1"]  # a2 and a3 wait for a1, whoever asks
    assert await claim_both(replicas) == [[], []]
    owner = first if "a1" in taken[0] else second
    await owner.record(RunFinished("a1", status=RunStatus.PASSED, reason=""))
    assert every(await claim_both(replicas)) == ["a2"]  # the next in line, only once the one before ended


async def test_the_limits_are_counted_across_replicas(replicas):
    for number in range(6):
        await enqueue(replicas[number % 2], f"C1:{number}.1", f"r{number}", user="ann" if number < 4 else "bob")
    taken = await claim_both(replicas, Limits(max_running=3, max_per_user=2))
    claimed = every(taken)
    assert len(claimed) == 3
    assert sum(run in {"r0", "r1", "r2", "r3"} for run in claimed) == 2  # ann's two, bob's one, across both


async def test_a_late_write_from_the_replica_that_lost_the_run_is_refused(replicas):
    first, second = replicas
    await enqueue(first, "C1:1.1", "r1")
    [[claimed]] = [await first.queue.claim(WIDE, ["slack"], 1)]
    await first.record(Notice("r1", "working"))  # its owner writes
    # the first replica stops beating (paused, partitioned): the second takes it for dead and claims it
    assert await second.queue.requeue_lost(lost_after_s=0.0) == ["r1"]
    [again] = await second.queue.claim(WIDE, ["slack"], 1)
    assert (again.run_id, again.epoch, again.resumed) == ("r1", claimed.epoch + 1, True)
    with pytest.raises(Fenced, match="taken over by another replica"):
        await first.record(RunFinished("r1", status=RunStatus.FAILED, reason=""))
    with pytest.raises(Fenced):
        await first.set_repository("r1", "acme/widgets", "codegen/r1")
    assert (await first.queue.beat()).lost == ("r1",)  # the loser learns it on its next beat
    await second.record(RunFinished("r1", status=RunStatus.PASSED, reason=""))
    record = await first.run("r1")
    assert record is not None and (record.summary.status, record.summary.repository) == ("passed", "")
    assert await claims(first, "r1") == [(1, False), (2, True)]  # claimed twice, finished once: by the winner


async def test_a_stop_pressed_on_another_replica_reaches_the_owner(replicas):
    first, second = replicas
    await enqueue(first, "C1:1.1", "r1")
    await first.queue.claim(WIDE, ["slack"], 1)
    assert await second.queue.request_stop("r1", "stopped on request") == "ann"
    assert (await first.queue.beat()).stops == (("r1", "stopped on request"),)
    await first.record(RunFinished("r1", status=RunStatus.STOPPED, reason=""))
    assert await second.queue.request_stop("r1", "stopped on request") is None  # ended: nothing to stop


async def test_a_waiting_job_stopped_is_claimed_to_be_ended_whatever_the_limits(replicas):
    first, second = replicas
    await enqueue(first, "C1:1.1", "r1")
    await enqueue(first, "C1:2.1", "r2")
    await first.queue.claim(Limits(max_running=1, max_per_user=1), ["slack"], 5)
    await second.queue.request_stop("r2", "stopped on request")
    [ended] = await second.queue.claim(Limits(max_running=1, max_per_user=1), ["slack"], 5)
    assert (ended.run_id, ended.stop_reason) == ("r2", "stopped on request")


async def claims(store, run_id):
    async with await psycopg.AsyncConnection.connect(store._url) as db:
        cursor = await db.execute("SELECT epoch, finished_at IS NOT NULL FROM run_claims WHERE run_id = %s"
                                  " ORDER BY epoch", (run_id,))
        return [(int(epoch), bool(done)) for epoch, done in await cursor.fetchall()]


def every(per_replica):
    return [run for runs in per_replica for run in runs]


async def test_a_job_that_keeps_losing_its_owners_is_ended_rather_than_claimed_for_ever(replicas):
    first, second = replicas
    await enqueue(first, "C1:1.1", "r1")
    for _ in range(MAX_CLAIMS):
        [claimed] = await first.queue.claim(WIDE, ["slack"], 1)
        assert claimed.stop_reason == ""
        assert await second.queue.requeue_lost(lost_after_s=0.0) == ["r1"]  # its owner taken for dead again
    [ended] = await second.queue.claim(Limits(max_running=0, max_per_user=0), ["slack"], 1)
    assert (ended.run_id, ended.stop_reason) == ("r1", GIVEN_UP)  # to be ended in its thread, whatever the limits


async def test_a_run_whose_owner_died_before_drawing_its_end_is_claimed_to_draw_it(replicas):
    first, second = replicas
    for run_id in ("r1", "r2"):
        await enqueue(first, f"C1:{run_id}", run_id)
    await first.queue.claim(WIDE, ["slack"], 2)
    for run_id in ("r1", "r2"):
        await first.record(RunFinished(run_id, status=RunStatus.PASSED, reason=""))  # recorded, then...
    await first.queue.drawn("r2")  # ...r2's end shown in its thread; the owner dies before r1's is
    assert await second.queue.requeue_lost(lost_after_s=0.0) == ["r1"]
    [ended] = await second.queue.claim(Limits(max_running=0, max_per_user=0), ["slack"], 5)
    assert (ended.run_id, ended.ended) == ("r1", True)
    await second.queue.drawn("r1")
    assert await second.queue.requeue_lost(lost_after_s=0.0) == []
