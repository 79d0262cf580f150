"""A job whose run cannot start where it was claimed (its thread deleted while it waited, the chat refusing its
status message) ends, with a reason: it does not stay claimed and beaten for ever, holding a slot of the shared
limits and the conversation's turn."""

from __future__ import annotations

import asyncio
import dataclasses

from agents.types import RunStatus
from bot.config.sections import Config, LimitsConfig
from bot.runs.service import ChatRequest, Service, _job_json
from bot.safety.redact import masked_url
from bot.store.postgres import PostgresStore
from codegen_chat.build import taking_jobs
from tests.fakes.chat_thread import RecordingThread, platform
from tests.fakes.team_script import TEAM_DEFAULTS, ScriptedModel, ScriptedSandbox

HANG_GUARD_S = 60.0


async def queued_by_a_receiver(db_url: str, thread: RecordingThread, jobs: list[tuple[str, str]]) -> None:
    """What the replica that received the messages leaves: each job queued, its status message drawn."""
    receiver = await PostgresStore.open(db_url, masked_url(db_url))
    try:
        for run_id, thread_key in jobs:
            conversation = await receiver.conversation("chat", thread_key)
            request = ChatRequest("chat", thread_key, "ann", "write find_intf")
            await receiver.queue.enqueue(run_id, conversation, request.text, "ann", [], "", _job_json(request),
                                         f"chat:{run_id}")
            await receiver.queue.publish(run_id, await thread.post(f"⏳ Working on `{run_id}`"))
    finally:
        await receiver.close()


async def test_a_job_whose_thread_is_gone_ends_and_frees_its_slot(db_url):
    thread = RecordingThread()
    await queued_by_a_receiver(db_url, thread, [("gone0001", "T-deleted"), ("next0002", "T-live")])
    config = Config(limits=LimitsConfig(max_concurrent_runs=1, max_runs_per_user=1),
                    storage=dataclasses.replace(Config().storage, url=db_url, heartbeat_s=0.2))
    store = await PostgresStore.open(db_url, masked_url(db_url))
    service = Service(config, store, ScriptedModel(fallback=TEAM_DEFAULTS), ScriptedSandbox())
    try:
        async with taking_jobs(service, store, config):
            async def open_thread(key: str) -> RecordingThread:
                if key == "T-deleted":
                    raise LookupError(f"channel {key} is not a thread")  # as Discord's lookup says of a deleted one
                return thread
            await service.online(platform(name="chat"), open_thread)

            async def both_ended() -> list:
                while True:
                    runs = await store.runs(5)
                    if all(r.status != RunStatus.RUNNING for r in runs):
                        return runs
                    await asyncio.sleep(0.05)
            runs = {r.id: r for r in await asyncio.wait_for(both_ended(), HANG_GUARD_S)}
    finally:
        await store.close()
    assert runs["next0002"].status == RunStatus.PASSED  # the slot it waited for was freed
    assert runs["gone0001"].status == RunStatus.ERROR
    assert "could not start" in runs["gone0001"].reason
