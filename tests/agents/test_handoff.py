"""The hand-off from a coroutine that emits events to the async iterator consumers read."""

import asyncio

import pytest

from agents.events import Notice
from agents.handoff import events_of
from agents.manager import Manager
from agents.run_request import RunRequest
from agents.types import RunStatus
from tests.fakes import team_script as s
from tests.fakes.publishers import RecordingPublisher
from tests.fakes.team_script import ScriptedModel, ScriptedSandbox


async def test_events_arrive_in_order_and_the_work_waits_for_the_consumer():
    progress = []

    async def work(emit):
        for n in range(3):
            progress.append(f"emit {n}")
            await emit(Notice("r", str(n)))
        progress.append("done")

    async for event in events_of(work):
        progress.append(f"took {event.text}")
    assert progress == ["emit 0", "took 0", "emit 1", "took 1", "emit 2", "took 2", "done"]


async def test_an_error_in_the_work_reaches_the_consumer_after_its_events():
    async def work(emit):
        await emit(Notice("r", "first"))
        raise ValueError("broken")

    seen = []
    with pytest.raises(ValueError, match="broken"):
        async for event in events_of(work):
            seen.append(event.text)
    assert seen == ["first"]


async def test_closing_the_iterator_cancels_the_work():
    cleaned = asyncio.Event()

    async def work(emit):
        try:
            await emit(Notice("r", "one"))
            await asyncio.sleep(3600)
        finally:
            cleaned.set()

    events = events_of(work)
    assert (await anext(events)).text == "one"
    await events.aclose()
    assert cleaned.is_set()


async def test_cancelling_the_consumer_cancels_the_work():
    cleaned = asyncio.Event()
    started = asyncio.Event()

    async def work(emit):
        try:
            started.set()
            await asyncio.sleep(3600)
        finally:
            cleaned.set()

    async def consume():
        async for _ in events_of(work):
            pass

    task = asyncio.create_task(consume())
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cleaned.is_set()


async def test_one_manager_serves_two_runs_at_once():
    manager = Manager(ScriptedModel({**s.happy_path(), "planner": [s.PLAN, s.PLAN], "programmer": [s.CODE, s.CODE],
                                     "optimizer": [s.APPROVE] * 2, "tester": [s.TESTS] * 2, "checkin": [s.README] * 2},
                                    delay=0.01),
                      ScriptedSandbox(), RecordingPublisher())

    async def run(run_id):
        return [e async for e in manager.run(RunRequest(task="t", run_id=run_id, conversation_key=f"k:{run_id}"))]

    first, second = await asyncio.gather(run("a"), run("b"))
    assert {e.run_id for e in first} == {"a"} and {e.run_id for e in second} == {"b"}
    assert first[-1].status is RunStatus.PASSED and second[-1].status is RunStatus.PASSED
