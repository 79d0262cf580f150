"""The web chat in a real browser (Debian's Chromium), against the scripted model server and real Docker: what
a person sees while a run streams, fails a round, passes and links its Gist; Stop; a follow-up; a reload in the
middle of a run; and model output that tries to run script in the page."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re

import pytest
from playwright.async_api import expect

from bot.sandbox import DockerSandbox
from tests.conftest import with_changes
from tests.docker_support import TEST_CONFIG, our_containers
from tests.fakes import team_script as s
from tests.fakes.github_server import FakeGitHub
from tests.fakes.openai_server import Reply
from tests.web.conftest import script_team

pytestmark = [pytest.mark.browser, pytest.mark.docker]

WAIT_MS = 90_000  # how long a page may take to show what a run does (real containers run the tests)
TASK = "Write a python function that finds all properties with a key of 'intf' in nested objects"
SLOW_TESTS = '''```python path=test_intf.py
import time

def test_takes_its_time():
    time.sleep(300)
```
'''


def bot_message(page, text: str):  # type: ignore[no-untyped-def]
    return page.locator("#thread article.message.bot", has_text=text)


def turn(page, agent: str):  # type: ignore[no-untyped-def]
    """The turns of ``agent``: messages headed with its name (the final summary names every agent too)."""
    return page.locator("#thread article.message.bot", has_text=re.compile("^" + re.escape(agent)))


async def send(page, text: str) -> None:  # type: ignore[no-untyped-def]
    await page.fill("#task", text)
    await page.click("#send")


async def test_a_run_streams_turn_by_turn_fails_a_round_then_passes_with_its_gist(
        start_web, web_config, model_server, open_page, docker_client, secrets):
    async with FakeGitHub() as github, DockerSandbox(TEST_CONFIG, client=docker_client) as sandbox:
        config = with_changes(web_config, checkin={"github_api_url": github.url, "write_interval_s": 0.0})
        script_team(model_server, programmer=[Reply(s.BUGGY_CODE, chunk=12, pause_after=60), s.CODE],
                    optimizer=[s.APPROVE, s.APPROVE], manager=[s.FIX_CODE])
        bot = await start_web(config, sandbox, dataclasses.replace(secrets, github_token=github.token))
        page = await open_page(bot.url)
        await send(page, TASK)

        # The Programmer's turn shows while it is written: its first lines, marked as being written.
        writing = turn(page, "Programmer").first
        await expect(writing).to_contain_text("Here is the implementation", timeout=WAIT_MS)
        await expect(writing).to_contain_text("writing…")
        await expect(turn(page, "Planner")).to_contain_text("walking dicts and lists")
        assert page.url.startswith(f"{bot.url}/c/")
        model_server.resume.set()

        # A failing round, shown with its output; then the fix passes.
        await expect(page.locator("#rounds li.failed")).to_contain_text("0 passed, 2 failed", timeout=WAIT_MS)
        await expect(page.locator("#rounds li.passed")).to_contain_text("2 passed, 0 failed", timeout=WAIT_MS)
        final = bot_message(page, "Passed:")
        await expect(final).to_be_visible(timeout=WAIT_MS)
        await expect(bot_message(page, "🧪").filter(has_text="2 failed").first).to_contain_text("test_nested")

        # The Gist: linked in the last message and in the panel, opening safely in a new tab.
        gist = next(iter(github.gists.values()))
        gist_url = f"{github.html_url}/{gist.id}"
        link = final.locator(f'a[href="{gist_url}"]')
        await expect(link).to_have_attribute("rel", "noopener noreferrer")
        await expect(page.locator("#result a.gist")).to_have_attribute("href", gist_url)
        assert "intf.py" in gist.files and "test_intf.py" in gist.files

        # The panel: the latest files with the tests marked, tokens, the status.
        await expect(page.locator("#files-list li", has_text="test_intf.py")).to_contain_text("test")
        await expect(page.locator("#files-list li", has_text="intf.py").first).to_be_visible()
        await expect(page.locator("#usage")).to_contain_text(" in / ")
        await expect(page.locator("#status")).to_contain_text("passed")
        await expect(page.locator("button.stop:visible")).to_have_count(0)
        # The file's latest version: the fixed code, not the first attempt.
        await page.locator("#files-list summary", has_text="intf.py").first.click()
        await expect(page.locator("#files-list li").first).to_contain_text("found.extend(find_intf(value))")
        if os.environ.get("CODEGEN_WEB_SCREENSHOT"):  # the README's picture: python -m pytest ... -k streams
            await page.locator("#files-list details").first.evaluate("d => d.open = false")
            await page.locator("#rounds li.failed summary").click()  # the failing round's output, beside
            await page.locator("#thread article.message.bot").first.scroll_into_view_if_needed()  # the status
            await page.screenshot(path=os.environ["CODEGEN_WEB_SCREENSHOT"])


async def test_stop_ends_the_run_during_its_tests_and_removes_their_container(
        start_web, web_config, model_server, open_page, docker_client):
    async with DockerSandbox(TEST_CONFIG, client=docker_client) as sandbox:
        script_team(model_server, tester=[SLOW_TESTS])
        bot = await start_web(web_config, sandbox)
        page = await open_page(bot.url)
        await send(page, TASK)
        for _ in range(1200):  # the container starts once the Tester's files reach the sandbox
            if sandbox.active and await asyncio.to_thread(our_containers, docker_client):
                break
            await asyncio.sleep(0.1)
        assert sandbox.active == 1, "the tests never started in the sandbox"

        await page.click("#stop")
        await expect(bot_message(page, "Stopped:")).to_be_visible(timeout=WAIT_MS)
        await expect(page.locator("button.stop:visible")).to_have_count(0)
        await expect(page.locator("#status")).to_contain_text("stopped")
        assert await asyncio.to_thread(our_containers, docker_client) == []


async def test_a_follow_up_continues_the_conversation_from_its_files(
        start_web, web_config, model_server, open_page, docker_client):
    async with DockerSandbox(TEST_CONFIG, client=docker_client) as sandbox:
        script_team(model_server)
        bot = await start_web(web_config, sandbox)
        page = await open_page(bot.url)
        await send(page, TASK)
        await expect(bot_message(page, "Passed:")).to_have_count(1, timeout=WAIT_MS)
        address = page.url

        script_team(model_server)
        await send(page, "now make it handle tuples too")
        await expect(bot_message(page, "Passed:")).to_have_count(2, timeout=WAIT_MS)
        assert page.url == address  # the same conversation
        await expect(page.locator("#thread article.message.you")).to_have_count(2)
        await expect(page.locator("#rounds li")).to_have_count(2)
        await expect(page.locator("#conversations li")).to_have_count(1)
        # The follow-up's turns are named, so no round shows twice in the conversation.
        await expect(turn(page, "Programmer").last).to_contain_text("Programmer · follow-up 1 · round 1")
        await expect(turn(page, "Programmer").first).not_to_contain_text("follow-up")
        # The team started from the first run's files and knew its request.
        follow_up = model_server.calls("programmer")[-1].body["messages"][-1]["content"]
        assert "found.extend(find_intf(value))" in follow_up and "now make it handle tuples too" in follow_up


async def test_a_reload_in_the_middle_of_a_run_catches_up_and_follows_it_to_the_end(
        start_web, web_config, model_server, open_page, docker_client):
    async with DockerSandbox(TEST_CONFIG, client=docker_client) as sandbox:
        script_team(model_server, programmer=[Reply(s.CODE, chunk=12, pause_after=60)])
        bot = await start_web(web_config, sandbox)
        page = await open_page(bot.url)
        await send(page, TASK)
        await expect(turn(page, "Programmer")).to_contain_text("Here is the implementation", timeout=WAIT_MS)

        await page.reload()
        await expect(turn(page, "Planner")).to_contain_text("walking dicts and lists")
        await expect(turn(page, "Programmer")).to_contain_text("writing…")
        await expect(page.locator("#thread article.message.you")).to_contain_text(TASK)
        await expect(page.locator("#stop")).to_be_visible()

        model_server.resume.set()
        await expect(bot_message(page, "Passed:")).to_be_visible(timeout=WAIT_MS)
        await expect(turn(page, "Programmer")).not_to_contain_text("writing…")
        await expect(page.locator("#rounds li.passed")).to_contain_text("2 passed")


async def test_model_output_with_script_and_event_handlers_renders_inert(
        start_web, web_config, model_server, open_page, docker_client):
    hostile = (
        "Plan:\n<script>window.__pwned = 'script'</script>\n"
        "<img src=x onerror=\"window.__pwned = 'img'\">\n"
        "<a href=\"javascript:window.__pwned = 'href'\" onclick=\"window.__pwned = 'click'\">click me</a>\n\n"
        "Inline <b onmouseover=\"window.__pwned = 'inline'\">html</b>, "
        "[a link](javascript:window.__pwned='markdown') and [the docs](https://example.com/docs)\n\n" + s.PLAN
    )
    async with DockerSandbox(TEST_CONFIG, client=docker_client) as sandbox:
        script_team(model_server, planner=[hostile])
        bot = await start_web(web_config, sandbox)
        page = await open_page(bot.url)
        await send(page, "Write it <img src=y onerror=\"window.__pwned = 'task'\"> please")
        await expect(bot_message(page, "Passed:")).to_be_visible(timeout=WAIT_MS)

        planner = turn(page, "Planner")
        await expect(planner).to_contain_text("<script>window.__pwned = 'script'</script>")  # shown, as text
        await expect(planner).to_contain_text('<img src=x onerror="window.__pwned = \'img\'">')
        await planner.get_by_text("click me").click()
        assert await page.evaluate("window.__pwned") is None
        await expect(planner).to_contain_text("<b onmouseover=")
        for selector in ("#thread script", "#thread img", "#thread [onerror]", "#thread [onclick]", "#thread [onmouseover]",
                         '#thread a[href^="javascript:"]'):
            assert await page.locator(selector).count() == 0, selector
        docs = planner.locator('a[href="https://example.com/docs"]')
        await expect(docs).to_have_attribute("rel", "noopener noreferrer")
        await expect(page.locator("#thread article.message.you")).to_contain_text("<img src=y")
