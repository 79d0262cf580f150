"""Replicas stopped one after another (a rolling update, then its rollback) hand a long job from one to the next:
each handover is a claim, but none a failure, so the job goes on however often it is handed over. A job is given up
only when its replicas die or lose the database with it (``MAX_CLAIMS``)."""

from __future__ import annotations

import asyncio

from bot.runs.service import Service
from bot.safety.redact import masked_url
from bot.store.postgres import PostgresStore
from bot.store.postgres_queue import MAX_CLAIMS, Limits
from codegen_chat.build import taking_jobs
from tests.fakes.chat_thread import RecordingThread, platform
from tests.fakes.team_script import TEAM_DEFAULTS, ScriptedModel, ScriptedSandbox
from tests.scale.jobs import queued_by_a_receiver, serving, under_way


async def a_replica_stopped_mid_run(db_url: str, thread: RecordingThread, number: int) -> None:
    """A replica claims the job, works on it, and is stopped (SIGTERM) meanwhile."""
    config = serving(db_url)
    store = await PostgresStore.open(db_url, masked_url(db_url))
    store.queue.owner = f"replica-{number}.example:{1000 + number}:1"
    model = ScriptedModel(fallback=TEAM_DEFAULTS, delay=30.0)  # still planning when it is stopped
    service = Service(config, store, model, ScriptedSandbox())
    try:
        async with taking_jobs(service, store, config):
            await service.online(platform(name="chat"), lambda key: asyncio.sleep(0, thread))
            await under_way(model)
            await service.shutdown("the bot is restarting", grace_s=5.0)
    finally:
        await store.close()


async def test_a_job_handed_over_by_every_replica_stopping_is_not_given_up(db_url):
    thread = RecordingThread()
    await queued_by_a_receiver(db_url, thread, [("r0000001", "T1")])
    for number in range(MAX_CLAIMS):
        await a_replica_stopped_mid_run(db_url, thread, number)
    store = await PostgresStore.open(db_url, masked_url(db_url))
    try:
        [claimed] = await store.queue.claim(Limits(8, 8), ["chat"], 1)
    finally:
        await store.close()
    assert (claimed.run_id, claimed.resumed, claimed.stop_reason) == ("r0000001", True, "")
