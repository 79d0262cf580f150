"""The web chat across replicas: a page on this process's hub follows a run drawn by a hub in another process
(``tests.fakes.web_replica``), through PostgreSQL's LISTEN/NOTIFY; what it is sent is what that process drew."""

from __future__ import annotations

import asyncio
import subprocess
import sys

from adapters.web.hub import Hub
from adapters.web.platform import platform
from bot.config.sections import WebConfig
from bot.safety.redact import Redactor, masked_url
from bot.store.postgres import PostgresStore
from tests.fakes.replicas import ROOT

KEY = "k3y-of-a-web-conversation"


async def line(process: asyncio.subprocess.Process) -> str:
    assert process.stdout is not None
    return (await asyncio.wait_for(process.stdout.readline(), 30)).decode().strip()


async def step(process: asyncio.subprocess.Process, name: str) -> None:
    assert process.stdin is not None
    process.stdin.write(f"{name}\n".encode())
    await process.stdin.drain()
    assert await line(process) == f"done {name}"


async def until(predicate, within=15.0):
    async with asyncio.timeout(within):
        while not (value := predicate()):
            await asyncio.sleep(0.02)
        return value


async def test_a_page_on_one_replica_follows_a_run_drawn_on_another(db_url):
    other = await asyncio.create_subprocess_exec(sys.executable, "-m", "tests.fakes.web_replica", db_url, KEY, cwd=ROOT,
                                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    store = await PostgresStore.open(db_url, masked_url(db_url))
    fanout = store.fanout()
    hub = Hub(store, platform(WebConfig()), Redactor(()), busy=lambda _: False, fanout=fanout)
    try:
        assert await line(other) == "ready"
        conversation = await hub.open(KEY, "ann")  # drawn from the store, then the live copy asked for
        assert conversation is not None
        await until(lambda: any(m.text == "⏳ Planner is planning" for m in conversation.messages.values()))
        watcher = hub.watch("ann", conversation)
        for name in ("edit", "post", "working", "big"):
            await step(other, name)
        drawn = []  # what the page is sent, beside the side panel this replica reads from the store itself
        while len(drawn) < 4:
            op = await asyncio.wait_for(watcher.queue.get(), 15)
            if op is not None and op["type"] != "panel":
                drawn.append(op["type"])
        assert drawn == ["edit", "message", "working", "message"]  # in the order the other process drew them
        texts = [m.text for m in conversation.messages.values()]
        assert "⏳ Planner is planning\n✅ Plan — language: python" in texts  # the edit applied to the same message
        assert "*Programmer* · round 1\nHere is the implementation." in texts
        assert any(text.startswith("*Tester*") and len(text) > 20_000 for text in texts)  # sent in parts
        assert conversation.working_text == "Programmer is writing…"
        status = next(m for m in conversation.messages.values() if m.text.startswith("⏳"))
        assert status.stop == "run1"  # its Stop control is on the page here too
    finally:
        if other.stdin is not None:
            other.stdin.write(b"\n")
        await asyncio.wait_for(other.wait(), 30)
        await hub.close()
        await fanout.close()
        await store.close()
