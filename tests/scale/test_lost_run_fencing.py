"""A replica that lost its run (paused, taken for dead, its job claimed by another) learns so on its next beat and
stops the run here. How it ends here is written nowhere: the run's row is the new owner's, still running, so its
Stop, its place in the limits and its conversation's turn stay as they were."""

from __future__ import annotations

import asyncio
import dataclasses

from agents.types import RunStatus
from bot.config.sections import Config, LimitsConfig
from bot.runs.service import Service
from bot.safety.redact import masked_url
from bot.store.postgres import PostgresStore
from bot.store.postgres_queue import Limits
from codegen_chat.build import taking_jobs
from tests.fakes.chat_thread import RecordingThread, platform
from tests.fakes.team_script import TEAM_DEFAULTS, ScriptedModel, ScriptedSandbox
from tests.scale.test_unstartable_job import HANG_GUARD_S, queued_by_a_receiver


async def test_the_replica_that_lost_a_run_writes_nothing_of_how_it_ended_there(db_url):
    thread = RecordingThread()
    await queued_by_a_receiver(db_url, thread, [("r0000001", "T1")])
    config = Config(limits=LimitsConfig(max_runs_per_replica=1),  # busy with the run: it cannot claim it back itself
                    storage=dataclasses.replace(Config().storage, url=db_url, heartbeat_s=0.2))
    store = await PostgresStore.open(db_url, masked_url(db_url))
    other = await PostgresStore.open(db_url, masked_url(db_url))
    other.queue.owner = "replica-b.example:2000:1"
    model = ScriptedModel(fallback=TEAM_DEFAULTS, delay=0.5)  # the run is under way when it is taken over
    service = Service(config, store, model, ScriptedSandbox())
    try:
        async with taking_jobs(service, store, config):
            await service.online(platform(name="chat"), lambda key: asyncio.sleep(0, thread))

            async def under_way_here() -> None:
                while not model.calls:
                    await asyncio.sleep(0.05)
            await asyncio.wait_for(under_way_here(), HANG_GUARD_S)
            # this replica is taken for dead (its beats late) and the other claims the run
            assert await other.queue.requeue_lost(lost_after_s=0.0) == ["r0000001"]
            [claimed] = await other.queue.claim(Limits(8, 8), ["chat"], 1)

            async def stopped_here() -> None:  # its next beat tells it, and it stops the run
                while service.active_run("chat", "T1") is not None:
                    await asyncio.sleep(0.05)
            await asyncio.wait_for(stopped_here(), HANG_GUARD_S)
            record = await store.run("r0000001")
    finally:
        await other.close()
        await store.close()
    assert record is not None
    assert (record.summary.status, record.summary.reason) == (RunStatus.RUNNING, "")  # the other replica's to end
    assert claimed.epoch == 2


async def test_a_replica_refused_a_write_before_its_beat_says_so_lets_the_run_go_and_takes_the_next(db_url):
    thread = RecordingThread()
    await queued_by_a_receiver(db_url, thread, [("r0000001", "T1")])
    config = Config(limits=LimitsConfig(max_runs_per_replica=1),
                    storage=dataclasses.replace(Config().storage, url=db_url, heartbeat_s=600.0))  # no beat meanwhile
    store = await PostgresStore.open(db_url, masked_url(db_url))
    other = await PostgresStore.open(db_url, masked_url(db_url))
    other.queue.owner = "replica-b.example:2000:1"
    model = ScriptedModel(fallback=TEAM_DEFAULTS, delay=0.2)
    service = Service(config, store, model, ScriptedSandbox())
    try:
        async with taking_jobs(service, store, config):
            await service.online(platform(name="chat"), lambda key: asyncio.sleep(0, thread))

            async def under_way_here() -> None:
                while not model.calls:
                    await asyncio.sleep(0.05)
            await asyncio.wait_for(under_way_here(), HANG_GUARD_S)
            assert await other.queue.requeue_lost(lost_after_s=0.0) == ["r0000001"]
            await other.queue.claim(Limits(8, 8), ["chat"], 1)
            # its next write is refused: the run ends here, and its one slot takes the next job
            await queued_by_a_receiver(db_url, thread, [("r0000002", "T2")])

            async def next_one_passed() -> None:
                while (await store.run("r0000002")).summary.status != RunStatus.PASSED:
                    await asyncio.sleep(0.05)
            await asyncio.wait_for(next_one_passed(), HANG_GUARD_S)
            async with store._transaction("read") as db:
                cursor = await db.execute("SELECT drawn, owner, status FROM runs WHERE id = 'r0000001'")
                row = await cursor.fetchone()
    finally:
        await other.close()
        await store.close()
    assert dict(row) == {"drawn": 0, "owner": other.queue.owner, "status": "running"}  # the new owner's to end
