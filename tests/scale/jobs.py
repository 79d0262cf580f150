"""What the durable-job tests share: jobs a receiving replica queued, a serving replica's config, waiting for a run
to be under way."""

from __future__ import annotations

import asyncio
import dataclasses

from bot.config.sections import Config, LimitsConfig
from bot.runs.service import ChatRequest, _job_json
from bot.safety.redact import masked_url
from bot.store.postgres import PostgresStore
from tests.fakes.chat_thread import RecordingThread
from tests.fakes.team_script import ScriptedModel

HANG_GUARD_S = 60.0  # reached only when what a test waits for never comes


async def queued_by_a_receiver(db_url: str, thread: RecordingThread, jobs: list[tuple[str, str]]) -> None:
    """What the replica that received the messages leaves: each (run, thread key) queued, its status message drawn."""
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


def serving(db_url: str, heartbeat_s: float = 0.2, limits: LimitsConfig | None = None) -> Config:
    """A replica's config: the store at ``db_url``, beating every ``heartbeat_s``."""
    return Config(limits=limits or LimitsConfig(),
                  storage=dataclasses.replace(Config().storage, url=db_url, heartbeat_s=heartbeat_s))


async def under_way(model: ScriptedModel) -> None:
    """Until the run has asked the model (its team is at work)."""
    async def asked() -> None:
        while not model.calls:
            await asyncio.sleep(0.05)
    await asyncio.wait_for(asked(), HANG_GUARD_S)
