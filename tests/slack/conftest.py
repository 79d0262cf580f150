"""The Slack adapter against loopback fakes: a fake Slack (Web API + Socket Mode), the scripted model
server, and the real service, store and bolt app; ``serve`` runs as in production."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import pytest

import adapters.slack
from agents.protocols import Sandbox
from bot.config.sections import Config, Secrets
from bot.model.client import OpenAIChatModel
from bot.repos.desk import RepoDesk
from bot.runs.github_links import LinkReader
from bot.runs.service import Service
from bot.safety.redact import Redactor
from bot.store.sqlite import SQLiteStore
from codegen_chat.build import publisher_factory
from tests.conftest import with_changes
from tests.fakes import team_script as s
from tests.fakes.loopback import listening
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.slack_api import (
    APP_TOKEN,
    BOT_TOKEN,
    BOT_USER,
    SIGNING_SECRET,
    FakeSlack,
    Message,
    events_envelope,
    message_event,
)
from tests.fakes.team_script import ScriptedSandbox

FINAL_WORDS = ("✅ Passed:", "❌ Failed:", "⏹️ Stopped:", "⚠️ Error:")
TURN_HEADER = re.compile(r"^\*([^*]+)\*(?: · follow-up \d+)?(?: · round \d+)?(?: — .+)?$")


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as fake:
        yield fake


@pytest.fixture
def slack_secrets(secrets: Secrets) -> Secrets:
    return dataclasses.replace(secrets, slack_bot_token=BOT_TOKEN, slack_app_token=APP_TOKEN,
                               slack_signing_secret=SIGNING_SECRET)


@pytest.fixture
def slack_config(config: Config, slack: FakeSlack) -> Config:
    return with_changes(config, slack={"enabled": True, "api_url": slack.api_url, "update_interval_s": 0.05})


@dataclass
class RunningBot:
    service: Service
    model: OpenAIChatModel
    task: asyncio.Task[None]


@pytest.fixture
async def start_bot(slack: FakeSlack, store: SQLiteStore, slack_secrets: Secrets) -> AsyncIterator[Callable[..., Any]]:
    """``await start_bot(config, sandbox=None, secrets=None, fake=None, repos=None)``: ``adapters.slack.serve`` running,
    connected (to ``fake`` when the test made a Slack of its own)."""
    running: list[RunningBot] = []

    async def start(config: Config, sandbox: Sandbox | None = None, secrets: Secrets | None = None,
                    fake: FakeSlack | None = None, repos: RepoDesk | None = None) -> RunningBot:
        secrets, fake = secrets or slack_secrets, fake or slack
        model = OpenAIChatModel(config, secrets)
        service = Service(config, store, model, sandbox or ScriptedSandbox(), publisher_factory(config, secrets, store),
                          redact=Redactor(secrets.values()), repos=repos,
                          links=LinkReader(config.input, config.checkin.github_api_url, secrets.github_token))
        task = asyncio.create_task(adapters.slack.serve(service, config, secrets))
        bot = RunningBot(service, model, task)
        running.append(bot)
        if config.slack.mode == "socket":
            await fake.wait_for(lambda: fake.connections or task.done())
        else:
            await listening(config.slack.http_port, task)
        if task.done():
            task.result()  # serve failed to start: show why
        return bot

    yield start
    for bot in running:
        bot.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await bot.task
        await bot.model.close()




def script_team(server: FakeOpenAI, **overrides: list[str]) -> None:
    for role, replies in {**s.happy_path(), **overrides}.items():
        server.script(role, *replies)


def answer_every_role(server: FakeOpenAI) -> None:
    server.responder = lambda recorded: Reply(s.TEAM_DEFAULTS[recorded.agent])


async def mention(slack: FakeSlack, text: str, user: str = "UANN", channel: str = "C1", thread_ts: str | None = None,
                  files: tuple[dict[str, Any], ...] = ()) -> tuple[Message, str]:
    """A person mentions the bot; returns their message and the envelope id."""
    message = slack.say(channel, user, f"<@{BOT_USER}> {text}", thread_ts)
    envelope = events_envelope(message_event(message, files=files), event_id=f"Ev{message.ts}")
    return message, await slack.deliver(envelope)


async def finished(slack: FakeSlack, channel: str, thread_ts: str, count: int = 1) -> list[Message]:
    """Wait for ``count`` runs' final summaries in the thread; returns the thread."""
    def done() -> list[Message] | None:
        thread = slack.thread(channel, thread_ts)
        return thread if sum(m.text.startswith(FINAL_WORDS) for m in thread) >= count else None
    result: list[Message] = await slack.wait_for(done, within=20)
    return result


def headers(thread: list[Message]) -> list[str]:
    """The agent named at the top of each turn's reply, in thread order."""
    found = (TURN_HEADER.match(m.text.split("\n")[0]) for m in thread)
    return [match.group(1) for match in found if match]


async def eventually(predicate: Callable[[], Any], within: float = 10.0) -> Any:
    """Poll ``predicate`` (for state no fake signals, such as the model server's requests)."""
    async with asyncio.timeout(within):
        while not (value := predicate()):
            await asyncio.sleep(0.01)
        return value
