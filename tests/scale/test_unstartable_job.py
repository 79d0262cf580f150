"""A job whose run cannot start where it was claimed (its thread deleted while it waited, the chat refusing its
status message) ends, with a reason: it does not stay claimed and beaten for ever, holding a slot of the shared
limits and the conversation's turn."""

from __future__ import annotations

import asyncio

import pytest

from agents.types import RunStatus
from bot.config.sections import LimitsConfig
from bot.runs.service import Service
from bot.safety.redact import masked_url
from bot.store.postgres import PostgresStore
from codegen_chat.build import taking_jobs
from tests.fakes.chat_thread import RecordingThread, platform
from tests.fakes.team_script import TEAM_DEFAULTS, ScriptedModel, ScriptedSandbox
from tests.scale.jobs import HANG_GUARD_S, queued_by_a_receiver, serving


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch):
    monkeypatch.setattr("bot.runs.service.THREAD_RETRIES_S", (0.01, 0.01))


async def test_a_job_whose_thread_is_gone_ends_and_frees_its_slot(db_url):
    thread = RecordingThread()
    await queued_by_a_receiver(db_url, thread, [("gone0001", "T-deleted"), ("next0002", "T-live")])
    config = serving(db_url, limits=LimitsConfig(max_concurrent_runs=1, max_runs_per_user=1))
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


async def test_a_job_whose_thread_the_chat_could_not_open_for_a_moment_still_runs(db_url):
    """A 429 or a 503 from the chat's API while the job is claimed is no reason to drop the request."""
    thread = RecordingThread()
    await queued_by_a_receiver(db_url, thread, [("blip0001", "T-live")])
    config = serving(db_url)
    store = await PostgresStore.open(db_url, masked_url(db_url))
    service = Service(config, store, ScriptedModel(fallback=TEAM_DEFAULTS), ScriptedSandbox())
    refusals = [ConnectionError("503 Service Unavailable")] * 2
    try:
        async with taking_jobs(service, store, config):
            async def open_thread(key: str) -> RecordingThread:
                if refusals:
                    raise refusals.pop()
                return thread
            await service.online(platform(name="chat"), open_thread)

            async def ended() -> list:
                while True:
                    runs = await store.runs(5)
                    if runs and all(r.status != RunStatus.RUNNING for r in runs):
                        return runs
                    await asyncio.sleep(0.05)
            (run,) = await asyncio.wait_for(ended(), HANG_GUARD_S)
    finally:
        await store.close()
    assert run.status == RunStatus.PASSED, run.reason
