"""Links on the web page, as Chromium shows them: whatever Markdown spelling a model uses (inline, titled,
``<...>`` targets, parentheses, reference-style, a definition the server's reading does not see but the
page's renderer does), a link whose text names an address goes there, or its real target is shown."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from playwright.async_api import expect

from tests.fakes import team_script as s
from tests.web.conftest import script_team
from tests.web.test_browser import WAIT_MS, bot_message, send, turn

pytestmark = [pytest.mark.browser]

SPELLINGS = "\n\n".join([
    "one [github.com](https://evil.example/one_(a))",
    'two [github.com](https://evil.example/two "GitHub")',
    "three [github.com](<https://evil.example/three>)",
    "four [github.com][4]\n\n[4]: https://evil.example/four",
    "five [pypi.org][]\n\n[pypi.org]: <https://evil.example/five>",
    "six [docs.python.org][6]\n\n> [6]: https://evil.example/six",  # a definition in a quote
    "honest [the docs](https://example.com/docs) and [github.com/acme](https://github.com/acme)",
])


async def test_every_link_on_the_page_goes_where_its_text_says_or_shows_its_target(
        start_web, web_config, model_server, open_page):
    script_team(model_server, planner=[f"{SPELLINGS}\n\n{s.PLAN}"])
    bot = await start_web(web_config)
    page = await open_page(bot.url)
    await send(page, "find all intf keys")
    await expect(bot_message(page, "Passed:")).to_be_visible(timeout=WAIT_MS)
    planner = turn(page, "Planner")
    text = await planner.inner_text()
    for name in ("one_(a)", "two", "three", "four", "five", "six"):
        assert f"https://evil.example/{name}" in text, name
    for anchor in await planner.locator("a").all():
        shown, href = (await anchor.inner_text()).strip().lower(), await anchor.get_attribute("href") or ""
        host = urlsplit(href).hostname or ""
        for named in ("github.com", "pypi.org", "docs.python.org"):
            if named in shown:
                assert host == named or host.endswith("." + named), (shown, href)
    await expect(planner.locator('a[href="https://example.com/docs"]')).to_have_text("the docs")
