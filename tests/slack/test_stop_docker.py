"""Stop during a real sandboxed test run: the run stops and its Docker container is gone."""

from __future__ import annotations

import asyncio

import pytest

from bot.sandbox import DockerSandbox
from tests.docker_support import TEST_CONFIG, our_containers
from tests.slack.conftest import finished, mention, script_team
from tests.slack.test_stop import press_stop

SLOW_TESTS = '''```python path=test_intf.py
import time

def test_takes_its_time():
    time.sleep(300)
```
'''


@pytest.mark.docker
async def test_stop_during_the_tests_removes_the_sandbox_container(
        slack, model_server, slack_config, start_bot, docker_client):
    async with DockerSandbox(TEST_CONFIG, client=docker_client) as sandbox:
        await start_bot(slack_config, sandbox=sandbox)
        script_team(model_server, tester=[SLOW_TESTS])
        message, _ = await mention(slack, "find all intf keys")
        for _ in range(600):  # the container starts once the Tester's files reach the sandbox
            if await asyncio.to_thread(our_containers, docker_client) and sandbox.active:
                break
            await asyncio.sleep(0.1)
        assert sandbox.active == 1, "the tests never started in the sandbox"

        await press_stop(slack, message.ts)
        thread = await finished(slack, "C1", message.ts)
        assert thread[-1].text.startswith("⏹️ Stopped: stopped on request.")
        for _ in range(100):  # removed as the run stops (on a loaded machine the engine may take a moment more)
            if not await asyncio.to_thread(our_containers, docker_client):
                break
            await asyncio.sleep(0.1)
        assert await asyncio.to_thread(our_containers, docker_client) == []
