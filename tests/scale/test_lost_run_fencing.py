"""A replica that lost its run (paused, taken for dead, its job claimed by another) stops the run here once it knows,
from its next beat or from a write refused first. How it ends here is written nowhere: the run's row is the new
owner's, still running, so its Stop, its place in the limits and its conversation's turn stay as they were; and the
replica's slot is free for its next job."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from agents.types import RunStatus
from bot.config.sections import LimitsConfig
from bot.runs.service import Service
from bot.safety.redact import masked_url
from bot.store.postgres import PostgresStore
from bot.store.postgres_queue import Limits
from codegen_chat.build import taking_jobs
from tests.fakes.chat_thread import RecordingThread, platform
from tests.fakes.team_script import TEAM_DEFAULTS, ScriptedModel, ScriptedSandbox
from tests.scale.jobs import HANG_GUARD_S, queued_by_a_receiver, serving, under_way

OTHER = "replica-b.example:2000:1"


@contextlib.asynccontextmanager
async def taken_over_while_under_way(db_url: str, thread: RecordingThread,
                                     heartbeat_s: float) -> AsyncIterator[tuple[Service, PostgresStore]]:
    """A serving replica (one run at a time) at work on job r0000001 when the other replica, taking it for dead,
    claims it."""
    await queued_by_a_receiver(db_url, thread, [("r0000001", "T1")])
    config = serving(db_url, heartbeat_s, LimitsConfig(max_runs_per_replica=1))  # busy: it cannot claim it back
    store = await PostgresStore.open(db_url, masked_url(db_url))
    other = await PostgresStore.open(db_url, masked_url(db_url))
    other.queue.owner = OTHER
    model = ScriptedModel(fallback=TEAM_DEFAULTS, delay=0.2)
    service = Service(config, store, model, ScriptedSandbox())
    try:
        async with taking_jobs(service, store, config):
            await service.online(platform(name="chat"), lambda key: asyncio.sleep(0, thread))
            await under_way(model)
            assert await other.queue.requeue_lost(lost_after_s=0.0) == ["r0000001"]
            [claimed] = await other.queue.claim(Limits(8, 8), ["chat"], 1)
            assert claimed.epoch == 2
            yield service, store
    finally:
        await other.close()
        await store.close()


async def the_taken_run(store: PostgresStore) -> dict:
    async with store._transaction("read") as db:
        cursor = await db.execute("SELECT status, reason, owner, drawn FROM runs WHERE id = 'r0000001'")
        return dict(await cursor.fetchone() or {})


async def test_the_replica_that_lost_a_run_writes_nothing_of_how_it_ended_there(db_url):
    async with taken_over_while_under_way(db_url, RecordingThread(), heartbeat_s=0.2) as (service, store):
        async def stopped_here() -> None:  # its next beat tells it, and it stops the run
            while service.active_run("chat", "T1") is not None:
                await asyncio.sleep(0.05)
        await asyncio.wait_for(stopped_here(), HANG_GUARD_S)
        row = await the_taken_run(store)
    assert row == {"status": RunStatus.RUNNING, "reason": "", "owner": OTHER, "drawn": 0}  # the other's to end


async def test_a_replica_refused_a_write_before_its_beat_says_so_lets_the_run_go_and_takes_the_next(db_url):
    thread = RecordingThread()
    async with taken_over_while_under_way(db_url, thread, heartbeat_s=600.0) as (service, store):  # no beat now
        # its next write is refused: the run ends here, and its one slot takes the next job
        await queued_by_a_receiver(db_url, thread, [("r0000002", "T2")])

        async def next_one_passed() -> None:
            while (await store.run("r0000002")).summary.status != RunStatus.PASSED:
                await asyncio.sleep(0.05)
        await asyncio.wait_for(next_one_passed(), HANG_GUARD_S)
        row = await the_taken_run(store)
    assert row == {"status": RunStatus.RUNNING, "reason": "", "owner": OTHER, "drawn": 0}
