"""The recorded run (a scripted team: a silent model, a failing round with long output, then fixed) as a person
reads it in the web chat's page, in a real browser: the wait shown while the model is silent, Stop while the
run can stop, code under its file name, badges instead of the lines meant for the workflow, the failing
output on whole lines with the failure first."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import expect

from tests.chat.recorded import CONTROL_LINE, FAILING_OUTPUT, script, verdict
from tests.conftest import with_changes
from tests.fakes import team_script as s
from tests.fakes.openai_server import Reply
from tests.fakes.team_script import ScriptedSandbox
from tests.web.test_browser import bot_message, send, turn

pytestmark = pytest.mark.browser

WAIT_MS = 30_000


def whole_lines_of_the_output(excerpt: str) -> None:
    """The failing test, its failing line, its assertion and its name first; then, after a line saying how much
    was left out, the end of the output, every line whole, none that only says a test passed."""
    shown, output = excerpt.strip().splitlines(), FAILING_OUTPUT.splitlines()
    marker = next(line for line in shown if line.startswith("[…"))
    assert all(line in output for line in shown if line != marker)
    assert shown[0].startswith("____") and shown[1].startswith(">       assert") and "AssertionError" in shown[2]
    assert shown[3].startswith("FAILED test_intf.py::test_nested") and shown[-1] == output[-1]
    assert not any("PASSED" in line for line in shown)


async def test_a_recorded_run_reads_well_in_the_web_page(start_web, web_config, model_server, open_page):
    model_server.script("planner", Reply(s.PLAN, chunk=8, pause_after=0))  # silent until resumed
    script(model_server)
    # The silence lasts until resumed, however slow the machine: no request timeout ends it first.
    config = with_changes(web_config, team={"wait_notice_s": 1}, llm={"request_timeout_s": 120.0})
    bot = await start_web(config, ScriptedSandbox(verdict=verdict))
    page = await open_page(bot.url)
    await send(page, "find all intf keys in a nested structure")

    # While the model is silent: the status message, the Planner's turn and the passing status say so.
    status = page.locator("#thread article.message.bot").first
    # (1 s), or later figures when the page comes up later than that on a slow machine
    await expect(status).to_contain_text(re.compile(r"Plan — waiting for the model \(\d+ s\)"), timeout=WAIT_MS)
    await expect(turn(page, "Planner")).to_contain_text(re.compile(r"waiting for the model \(\d+ s\)…"))
    await expect(page.locator("#working")).to_have_text(re.compile(r"^Planner is waiting for the model \(\d+ s\)…$"))
    await expect(status.locator("button.stop")).to_be_visible()
    await expect(page.locator("#stop")).to_be_visible()
    model_server.resume.set()

    await expect(bot_message(page, "Passed:")).to_be_visible(timeout=WAIT_MS)
    thread = page.locator("#thread")
    await expect(thread).not_to_contain_text("waiting for the model")
    await expect(page.locator("button.stop:visible")).to_have_count(0)  # the run can no longer stop
    texts = await page.locator("#thread article.message.bot").all_inner_texts()
    joined = "\n".join(texts)
    assert not CONTROL_LINE.search(joined), CONTROL_LINE.search(joined)
    for badge in ("— language: python", "Review · round 1 — approves", "fix the code"):
        assert badge in joined, badge
    for name in ("intf.py", "test_intf.py"):  # each code block under its file's name
        caption = thread.locator("p", has_text=f"📄 {name}").first
        await expect(caption).to_be_visible()
        code = await caption.evaluate("p => p.nextElementSibling && p.nextElementSibling.querySelector('pre code')"
                                      " && p.nextElementSibling.innerText")
        assert code and ("def find_intf" in code if name == "intf.py" else "def test_nested" in code)

    failing = bot_message(page, "🧪").filter(has_text="1 failed").locator("pre")
    whole_lines_of_the_output(await failing.inner_text())
    await page.locator("#rounds li.failed summary").click()
    whole_lines_of_the_output(await page.locator("#rounds li.failed pre").inner_text())


async def test_compact_mode_shows_the_status_the_files_and_the_result_only(start_web, web_config, model_server,
                                                                           open_page):
    script(model_server)
    config = with_changes(web_config, web={"thread_detail": "compact"})
    bot = await start_web(config, ScriptedSandbox(verdict=verdict))
    page = await open_page(bot.url)
    await send(page, "find all intf keys in a nested structure")
    await expect(bot_message(page, "Passed:")).to_be_visible(timeout=WAIT_MS)

    messages = page.locator("#thread article.message.bot")
    texts = await messages.all_inner_texts()
    attachments = [t for t in texts if t.startswith("📎")]
    assert len(texts) == 1 + len(attachments) + 1  # the status, the files, the result
    assert [t.splitlines()[0] for t in attachments[:3]] == ["📎 Programmer · round 1: intf.py",
                                                            "📎 Tester · round 1: test_intf.py",
                                                            "📎 Programmer · round 2: intf.py"]
    status = texts[0]
    assert "❌ Tests · round 1 — 120 passed, 1 failed" in status and "✅ Fix · round 2" in status
    assert texts[-1].startswith("✅ Passed:")
