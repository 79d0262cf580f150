"""Real ``serve`` processes on one PostgreSQL, against the loopback Slack (HTTP mode) and the scripted model: a
replica SIGKILLed mid-run has the run taken over by another, which goes on from what was saved and finishes it
once, in the same status message, with one final summary in the thread; a Stop pressed on one replica stops the
run on the other. Each process names itself a host of its own (``tests.fakes.replica``), so a dead one is noticed
by its stopped heartbeat, as across machines."""

from __future__ import annotations

import asyncio
import json
from urllib.parse import quote

import aiohttp
import psycopg
import pytest

from adapters.slack.thread import STOP_ACTION
from tests.fakes import team_script as s
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.replicas import Replica, finals, mention, replica
from tests.fakes.slack_api import FakeSlack, block_action, signed_headers
from tests.slack.test_stop import stop_button


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


async def test_a_stop_pressed_on_another_replica_stops_the_run_where_it_runs(tmp_path, db_url, slack, slow_model,
                                                                             started):
    both = [replica(tmp_path, name, db_url, slack, slow_model.base_url, heartbeat_s=0.3, lost_after_s=30.0)
            for name in ("first", "second")]
    started.extend(both)
    for each in both:
        each.start()
    await asyncio.gather(*(each.ready() for each in both))
    async with aiohttp.ClientSession() as session:
        thread = await mention(session, slack, both[0], "find all intf keys")
        status = await until(lambda: next((m for m in slack.thread("C1", thread) if stop_button(m)), None))
        await until(lambda: len(slow_model.requests) >= 1)  # under way, on whichever replica claimed it
        owner = await owner_of(db_url)
        elsewhere = next(each for each in both if not owner.startswith(f"{each.name}.replicas.test:"))
        form = "payload=" + quote(json.dumps(block_action("UANN", status, STOP_ACTION, stop_button(status) or "")))
        headers = {**signed_headers(form), "Content-Type": "application/x-www-form-urlencoded"}
        async with session.post(elsewhere.events_url, data=form, headers=headers) as response:  # the click
            assert response.status == 200
        await until(lambda: finals(slack, "C1", thread))
    [final] = [m for m in slack.thread("C1", thread) if m.ts in finals(slack, "C1", thread)]
    assert final.text.startswith("⏹️ Stopped: stopped on request.")
    assert await rows(db_url, "SELECT status || ' by ' || owner FROM runs") == [f"stopped by {owner}"]  # where it ran


async def owner_of(url):
    [owner] = await rows(url, "SELECT owner FROM runs")
    return owner


async def test_a_replica_stopped_hands_its_run_to_another_which_finishes_it(tmp_path, db_url, slack, started):
    async with FakeOpenAI(pace=(1.5, 10_000.0)) as slower:  # a run of several seconds: the stop lands mid-run
        # The first reply waits until the second replica is up: on a loaded machine its start could take longer
        # than the first replica's whole run.
        slower.responder = lambda recorded: Reply(s.TEAM_DEFAULTS[recorded.agent],
                                                  pause_after=None if slower.resume.is_set() else 1)
        first, second = (replica(tmp_path, name, db_url, slack, slower.base_url, heartbeat_s=0.3, lost_after_s=600.0)
                         for name in ("first", "second"))
        started.extend([first, second])
        first.start()
        await first.ready()
        async with aiohttp.ClientSession() as session:
            thread = await mention(session, slack, first, "find all intf keys")
        await until(lambda: len(slower.requests) >= 1)  # claimed by the only replica there is
        second.start()
        await second.ready()
        assert not finals(slack, "C1", thread)
        slower.resume.set()
        first.stop()  # SIGTERM, as a rolling update sends: nobody would take the run for dead for ten minutes
        await until(lambda: finals(slack, "C1", thread))
    [final] = [m for m in slack.thread("C1", thread) if m.ts in finals(slack, "C1", thread)]
    assert final.text.startswith("✅ Passed:")  # finished by the second, not "stopped: the bot was shut down"
    owner = await owner_of(db_url)
    assert owner.startswith("second.replicas.test:")
    assert await rows(db_url, "SELECT owner FROM run_claims WHERE finished_at IS NOT NULL") == [owner]
