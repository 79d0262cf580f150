"""Real ``serve`` processes on one PostgreSQL, against the loopback Slack (HTTP mode) and the scripted model: a
replica SIGKILLed mid-run has the run taken over by another, which goes on from what was saved and finishes it
once, in the same status message, with one final summary in the thread."""

from __future__ import annotations

import asyncio

import aiohttp
import psycopg
import pytest

from tests.fakes import team_script as s
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.replicas import Replica, finals, mention, replica
from tests.fakes.slack_api import FakeSlack


@pytest.fixture
async def slack():
    async with FakeSlack() as fake:
        yield fake


@pytest.fixture
async def slow_model():
    async with FakeOpenAI(pace=(0.4, 10_000.0)) as server:  # every call takes 0.4 s: a kill lands mid-run
        server.responder = lambda recorded: Reply(s.TEAM_DEFAULTS[recorded.agent])
        yield server


@pytest.fixture
def started(tmp_path):
    running: list[Replica] = []
    yield running
    for each in running:
        each.stop()


async def until(predicate, within=60.0):
    async with asyncio.timeout(within):
        while not (value := predicate()):
            await asyncio.sleep(0.05)
        return value


async def test_a_replica_killed_mid_run_is_taken_over_and_the_run_finishes_once(tmp_path, db_url, slack, slow_model,
                                                                                started):
    first = replica(tmp_path, "first", db_url, slack, slow_model.base_url, heartbeat_s=0.3, lost_after_s=1.5)
    started.append(first)
    first.start()
    await first.ready()
    async with aiohttp.ClientSession() as session:
        thread = await mention(session, slack, first, "find all intf keys")
    await until(lambda: len(slow_model.requests) >= 2)  # planned, coding: mid-run
    first.kill()
    calls_at_kill = len(slow_model.requests)
    second = replica(tmp_path, "second", db_url, slack, slow_model.base_url, heartbeat_s=0.3, lost_after_s=1.5)
    started.append(second)
    second.start()
    await second.ready()
    await until(lambda: finals(slack, "C1", thread))
    await asyncio.sleep(1.0)  # anything late would land now

    [run_id] = await rows(db_url, "SELECT id FROM runs")
    assert len(finals(slack, "C1", thread)) == 1
    status = [m for m in slack.thread("C1", thread) if f"run `{run_id}`" in m.text and "Files of run" not in m.text]
    assert len(status) == 1 and status[0].text.startswith("✅ *Passed*")  # the first status message, edited
    assert await rows(db_url, "SELECT status FROM runs") == ["passed"]
    assert await rows(db_url, "SELECT epoch::text || ':' || (finished_at IS NOT NULL)::text FROM run_claims"
                              " ORDER BY epoch") == ["1:false", "2:true"]  # claimed twice, finished once
    assert len(slow_model.requests) > calls_at_kill  # the team went on after the kill
    assert "taken over from a lost replica" in second.log.read_text()


async def rows(url, sql):
    async with await psycopg.AsyncConnection.connect(url) as db:
        cursor = await db.execute(sql)
        return [row[0] for row in await cursor.fetchall()]
