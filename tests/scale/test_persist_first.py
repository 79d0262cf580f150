"""Persist, then acknowledge, with real ``serve`` processes on PostgreSQL: an event the database cannot keep is not
acknowledged (Slack sends it again, and then it runs); an event a replica kept and died handling is handled by
another, once, even when its run had been made already."""

from __future__ import annotations

import asyncio
import json
import time

import aiohttp
import psycopg
import pytest

from tests.fakes import team_script as s
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.replicas import Replica, finals, replica
from tests.fakes.slack_api import BOT_USER, TEAM, FakeSlack, event_callback, message_event, signed_headers


@pytest.fixture
async def slack():
    async with FakeSlack() as fake:
        yield fake


@pytest.fixture
async def model():
    async with FakeOpenAI() as server:
        server.responder = lambda recorded: Reply(s.TEAM_DEFAULTS[recorded.agent])
        yield server


@pytest.fixture
async def bot(tmp_path, db_url, slack, model):
    running = replica(tmp_path, "only", db_url, slack, model.base_url, heartbeat_s=0.3, lost_after_s=1.0)
    running.start()
    await running.ready()
    yield running
    running.stop()


async def until(predicate, within=30.0):
    async with asyncio.timeout(within):
        while not (value := predicate()):
            await asyncio.sleep(0.05)
        return value


async def post(replica: Replica, body: str) -> int:
    async with aiohttp.ClientSession() as session, session.post(replica.events_url, data=body,
                                                                headers=signed_headers(body)) as response:
        return response.status


async def test_an_event_the_database_cannot_keep_is_not_acknowledged_and_runs_when_sent_again(bot, slack,
                                                                                            postgres_cluster):
    message = slack.say("C1", "UANN", f"<@{BOT_USER}> find all intf keys")
    body = json.dumps(event_callback(message_event(message), "EvKEPT1"))
    postgres_cluster.stop()
    try:
        assert await post(bot, body) == 503  # not acknowledged: Slack will send it again
    finally:
        postgres_cluster.start()
    await asyncio.sleep(1.0)  # the pool's connections are checked and made again
    assert await post(bot, body) == 200  # Slack's retry
    await until(lambda: finals(slack, "C1", message.ts))
    assert len(finals(slack, "C1", message.ts)) == 1


async def test_an_event_a_dead_replica_kept_is_handled_by_another_once(bot, slack, db_url):
    fresh = slack.say("C1", "UANN", f"<@{BOT_USER}> find all intf keys")
    taken = slack.say("C2", "UBOB", f"<@{BOT_USER}> find all intf keys")
    async with await psycopg.AsyncConnection.connect(db_url) as db:
        for message, event_id in ((fresh, "EvDEAD1"), (taken, "EvDEAD2")):
            kept = {"event": message_event(message), "bot_user_id": BOT_USER, "team_id": TEAM}
            await db.execute("INSERT INTO inbox (key, platform, payload, received_at, taken_at) VALUES"
                             " (%s, 'slack', %s, %s, %s)", (f"slack:{event_id}", json.dumps(kept), time.time() - 60,
                                                             time.time() - 60))
        # the second one's replica died after making its run (that run is another replica's business now)
        cursor = await db.execute("INSERT INTO conversations (platform, thread_key, created_at) VALUES ('slack', %s, 0)"
                                  " RETURNING id", (f"C2:{taken.ts}",))
        [conversation] = await cursor.fetchone()
        await db.execute("INSERT INTO runs (id, conversation_id, task, user_id, status, created_at, source) VALUES"
                         " ('made0001', %s, 'find all intf keys', 'UBOB', 'passed', 0, %s)",
                         (conversation, f"slack:C2:{taken.ts}"))
        await db.commit()
    await until(lambda: finals(slack, "C1", fresh.ts))
    await asyncio.sleep(2.0)  # a second handling would show now
    assert len(finals(slack, "C1", fresh.ts)) == 1
    assert slack.thread("C2", taken.ts) == []  # its run was made already: nothing started twice
    async with await psycopg.AsyncConnection.connect(db_url) as db:
        cursor = await db.execute("SELECT COUNT(*) FROM inbox WHERE done_at IS NULL")
        assert (await cursor.fetchone())[0] == 0
