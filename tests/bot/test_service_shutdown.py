"""``Service.shutdown``: no new work, every run (running or queued) ends stopped with the reason, each
thread's last line says a reply continues it."""

from __future__ import annotations

import asyncio

import pytest

from agents.errors import UserInputError
from agents.types import RunStatus
from bot.chat.words import CONTINUE_HINT, final_text
from bot.process.lifecycle import SHUTDOWN_REASON
from bot.runs.runner import STOPPED_REASON
from bot.runs.service import ChatRequest, Service
from tests.conftest import with_changes
from tests.fakes.team_script import ScriptedModel, ScriptedSandbox


class Sink:
    def __init__(self) -> None:
        self.events: list = []

    async def __call__(self, event) -> None:
        self.events.append(event)


class Folder:
    async def publish(self, publication):
        raise AssertionError("nothing is published in these tests")


async def test_shutdown_stops_running_and_queued_runs_with_its_reason(config, store):
    config = with_changes(config, limits={"max_concurrent_runs": 1})
    service = Service(config, store, ScriptedModel(delay=30), ScriptedSandbox())
    sinks = [Sink(), Sink()]
    handles = [await service.submit(ChatRequest("slack", f"C1:{i}", "UANN", "find all intf keys"), sink, Folder())
               for i, sink in enumerate(sinks)]
    await asyncio.sleep(0.05)  # the first runs (its Planner waits on the model), the second waits its turn

    await service.shutdown(SHUTDOWN_REASON, grace_s=10)
    for handle, sink in zip(handles, sinks, strict=True):
        final = sink.events[-1]
        assert (final.status, final.reason) == (RunStatus.STOPPED, SHUTDOWN_REASON)
        assert final_text(final).startswith(f"⏹️ Stopped: the bot was shut down. {CONTINUE_HINT}")
        assert handle.task.done()
        assert (await store.run(handle.run_id)).summary.status == RunStatus.STOPPED

    with pytest.raises(UserInputError, match="restarting"):
        await service.submit(ChatRequest("slack", "C1:9", "UANN", "one more"), Sink(), Folder())


async def test_a_stop_pressed_by_a_person_says_nothing_about_replying(config, store):
    service = Service(config, store, ScriptedModel(delay=30), ScriptedSandbox())
    sink = Sink()
    handle = await service.submit(ChatRequest("slack", "C1:1", "UANN", "find all intf keys"), sink, Folder())
    await asyncio.sleep(0.05)
    assert service.cancel(handle.run_id)
    with pytest.raises(asyncio.CancelledError):
        await handle.wait()
    final = sink.events[-1]
    assert final.reason == STOPPED_REASON and CONTINUE_HINT not in final_text(final)
