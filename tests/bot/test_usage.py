"""Usage and cost are computed once, in the core, and every final event carries the run's real totals."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from agents.events import Notice, RunFinished, TextDelta, TurnFinished
from agents.types import RunStatus, Usage
from bot.checkin import FolderPublisher
from bot.config.sections import Price
from bot.model.client import OpenAIChatModel
from bot.runs.service import ChatRequest, Service
from bot.runs.usage import RunUsage, priced
from tests.conftest import with_changes
from tests.fakes import team_script as s
from tests.fakes.openai_server import Reply, error
from tests.fakes.team_script import ScriptedSandbox

PRICES = {"gpt-4o-mini": Price(input_per_million=1.0, output_per_million=2.0)}


class Sink:
    def __init__(self):
        self.events = []

    async def __call__(self, event):
        self.events.append(event)

    def turns(self):
        return [e for e in self.events if isinstance(e, TurnFinished)]

    def final(self):
        [final] = [e for e in self.events if isinstance(e, RunFinished)]
        return final


def test_a_price_gives_the_cost_and_no_price_gives_none():
    assert priced(Usage(1_000_000, 500_000), Price(2.5, 10.0)).cost_usd == pytest.approx(7.5)
    assert priced(Usage(1000, 500, cost_usd=9.0), None).cost_usd == 0.0


def test_turns_are_priced_by_their_model_and_the_final_event_gets_the_totals():
    usage = RunUsage({"big": Price(10.0, 20.0), "small": Price(1.0, 2.0)})
    first = usage(TurnFinished("r", agent="planner", round=0, text="", usage=Usage(1000, 100), model="big"))
    second = usage(TurnFinished("r", agent="coder", round=1, text="", usage=Usage(2000, 200), model="small"))
    unknown = usage(TurnFinished("r", agent="tester", round=1, text="", usage=Usage(5, 5), model="unpriced"))
    final = usage(RunFinished("r", status=RunStatus.STOPPED, reason="stopped on request"))
    assert first.usage.cost_usd == pytest.approx(0.012) and second.usage.cost_usd == pytest.approx(0.0024)
    assert unknown.usage.cost_usd == 0.0
    assert final.usage == Usage(3005, 305, pytest.approx(0.0144))
    assert usage(Notice("r", "hello")) == Notice("r", "hello")  # other events pass unchanged


def sized(text: str) -> Reply:
    return Reply(text, usage=(1000, 500))  # every turn: 1,000 in, 500 out, $0.002 at PRICES


def priced_config(config, **changes):
    return with_changes(dataclasses.replace(config, prices=PRICES), **changes)


async def run_to_the_end(config, secrets, store, tmp_path, stop_when=None):
    service, sink = Service(config, store, OpenAIChatModel(config, secrets), ScriptedSandbox()), Sink()
    handle = await service.submit(ChatRequest("terminal", "t1", "ann", "find all intf keys"), sink,
                                  FolderPublisher(tmp_path / "out"))
    if stop_when is not None:
        while not stop_when(sink):
            await asyncio.sleep(0.01)
        service.cancel(handle.run_id)
    try:
        await handle.wait()
    except asyncio.CancelledError:
        pass
    return sink, await store.run(handle.run_id)


def script(server, **overrides):
    for role, replies in {**s.happy_path(), **overrides}.items():
        server.script(role, *[r if isinstance(r, Reply) else sized(r) for r in replies])


@pytest.mark.parametrize("ending", ["passed", "failed", "stopped", "error"])
async def test_every_final_event_and_the_store_carry_the_runs_real_totals(
        model_server, config, secrets, store, tmp_path, ending):
    stop_when = None
    if ending == "passed":
        script(model_server)
        config = priced_config(config)
    elif ending == "failed":  # the round budget runs out with failing tests
        script(model_server, programmer=[s.BUGGY_CODE])
        config = priced_config(config, budget={"max_rounds": 1})
    elif ending == "stopped":  # stopped while the Programmer is writing: the Planner's turn counts, and the cut one
        script(model_server, programmer=[Reply("Writing...", chunk=2, stall_after=4)])
        config = priced_config(config)
        stop_when = lambda sink: any(isinstance(e, TextDelta) and e.agent == "programmer" for e in sink.events)  # noqa: E731
    else:  # the model fails for good after the Planner
        script(model_server, programmer=[error(500)] * 3)
        config = priced_config(config)
    sink, record = await run_to_the_end(config, secrets, store, tmp_path, stop_when)

    final, turns = sink.final(), sink.turns()
    whole = [t for t in turns if not t.usage.estimated]  # what the server counted; the others a stop cut short
    assert final.status == ending and whole
    assert all(t.usage == Usage(1000, 500, pytest.approx(0.002)) for t in whole)
    total = sum((t.usage for t in turns), Usage())
    assert final.usage == Usage(total.prompt_tokens, total.completion_tokens, pytest.approx(total.cost_usd),
                                total.estimated)
    assert record.summary.usage == Usage(final.usage.prompt_tokens, final.usage.completion_tokens,
                                         estimated=final.usage.estimated)
    assert record.summary.cost_usd == pytest.approx(final.usage.cost_usd)
    if ending in ("stopped", "error"):  # the Tester, writing beside the Programmer, may have finished too
        assert whole[0].agent == "planner" and {t.agent for t in whole} <= {"planner", "tester"}
    cut = {t.agent: t for t in turns if t.usage.estimated}
    if ending == "stopped":  # its prompt was sent and its reply begun: both count, estimated from their size
        programmer = cut["programmer"]
        assert programmer.text == "Writing..."[:len(programmer.text)] and programmer.usage.prompt_tokens > 100
        assert programmer.usage.cost_usd > 0 and final.usage.estimated
    else:  # an endpoint that failed before any reply cost nothing
        assert "programmer" not in cut


async def test_a_store_that_cannot_keep_the_cut_reply_still_gets_the_runs_end():
    """Stopped mid-reply with the disk full: the cut turn cannot be recorded, and the run still ends, as an error
    every sink sees, rather than with the store's error in place of the stop."""
    from agents.events import TurnStarted
    from bot.runs.runner import drive
    from bot.store.errors import StoreError

    seen, replying = [], asyncio.Event()

    async def events():
        yield TurnStarted("r", agent="planner", round=0, model="gpt-4o-mini", prompt_tokens=300)
        yield TextDelta("r", agent="planner", text="Thinking")
        replying.set()
        await asyncio.Event().wait()  # the model goes on writing until the stop

    async def full_store(event):
        if isinstance(event, TurnFinished | RunFinished):
            raise StoreError("could not save the run to db.sqlite3: the disk is full")

    async def renderer(event):
        seen.append(event)

    run = asyncio.create_task(drive("r", events(), [full_store, renderer], RunUsage(PRICES)))
    await replying.wait()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    final = seen[-1]
    assert isinstance(final, RunFinished) and final.status == RunStatus.ERROR and "disk is full" in final.reason
    assert final.usage.prompt_tokens == 300 and final.usage.estimated  # the cut reply still counts
