"""Stop pressed while the run's files are being attached to the thread: the thread still says the run
stopped, and the Stop button goes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiohttp import web

from tests.discord.conftest import eventually, final_message, script_team, thread_of
from tests.discord.payloads import button_press, slash_code
from tests.fakes.discord_api import FakeDiscord

FILES_NOTE = "📎 Files of run"


class HeldUploads(FakeDiscord):
    """A Discord that holds the upload of a run's files until the test lets it through."""

    def __init__(self) -> None:
        super().__init__()
        self.upload_arrived = asyncio.Event()
        self.release = asyncio.Event()

    async def _create_message(self, parts: list[str], body: Any, files: dict[str, bytes]) -> web.Response:
        if files and str((body or {}).get("content") or "").startswith(FILES_NOTE):
            self.upload_arrived.set()
            await self.release.wait()
        return await super()._create_message(parts, body, files)


@pytest.fixture
async def discord_api():
    async with HeldUploads() as fake:
        yield fake


async def test_stop_while_the_files_upload_still_ends_the_run_in_the_thread(start_bot, discord_api, model_server):
    script_team(model_server)
    await start_bot()
    await discord_api.dispatch("INTERACTION_CREATE", slash_code(discord_api, "find all intf keys"))
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    await asyncio.wait_for(discord_api.upload_arrived.wait(), 15)
    control = discord_api.channel_messages(thread)[0].id

    await discord_api.dispatch("INTERACTION_CREATE", button_press(discord_api, control))
    await eventually(lambda: discord_api.calls_to("POST", "/interactions/"), "the press answered")
    discord_api.release.set()

    final = await eventually(lambda: final_message(discord_api, thread), "the final message")
    assert final.content.startswith("⏹️ Stopped")
    assert discord_api.messages[control].payload["components"] == []
