"""Stop during the Tester's run in the real Docker sandbox: the run ends "Stopped" and its container is gone."""

from __future__ import annotations

import asyncio

import docker
import pytest

from agents.types import RunStatus
from bot.sandbox import DockerSandbox
from tests.discord.conftest import WAIT_S, eventually, final_message, script_team, thread_of
from tests.discord.payloads import button_press, slash_code
from tests.docker_support import TEST_CONFIG, our_containers

SLOW_TESTS = '''```python path=test_intf.py
import time
from intf import find_intf


def test_takes_its_time():
    time.sleep(300)
    assert find_intf({"intf": 1}) == [("intf", 1)]
```
'''


def _pytest_in(client) -> bool:
    for container in our_containers(client):
        try:
            container.reload()
        except docker.errors.NotFound:  # listed while still being created, or already removed
            continue
        if container.status == "running" and any("pytest" in " ".join(p) for p in container.top()["Processes"]):
            return True
    return False


async def pytest_running(client) -> None:
    """Wait (off the event loop: the bot keeps working meanwhile) until pytest runs in a sandbox container."""
    for _ in range(int(WAIT_S / 0.05)):
        if await asyncio.to_thread(_pytest_in, client):
            return
        await asyncio.sleep(0.05)
    raise AssertionError("never happened: pytest running in the sandbox")


@pytest.mark.docker
async def test_stop_while_the_tests_run_removes_the_container(start_bot, discord_api, model_server, store,
                                                              docker_client):
    script_team(model_server, tester=[SLOW_TESTS])
    async with DockerSandbox(TEST_CONFIG, client=docker_client) as sandbox:
        await start_bot(sandbox=sandbox)
        await discord_api.dispatch("INTERACTION_CREATE", slash_code(discord_api, "find all intf keys"))
        thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
        await eventually(lambda: sandbox.active and our_containers(docker_client), "a sandbox container")
        await pytest_running(docker_client)
        control = discord_api.channel_messages(thread)[0]
        await discord_api.dispatch("INTERACTION_CREATE", button_press(discord_api, control.id))
        final = await eventually(lambda: final_message(discord_api, thread), "the final message")

        assert final.content.startswith("⏹️ Stopped")
        assert our_containers(docker_client) == []  # removed before the run reported that it stopped
        assert (await store.runs())[0].status == RunStatus.STOPPED
