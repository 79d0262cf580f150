"""Nothing is lost to a reload, a dropped connection or a restart: a page's stream starts with everything so far,
and a conversation drawn again from the store after a restart looks as it did live, and can be continued."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from typing import Any

import aiohttp
import pytest
from playwright.async_api import expect

from adapters.web.conversation import MAX_PENDING_OPS, Conversation, Watcher
from tests.conftest import with_changes
from tests.fakes import team_script as s
from tests.fakes.openai_server import Reply
from tests.web.conftest import script_team

FINAL = ("✅ Passed:", "❌ Failed:", "⏹️ Stopped:", "⚠️ Error:")


async def snapshot(url: str, key: str) -> dict[str, Any]:
    """The first event of a page's stream: what a page that (re)connects is shown."""
    async with aiohttp.ClientSession() as session, session.get(f"{url}/api/stream?c={key}") as response:
        assert response.status == 200 and response.content_type == "text/event-stream"
        async for line in response.content:
            if line.startswith(b"data: "):
                return json.loads(line[6:])  # type: ignore[no-any-return]
    raise AssertionError("the stream ended without a snapshot")


async def finished_runs(url: str, key: str, count: int = 1) -> dict[str, Any]:
    for _ in range(500):
        shown = await snapshot(url, key)
        texts = [m["text"] for m in shown["messages"]]
        if sum(t.startswith(FINAL) for t in texts) >= count and shown["panel"].get("status") != "running":
            return shown
        await asyncio.sleep(0.05)
    raise AssertionError(f"no {count} finished run(s) in {key}")


def shown(messages: list[dict[str, Any]]) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(m["author"], m["text"], tuple(m["files"])) for m in messages]


@pytest.mark.parametrize("github", [False, True], ids=["files attached", "gist"])
async def test_after_a_restart_a_conversation_is_drawn_again_as_it_was_and_continues(
        start_web, web_config, model_server, secrets, github):
    config, chosen = web_config, secrets
    if github:
        from tests.fakes.github_server import FakeGitHub

        fake = await FakeGitHub().start()
        config = with_changes(config, checkin={"github_api_url": fake.url, "write_interval_s": 0.0})
        chosen = dataclasses.replace(secrets, github_token=fake.token)
    script_team(model_server, programmer=[s.BUGGY_CODE, s.CODE], optimizer=[s.APPROVE, s.APPROVE],
                manager=[s.FIX_CODE])
    first = await start_web(config, secrets_=chosen)
    _, started, _ = await first.post("/api/conversations", {"task": "find all intf keys", "files": []})
    key = started["conversation"]
    live = await finished_runs(first.url, key)
    first.task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await first.task

    second = await start_web(with_changes(config, web={"port": config.web.port}), secrets_=chosen)
    again = await snapshot(second.url, key)
    assert shown(again["messages"]) == shown(live["messages"])
    assert again["panel"] == live["panel"]
    assert [c["key"] for c in again["conversations"]] == [key]
    rounds = [(r["round"], r["ok"]) for r in again["panel"]["runs"][0]["rounds"]]
    assert rounds == [(1, False), (2, True)]
    files = {f["name"]: (f["test"], f["yours"]) for f in again["panel"]["files"]}
    assert files == {"intf.py": (False, False), "test_intf.py": (True, False)}

    script_team(model_server)
    status, _, _ = await second.post(f"/api/conversations/{key}/tasks", {"task": "now make it handle tuples"})
    assert status == 200
    after = await finished_runs(second.url, key, count=2)
    assert shown(after["messages"])[: len(live["messages"])] == shown(live["messages"])
    assert [m["text"] for m in after["messages"] if m["author"] == "you"] == ["find all intf keys",
                                                                               "now make it handle tuples"]
    assert "found.extend(find_intf(value))" in model_server.calls("programmer")[-1].body["messages"][-1]["content"]
    if github:
        await fake.close()


async def test_a_page_that_connects_mid_run_is_shown_the_turn_being_written(start_web, web_config, model_server):
    script_team(model_server, programmer=[Reply(s.CODE, chunk=12, pause_after=60)])
    bot = await start_web(web_config)
    _, started, _ = await bot.post("/api/conversations", {"task": "find all intf keys"})
    key = started["conversation"]
    for _ in range(500):
        now = await snapshot(bot.url, key)
        writing = [m for m in now["messages"] if m["text"].startswith("**Programmer**")]
        if writing and "Here is the implementation." in writing[0]["text"]:
            break
        await asyncio.sleep(0.05)
    assert writing[0]["text"].endswith("_writing…_")
    assert any(m["stop"] == started["run"] for m in now["messages"])  # the Stop control, while it can be stopped
    assert now["messages"][0] == {**now["messages"][0], "author": "you", "text": "find all intf keys"}
    model_server.resume.set()
    done = await finished_runs(bot.url, key)
    assert not any(m["stop"] for m in done["messages"])


async def test_a_queued_run_shows_its_place_to_a_page_opened_later(start_web, web_config, model_server):
    config = with_changes(web_config, limits={"max_concurrent_runs": 1})
    script_team(model_server, planner=[Reply("Thinking...\n", chunk=4, pause_after=4), s.PLAN])
    bot = await start_web(config)
    await bot.post("/api/conversations", {"task": "the first task"})
    _, second, _ = await bot.post("/api/conversations", {"task": "the second task"})
    for _ in range(200):
        page = await snapshot(bot.url, second["conversation"])
        if any("Queued" in m["text"] for m in page["messages"]):
            break
        await asyncio.sleep(0.05)
    assert any(m["text"] == "ℹ️ Queued: next in line, waiting for a free slot." for m in page["messages"])
    model_server.resume.set()


def test_a_turn_being_written_is_sent_as_what_changed_at_its_end():
    conversation = Conversation("k", "ann")
    watcher = Watcher("ann")
    conversation.watchers.add(watcher)

    async def scenario() -> list[dict[str, Any]]:
        message_id = await conversation.post("**Programmer**\n_writing…_")
        await conversation.edit(message_id, "**Programmer**\nHere is\n_writing…_")
        await conversation.edit(message_id, "**Programmer**\nHere is the code\n_writing…_", stop="")
        await conversation.edit(message_id, "**Tester**\nrewritten", stop="r1")
        return [watcher.queue.get_nowait() for _ in range(watcher.queue.qsize())]  # type: ignore[misc]

    ops = asyncio.run(scenario())
    edits = [op for op in ops if op and op["type"] == "edit"]
    assert [(e["keep"], e["text"]) for e in edits] == [
        (len("**Programmer**\n"), "Here is\n_writing…_"),
        (len("**Programmer**\nHere is"), " the code\n_writing…_"),
        (2, "Tester**\nrewritten"),
    ]
    assert edits[-1]["stop"] == "r1"
    text = ""
    for op in ops:  # a page applying the ops ends with the message's text
        if op and op["type"] == "message":
            text = op["message"]["text"]
        elif op and op["type"] == "edit":
            text = text[: op["keep"]] + op["text"]
    assert text == "**Tester**\nrewritten"


def test_a_page_too_slow_to_keep_up_is_dropped_and_starts_again_from_a_snapshot():
    watcher = Watcher("ann")
    for n in range(MAX_PENDING_OPS + 5):
        watcher.send({"type": "edit", "n": n})
    assert watcher.closed and watcher.queue.qsize() == 1 and watcher.queue.get_nowait() is None


@pytest.mark.browser
async def test_earlier_conversations_are_listed_reopened_and_continued_in_the_page(
        start_web, web_config, model_server, open_page):
    script_team(model_server)
    script_team(model_server)
    bot = await start_web(web_config)
    page = await open_page(bot.url)
    for task in ("write a slugify function", "write an intf finder"):
        await page.click("#new-conversation")
        await page.fill("#task", task)
        await page.click("#send")
        await expect(page.locator("#thread article.message.bot", has_text="Passed:")).to_be_visible(timeout=30_000)
    listed = page.locator("#conversations li")
    await expect(listed).to_have_count(2)
    await expect(listed.first).to_contain_text("write an intf finder")  # the latest first

    await listed.nth(1).click()
    await expect(page.locator("#thread article.message.you")).to_have_text(["write a slugify function"])
    await expect(page.locator("#conversations a.current")).to_contain_text("write a slugify function")
    script_team(model_server)
    await page.fill("#task", "now make it async")
    await page.click("#send")
    await expect(page.locator("#thread article.message.bot", has_text="Passed:")).to_have_count(2, timeout=30_000)
    await expect(listed.first).to_contain_text("write a slugify function")  # active again: first in the list
    await page.go_back()  # the browser's Back returns to the conversation shown before
    await expect(page.locator("#thread article.message.you")).to_have_text(["write an intf finder"])


async def test_a_secret_in_a_task_is_masked_on_the_page_live_and_when_drawn_again(
        start_web, web_config, model_server, secrets):
    script_team(model_server)
    bot = await start_web(web_config)
    key = secrets.openai_api_key
    _, started, _ = await bot.post("/api/conversations", {"task": f"use the key {key} to call the API",
                                                          "files": []})
    live = await finished_runs(bot.url, started["conversation"])
    bot.task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await bot.task
    again = await snapshot((await start_web(web_config)).url, started["conversation"])
    for shown_ in (live, again):
        assert shown_["messages"][0]["text"] == "use the key [redacted] to call the API"
        assert key not in json.dumps(shown_)


@pytest.mark.browser
async def test_a_page_opened_on_a_queued_run_shows_its_place_in_the_queue_and_its_stop(
        start_web, web_config, model_server, open_page):
    config = with_changes(web_config, limits={"max_concurrent_runs": 1})
    script_team(model_server, planner=[Reply("Thinking...\n", chunk=4, pause_after=4), s.PLAN, s.PLAN])
    bot = await start_web(config)
    await bot.post("/api/conversations", {"task": "the first task"})  # runs; its model is paused
    _, second, _ = await bot.post("/api/conversations", {"task": "the second task"})
    _, third, _ = await bot.post("/api/conversations", {"task": "the third task"})
    for conversation, task, place in [(second, "the second task", "next in line, waiting for a free slot."),
                                      (third, "the third task", "1 run is ahead of this one.")]:
        page = await open_page(f"{bot.url}/c/{conversation['conversation']}")
        status = page.locator("#thread article.message.bot").first
        await expect(status).to_contain_text(f"Queued: {place}")
        await expect(status.locator("button.stop")).to_be_visible()  # a queued run can be stopped too
        await expect(page.locator("#thread article.message.you")).to_contain_text(task)
    model_server.resume.set()


def test_an_edit_keeps_its_prefix_as_the_page_counts_it_with_emoji_beyond_the_bmp():
    # The page's JavaScript counts UTF-16 units: 🛠️ and 😀 are two each, so the prefix kept must count so too.
    conversation = Conversation("k", "ann")
    watcher = Watcher("ann")
    conversation.watchers.add(watcher)

    async def scenario() -> list[dict[str, Any]]:
        message_id = await conversation.post("🛠️ **Working** 😀\n⏳ Plan")
        await conversation.edit(message_id, "🛠️ **Working** 😀\n⏳ Plan — waiting for the model (1 s)")
        return [watcher.queue.get_nowait() for _ in range(watcher.queue.qsize())]  # type: ignore[misc]

    ops = asyncio.run(scenario())
    units = b""  # the text as UTF-16, the way the page holds it
    for op in ops:
        if op and op["type"] == "message":
            units = op["message"]["text"].encode("utf-16-le")
        elif op and op["type"] == "edit":
            units = units[: 2 * op["keep"]] + op["text"].encode("utf-16-le")
    assert units.decode("utf-16-le") == "🛠️ **Working** 😀\n⏳ Plan — waiting for the model (1 s)"
