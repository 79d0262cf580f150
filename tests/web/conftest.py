"""The web chat as it runs in production: ``adapters.web.serve`` on a free loopback port, the real service and
store, the scripted model server; pages are driven by Debian's Chromium through Playwright (never a browser
Playwright downloads), and plain HTTP checks go through aiohttp.

Tests marked ``browser`` skip when Chromium or Playwright is missing, and fail instead when
``CODEGEN_REQUIRE_BROWSER=1`` (CI sets it).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import shutil
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
import pytest

import adapters.web
from agents.protocols import Sandbox
from bot.config.sections import Config, ConfigError, Secrets
from bot.health.checks import Health
from bot.model.client import OpenAIChatModel
from bot.runs.service import Service
from bot.safety.redact import Redactor
from bot.store.sqlite import SQLiteStore
from codegen_chat.build import publisher_factory
from tests.conftest import with_changes
from tests.fakes import team_script as s
from tests.fakes.loopback import free_port, listening
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.team_script import ScriptedSandbox

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
REQUIRE_ENV = "CODEGEN_REQUIRE_BROWSER"
FINAL_WORDS = ("Passed:", "Failed:", "Stopped:", "Error:")



@pytest.fixture
def web_config(config: Config) -> Config:
    return with_changes(config, web={"port": free_port(), "update_interval_s": 0.05})


@dataclass
class WebBot:
    url: str
    service: Service
    model: OpenAIChatModel
    task: asyncio.Task[None]

    async def get(self, path: str, **kwargs: Any) -> tuple[int, Any, dict[str, str]]:
        async with aiohttp.ClientSession() as session, session.get(self.url + path, allow_redirects=False,
                                                                   **kwargs) as response:
            return response.status, await _body(response), dict(response.headers)

    async def post(self, path: str, body: Any = None, **kwargs: Any) -> tuple[int, Any, dict[str, str]]:
        kwargs.setdefault("json", body if body is not None else {})
        async with aiohttp.ClientSession() as session, session.post(self.url + path, allow_redirects=False,
                                                                    **kwargs) as response:
            return response.status, await _body(response), dict(response.headers)


async def _body(response: aiohttp.ClientResponse) -> Any:
    if response.content_type == "application/json":
        return await response.json()
    return await response.text()


@pytest.fixture
async def start_web(store: SQLiteStore, secrets: Secrets) -> AsyncIterator[Callable[..., Any]]:
    """``await start_web(config, sandbox=None, secrets=None, health=None)``: the web chat serving, its port
    answering."""
    running: list[WebBot] = []

    async def start(config: Config, sandbox: Sandbox | None = None, secrets_: Secrets | None = None,
                    health: Health | None = None) -> WebBot:
        chosen = secrets_ or secrets
        model = OpenAIChatModel(config, chosen)
        service = Service(config, store, model, sandbox or ScriptedSandbox(),
                          publisher_factory(config, chosen, store), redact=Redactor(chosen.values()), health=health)
        task = asyncio.create_task(adapters.web.serve(service, config, chosen))
        bot = WebBot(f"http://127.0.0.1:{config.web.port}", service, model, task)
        running.append(bot)
        await listening(config.web.port, task)
        if task.done():
            task.result()  # serve refused to start: show why
        return bot

    yield start
    for bot in running:
        bot.task.cancel()
        with contextlib.suppress(asyncio.CancelledError, ConfigError):  # a bot that refused to start
            await bot.task
        await bot.model.close()



def script_team(server: FakeOpenAI, **overrides: list[Any]) -> None:
    for role, replies in {**s.happy_path(), **overrides}.items():
        server.script(role, *replies)


# -- the browser ------------------------------------------------------------------------------


def _browser_missing() -> str:
    if not os.path.exists(CHROMIUM) and not shutil.which("chromium"):
        return f"{CHROMIUM} is missing: apt-get install -y chromium"
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        return "playwright is not installed: pip install -e '.[dev]'"
    return ""


@pytest.fixture(autouse=True)
def _browser_gate(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("browser") is None:
        return
    missing = _browser_missing()
    if missing and os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{missing} ({REQUIRE_ENV}=1: the browser tests must run here)", pytrace=False)
    if missing:
        pytest.skip(missing)


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        await chromium.close()


@dataclass
class Page:
    """A browser tab on the web chat, and the script errors it raised (a page error is a bug)."""

    page: Any
    errors: list[str]


@pytest.fixture
async def open_page(browser: Any) -> AsyncIterator[Callable[..., Any]]:
    pages: list[Page] = []

    async def open_(url: str, width: int = 1400, height: int = 900) -> Any:
        context = await browser.new_context(viewport={"width": width, "height": height})
        page = await context.new_page()
        tab = Page(page, [])
        page.on("pageerror", lambda error: tab.errors.append(str(error)))
        pages.append(tab)
        await page.goto(url)
        return page

    yield open_
    for tab in pages:
        assert not tab.errors, f"the page raised: {tab.errors}"


def replace_secrets(secrets: Secrets, **changes: str) -> Secrets:
    return dataclasses.replace(secrets, **changes)
