"""The Discord adapter against the loopback Discord: a real discord.py client, logged in over REST and
connected to the fake gateway, serving a real Service (the scripted model server, a sandbox double)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Callable

import pytest

from adapters.discord import CodegenBot, endpoints, make_bot
from bot.model.client import OpenAIChatModel
from bot.runs.service import Service
from bot.safety.redact import Redactor
from codegen_chat.build import publisher_factory
from tests.conftest import with_changes
from tests.fakes import team_script as s
from tests.fakes.discord_api import GUILD_ID, TOKEN, FakeDiscord, StoredMessage
from tests.fakes.team_script import ScriptedSandbox

FINAL_WORDS = ("✅ Passed:", "❌ Failed:", "⏹️ Stopped:", "⚠️ Error:")
WAIT_S = 15.0  # a ceiling for "this eventually happens", never a measured duration


@pytest.fixture
async def discord_api():
    async with FakeDiscord() as fake:
        yield fake


@pytest.fixture
def discord_config(config, discord_api):
    return with_changes(config, discord={"enabled": True, "api_url": discord_api.api_url,
                                         "gateway_url": discord_api.gateway_url, "update_interval_s": 0.0,
                                         "allowed_guilds": (GUILD_ID,),
                                         "channel_writes_per_5s": 1000})  # the pace has tests of its own


@pytest.fixture
def discord_secrets(secrets):
    return dataclasses.replace(secrets, discord_token=TOKEN)


@pytest.fixture
async def start_bot(discord_config, discord_secrets, store, discord_api):
    """``await start_bot(sandbox=..., prices=..., team=..., llm=..., **discord_changes)``: a connected bot, closed
    after the test (``team``, ``llm``, ``budget``: changes to ``[team]``, ``[llm]``, ``[budget]``)."""
    started: list[tuple[CodegenBot, asyncio.Task]] = []
    with contextlib.ExitStack() as endpoints_set:

        async def start(sandbox=None, prices=None, team=None, llm=None, budget=None, **changes) -> CodegenBot:
            config = with_changes(discord_config, discord=changes) if changes else discord_config
            config = with_changes(config, team=team) if team else config
            config = with_changes(config, llm=llm) if llm else config
            config = with_changes(config, budget=budget) if budget else config
            config = dataclasses.replace(config, prices=prices) if prices else config
            service = Service(config, store, OpenAIChatModel(config, discord_secrets), sandbox or ScriptedSandbox(),
                              publisher_factory(config, discord_secrets, store), redact=Redactor(discord_secrets.values()))
            endpoints_set.enter_context(endpoints(config.discord))
            bot = make_bot(service, config, discord_secrets)
            task = asyncio.create_task(bot.start(TOKEN))
            started.append((bot, task))
            # The guild in the cache is enough to act on events; READY itself waits out discord.py's
            # two-second pause for more guilds, which would only slow the tests.
            await eventually(lambda: task.done() or bot.get_guild(GUILD_ID), "the bot connected")
            assert not task.done(), f"the bot did not connect: {task.exception()}"
            return bot

        yield start
        for bot, task in started:
            await bot.close()
            await asyncio.wait({task}, timeout=WAIT_S)


def script_team(server, **overrides) -> None:
    for role, replies in {**s.happy_path(), **overrides}.items():
        server.script(role, *replies)


async def eventually(check: Callable[[], object], what: str) -> object:
    """Wait until ``check()`` returns something truthy (polling; the ceiling only guards against hangs)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_S
    while loop.time() < deadline:
        result = check()
        if result:
            return result
        await asyncio.sleep(0.01)
    raise AssertionError(f"never happened: {what}")


def thread_of(fake: FakeDiscord) -> int:
    assert fake.threads, "no thread was created"
    return next(iter(fake.threads))


def final_message(fake: FakeDiscord, channel_id: int, count: int = 1) -> StoredMessage | None:
    """The ``count``-th final summary in a channel (they start with a status emoji), once posted."""
    finals = [m for m in fake.channel_messages(channel_id) if m.content.startswith(FINAL_WORDS)]
    return finals[count - 1] if len(finals) >= count else None


def fences_balanced(text: str) -> bool:
    return sum(1 for line in text.splitlines() if line.lstrip().startswith("```")) % 2 == 0
