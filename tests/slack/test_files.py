"""Files shared with a mention: downloaded with the bot token and given to the team, text only."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from agents.types import TestJob, TestReport, TestStatus
from tests.conftest import with_changes
from tests.fakes import team_script as s
from tests.fakes.slack_api import FakeSlack
from tests.fakes.team_script import ScriptedSandbox
from tests.slack.conftest import answer_every_role, finished, mention, script_team

MAIN_PY = b"def add(a, b):\n    return a + b\n"


class CountedDownloads(FakeSlack):
    """A Slack that also records which shared files were downloaded."""

    def __init__(self) -> None:
        super().__init__()
        self.downloads: list[str] = []

    async def _download(self, request: web.Request) -> web.Response:
        self.downloads.append(request.match_info["file_id"])
        return await super()._download(request)


@pytest.fixture
async def slack() -> AsyncIterator[CountedDownloads]:
    async with CountedDownloads() as fake:
        yield fake


async def test_an_attached_file_reaches_the_programmer(slack, model_server, slack_config, start_bot):
    await start_bot(slack_config)
    script_team(model_server)
    shared = slack.share_file("main.py", MAIN_PY)
    message, _ = await mention(slack, "write unit tests for this", files=(shared,))
    await finished(slack, "C1", message.ts)
    prompt = "\n".join(m["content"] for m in model_server.calls("programmer")[0].body["messages"])
    assert "main.py" in prompt and "def add(a, b):\n    return a + b" in prompt


async def test_a_file_known_only_by_id_is_looked_up_with_files_info(slack, model_server, slack_config, start_bot):
    await start_bot(slack_config)
    script_team(model_server)
    shared = slack.share_file("main.py", MAIN_PY)
    message, _ = await mention(slack, "write unit tests for this",
                               files=({"id": shared["id"], "file_access": "check_file_info"},))
    await finished(slack, "C1", message.ts)
    assert slack.called("files.info")[0].args["file"] == shared["id"]
    assert "def add(a, b)" in model_server.calls("programmer")[0].body["messages"][1]["content"]


async def test_a_binary_file_is_refused_with_a_clear_sentence_and_no_model_call(
        slack, model_server, slack_config, start_bot):
    await start_bot(slack_config)
    shared = slack.share_file("logo.png", b"\x89PNG\r\n\x1a\n\x00\x00", mimetype="image/png")
    message, _ = await mention(slack, "describe this", files=(shared,))
    reply = await slack.wait_for(lambda: slack.thread("C1", message.ts))
    assert reply[0].text == "logo.png looks like a binary file; only text files can be attached."
    assert model_server.requests == []


async def test_an_oversized_file_is_refused_before_it_is_downloaded(slack, model_server, slack_config, start_bot):
    await start_bot(with_changes(slack_config, input={"max_attachment_bytes": 100}))
    shared = slack.share_file("big.txt", b"x" * 5000)
    message, _ = await mention(slack, "summarise", files=(shared,))
    reply = await slack.wait_for(lambda: slack.thread("C1", message.ts))
    assert "big.txt is 5,000 bytes; attachments are limited to 100 bytes." in reply[0].text
    assert model_server.requests == []


async def test_the_bot_token_never_goes_to_a_host_that_is_not_slack(slack, model_server, slack_config, start_bot):
    await start_bot(slack_config)
    shared = {**slack.share_file("main.py", MAIN_PY), "url_private": "http://evil.example/steal",
              "url_private_download": "http://evil.example/steal"}
    message, _ = await mention(slack, "write tests", files=(shared,))
    reply = await slack.wait_for(lambda: slack.thread("C1", message.ts))
    assert "main.py is not stored on Slack" in reply[0].text and model_server.requests == []


async def test_an_empty_task_is_refused_before_its_files_are_downloaded(slack, model_server, slack_config, start_bot):
    await start_bot(slack_config)
    shared = slack.share_file("main.py", MAIN_PY)
    message, _ = await mention(slack, "  ", files=(shared,))
    reply = await slack.wait_for(lambda: slack.thread("C1", message.ts))
    assert reply[0].text.startswith("The task is empty")
    assert slack.downloads == [] and model_server.requests == []


async def test_a_shared_file_is_downloaded_once(slack, model_server, slack_config, start_bot):
    await start_bot(slack_config)
    script_team(model_server)
    shared = slack.share_file("main.py", MAIN_PY)
    message, _ = await mention(slack, "write unit tests for this", files=(shared,))
    await finished(slack, "C1", message.ts)
    assert slack.downloads == [shared["id"]]


NESTED_CODE = s.CODE + "\n```python path=a/b.py\nNESTED = 1\n```\n\n```python path=a_b.py\nFLAT = 2\n```\n"


def always_fails(job: TestJob) -> TestReport:
    return TestReport(TestStatus.FAILED, 1, 0.1, 1, 1, "FAILED test_intf.py::test_nested - AssertionError")


async def test_a_failing_runs_attached_files_carry_the_banner_and_distinct_names(
        slack, model_server, slack_config, start_bot):
    await start_bot(with_changes(slack_config, budget={"max_rounds": 1}), sandbox=ScriptedSandbox(verdict=always_fails))
    answer_every_role(model_server)
    model_server.script("programmer", NESTED_CODE)
    message, _ = await mention(slack, "find all intf keys")
    thread = await finished(slack, "C1", message.ts)
    assert thread[-1].text.startswith("❌ Failed:")
    attached = {u["name"]: u["content"] for u in slack.uploads if u["thread_ts"] == message.ts}
    assert attached["a__b.py"] == "NESTED = 1\n" and attached["a_b.py"] == "FLAT = 2\n"
    assert attached["README.md"].startswith("> **Status: FAILING TESTS**")
