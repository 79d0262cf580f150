"""Steps that work at once reach the sink one turn at a time, in the order they happened otherwise."""

import asyncio

import pytest

from agents.events import Notice, TestReported, TextDelta, TurnFinished, TurnStarted, WorkSaved
from agents.lanes import at_once, lane_or
from agents.types import TestReport, TestStatus


class Sink:
    def __init__(self):
        self.events = []

    async def __call__(self, event):
        self.events.append(event)
        await asyncio.sleep(0)  # a consumer that takes its time, as a renderer does


def told(sink):
    """Each event as (who, what): who wrote it, and its kind."""
    out = []
    for e in sink.events:
        who = getattr(e, "agent", None) or (e.text if isinstance(e, Notice) else "tests")
        out.append((who, type(e).__name__))
    return out


def blocks_are_whole(events):
    """No event a thread draws comes between a turn's start and its end unless it is that turn's (the files a
    step saved pass at once: no renderer draws them)."""
    open_agent = None
    for event in events:
        if isinstance(event, WorkSaved):
            continue
        agent = getattr(event, "agent", None)
        if open_agent is not None:
            if agent != open_agent:
                return False
            if isinstance(event, TurnFinished):
                open_agent = None
        elif isinstance(event, TurnStarted):
            open_agent = event.agent
    return True


async def turn(sink, agent, pieces, pause=None):
    emit = lane_or(sink)
    await emit(TurnStarted("r", agent=agent, round=1))
    for piece in pieces:
        if pause is not None:
            await pause.wait()
        await emit(TextDelta("r", agent=agent, text=piece))
        await asyncio.sleep(0)
    await emit(TurnFinished("r", agent=agent, round=1, text="".join(pieces)))
    return agent


async def test_two_turns_written_at_once_reach_the_sink_one_after_the_other():
    sink = Sink()
    results = await at_once(sink, turn(sink, "programmer", list("abcdef")), turn(sink, "tester", list("uvwxyz")))
    assert results == ["programmer", "tester"]
    assert blocks_are_whole(sink.events)
    assert [e.agent for e in sink.events if isinstance(e, TurnStarted)] == ["programmer", "tester"]
    texts = {a: "".join(e.text for e in sink.events if isinstance(e, TextDelta) and e.agent == a)
             for a in ("programmer", "tester")}
    assert texts == {"programmer": "abcdef", "tester": "uvwxyz"}  # nothing lost, nothing reordered


async def test_the_turn_that_waited_goes_on_live_once_the_first_has_finished():
    sink = Sink()
    tester_may_go_on = asyncio.Event()

    async def programmer():
        await turn(sink, "programmer", ["code"])
        # The tester's start and first piece are out as soon as the programmer's turn ends, while it still writes.
        assert told(sink)[-2:] == [("tester", "TurnStarted"), ("tester", "TextDelta")]
        tester_may_go_on.set()

    async def tester():
        emit = lane_or(sink)
        await emit(TurnStarted("r", agent="tester", round=1))
        await emit(TextDelta("r", agent="tester", text="first"))
        await tester_may_go_on.wait()
        await emit(TextDelta("r", agent="tester", text="second"))
        await emit(TurnFinished("r", agent="tester", round=1, text="firstsecond"))

    await at_once(sink, programmer(), tester())
    assert blocks_are_whole(sink.events) and told(sink)[-1] == ("tester", "TurnFinished")


async def test_a_test_report_waits_for_the_review_being_written_and_the_triage_follows():
    sink = Sink()
    review_may_end = asyncio.Event()

    async def tests_then_triage():
        emit = lane_or(sink)
        await emit(TestReported("r", round=1, language="python", report=TestReport(TestStatus.FAILED, 1)))
        review_may_end.set()
        await turn(sink, "manager", ["fix", "_code"])

    await at_once(sink, turn(sink, "optimizer", ["looks", "good"], pause=review_may_end), tests_then_triage())
    assert [who for who, kind in told(sink) if kind in ("TurnStarted", "TestReported")] == [
        "optimizer", "tests", "manager"]
    assert blocks_are_whole(sink.events)


async def test_events_outside_any_turn_pass_straight_through():
    sink = Sink()

    async def notice(text):
        await lane_or(sink)(Notice("r", text))
        return text

    assert await at_once(sink, notice("one"), notice("two")) == ["one", "two"]
    assert sorted(e.text for e in sink.events) == ["one", "two"]


async def test_the_first_error_stops_the_other_step_and_is_raised_after_what_was_told():
    sink = Sink()
    never = asyncio.Event()
    stopped = []

    async def waits_forever():
        try:
            await turn(sink, "tester", ["a", "b"], pause=never)
        except asyncio.CancelledError:
            stopped.append("tester")
            raise

    async def fails():
        await turn(sink, "programmer", ["x"])
        raise RuntimeError("the budget ran out")

    with pytest.raises(RuntimeError, match="the budget ran out"):
        await at_once(sink, waits_forever(), fails())
    assert stopped == ["tester"]
    assert ("programmer", "TurnFinished") in told(sink)  # what happened before the error was told


async def test_outside_at_once_a_step_tells_the_run_sink_directly():
    sink = Sink()
    await turn(sink, "planner", ["plan"])
    assert told(sink) == [("planner", "TurnStarted"), ("planner", "TextDelta"), ("planner", "TurnFinished")]


async def test_files_a_step_saved_are_told_at_once_even_while_another_turn_is_told():
    sink = Sink()
    tester_may_end = asyncio.Event()

    async def programmer():
        await turn(sink, "programmer", ["code"])
        await lane_or(sink)(WorkSaved("r", files={}, tests={}, user_tests={}))  # the tester's turn is open now

    async def tester():
        await turn(sink, "tester", ["a", "b"], pause=tester_may_end)

    async def release():
        while not any(isinstance(e, WorkSaved) for e in sink.events):
            await asyncio.sleep(0)
        tester_may_end.set()

    await at_once(sink, programmer(), tester(), release())
    saved = next(i for i, e in enumerate(sink.events) if isinstance(e, WorkSaved))
    tester_done = next(i for i, e in enumerate(sink.events) if isinstance(e, TurnFinished) and e.agent == "tester")
    assert saved < tester_done and blocks_are_whole(sink.events)
