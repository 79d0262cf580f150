"""Bad input gets one clear sentence, in the API and on the page, and nothing is half-made: no conversation, no
model call. The run limits are the service's, as on every platform."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import logging

import pytest
from playwright.async_api import expect

from bot.sandbox import DockerSandbox
from tests.conftest import with_changes
from tests.docker_support import TEST_CONFIG
from tests.fakes.openai_server import Reply, error
from tests.web.conftest import script_team


def file(name: str, data: bytes) -> dict[str, str]:
    return {"name": name, "data": base64.b64encode(data).decode()}


BAD_TASKS = [
    ({"task": ""}, "The task is empty: say what the code should do."),
    ({"task": "   \n\t"}, "The task is empty: say what the code should do."),
    ({"task": "x" * 20_001}, "The task is 20,001 characters long; the limit is 20,000."),
    ({"task": "test this", "files": [file("blob.bin", b"\x7fELF\x00\x01\x02")]}, "blob.bin looks like a binary file"),
    ({"task": "test this", "files": [file("latin.txt", "café".encode("latin-1"))]}, "latin.txt is not UTF-8 text"),
    ({"task": "test this", "files": [file("big.py", b"x = 1\n" * 200)]}, "big.py is too large"),
    ({"task": "test this", "files": [file("a.py", b"1"), file("a.py", b"2")]}, "Two attached files are both called a.py"),
    ({"task": "test this", "files": [file(f"f{i}.py", b"1") for i in range(4)]}, "4 files attached; the limit is 3."),
    ({"task": "test this", "files": [{"name": "a.py", "data": "%%% not base64"}]}, "a.py arrived damaged"),
    ({"task": "test this", "files": [{"name": "a.py"}]}, "An attached file arrived without its name or content"),
    ({"task": "test this", "files": [file("..", b"x = 1")]}, "..: not a usable file name."),
    ({"task": "write a parser \ud800 for it"}, "The task is not all text (character 16 is half of a UTF-16 pair"),
    ({"task": "test this", "files": [{"name": "a\udfff.py", "data": "eA=="}]}, "An attached file is not all text"),
    ({"task": 42}, "The page sent something that is not a task"),
    ([1, 2], "The page sent something that is not a task"),
    ({"task": "x", "files": [[[[[[[[[[]]]]]]]]]]}, "An attached file arrived without its name or content"),
]


@pytest.mark.parametrize(("body", "sentence"), BAD_TASKS)
async def test_a_bad_task_gets_one_sentence_and_starts_nothing(start_web, web_config, model_server, body, sentence):
    config = with_changes(web_config, input={"max_attachment_bytes": 1000, "max_attachments": 3})
    bot = await start_web(config)
    status, answer, _ = await bot.post("/api/conversations", body)
    assert status == 400 and answer["error"].startswith(sentence) and "Traceback" not in answer["error"]
    _, listed, _ = await bot.get("/api/conversations")
    assert listed == {"conversations": []} and not model_server.requests


async def test_a_body_too_large_for_any_task_is_refused_before_it_is_read_whole(start_web, web_config, model_server):
    config = with_changes(web_config, input={"max_attachment_bytes": 1000, "max_attachments": 2, "max_task_chars": 100})
    bot = await start_web(config)
    status, answer, _ = await bot.post("/api/conversations", {"task": "x", "files": [file("a.py", b"x" * 200_000)]})
    assert status == 413 and answer["error"].startswith("That is more than a task can carry: up to 2 files")
    status, answer, _ = await bot.post("/api/conversations", data=b"{" * 300_000, json=None,
                                       headers={"Content-Type": "application/json"})
    assert status == 413
    # Nested deeper than the JSON parser goes, yet within the size a task may have: refused, not a traceback.
    status, answer, _ = await bot.post("/api/conversations", data=b"[" * 20_000, json=None,
                                       headers={"Content-Type": "application/json"})
    assert status == 400 and answer["error"] == "The page sent something that is not a task; reload it and try again."


async def test_a_follow_up_in_someone_else_s_or_no_conversation_is_not_found(start_web, web_config):
    bot = await start_web(web_config)
    status, answer, _ = await bot.post("/api/conversations/nope/tasks", {"task": "now make it async"})
    assert status == 404 and answer["error"].startswith("No such conversation")


async def test_when_the_queue_is_full_the_page_says_so(start_web, web_config, model_server):
    config = with_changes(web_config, limits={"max_concurrent_runs": 1, "max_queued_runs": 1})
    script_team(model_server, planner=[Reply("Thinking...\n", chunk=4, pause_after=4)])
    bot = await start_web(config)
    assert (await bot.post("/api/conversations", {"task": "first"}))[0] == 200  # runs (its model call paused)
    assert (await bot.post("/api/conversations", {"task": "second"}))[0] == 200  # waits in the queue
    status, answer, _ = await bot.post("/api/conversations", {"task": "third"})
    assert status == 400 and answer["error"] == "The bot is busy with too many runs right now; try again in a few minutes."
    _, listed, _ = await bot.get("/api/conversations")
    assert sorted(c["title"] for c in listed["conversations"]) == ["first", "second"]
    model_server.resume.set()


@pytest.mark.browser
async def test_the_page_says_what_is_wrong_with_a_task_in_one_sentence(start_web, web_config, model_server, open_page):
    config = with_changes(web_config, input={"max_attachment_bytes": 1000})
    bot = await start_web(config)
    page = await open_page(bot.url)
    problem = page.locator("#problem")

    await page.click("#send")
    await expect(problem).to_have_text("The task is empty: say what the code should do.")

    await page.set_input_files("#files", files=[{"name": "big.py", "mimeType": "text/x-python", "buffer": b"x" * 5000}])
    await expect(problem).to_have_text("big.py is too large: attachments are limited to 1,000 bytes.")
    await expect(page.locator("#attached li")).to_have_count(0)

    await page.set_input_files("#files", files=[{"name": "blob.bin", "mimeType": "application/octet-stream",
                                                 "buffer": b"\x00\x01\x02binary"}])
    await expect(page.locator("#attached li")).to_have_count(1)
    await page.fill("#task", "write tests for this")
    await page.click("#send")
    await expect(problem).to_have_text("blob.bin looks like a binary file; only text files can be attached.")
    await expect(page.locator("#thread article.message")).to_have_count(0)
    assert not model_server.requests


@pytest.mark.browser
@pytest.mark.docker
@pytest.mark.parametrize("broken", ["model", "docker"])
async def test_the_model_or_docker_unavailable_ends_the_run_with_a_sentence_not_a_traceback(
        start_web, web_config, model_server, open_page, docker_client, broken):
    script_team(model_server)
    if broken == "model":
        model_server.responder = lambda recorded: error(401, "Incorrect API key provided")
        model_server._by_agent.clear()
        sandbox = DockerSandbox(TEST_CONFIG, client=docker_client)
        expected = "rejected the credentials (HTTP 401): check OPENAI_API_KEY."
    else:
        sandbox = DockerSandbox(dataclasses.replace(TEST_CONFIG, docker_host="unix:///nonexistent/docker.sock"))
        expected = "Docker is not reachable"
    try:
        bot = await start_web(web_config, sandbox)
        page = await open_page(bot.url)
        await page.fill("#task", "find all intf keys")
        await page.click("#send")
        final = page.locator("#thread article.message.bot", has_text="Error:")
        await expect(final).to_contain_text(expected, timeout=60_000)
        await expect(page.locator("#status")).to_contain_text("error")
        assert "Traceback" not in await page.locator("body").inner_text()
    finally:
        await sandbox.close()


@pytest.mark.parametrize(("path", "sent"), [
    ("/api/conversations", b'{"task": "write a par'),
    ("/api/conversations", b""),
    ("/login", b"token=abc"),
])
async def test_a_client_hanging_up_mid_request_is_one_quiet_line_not_a_failure(start_web, web_config, model_server,
                                                                               caplog, path, sent):
    bot = await start_web(web_config)
    port = web_config.web.port
    _, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                 f"Content-Length: 100000\r\n\r\n".encode() + sent)
    await writer.drain()
    await asyncio.sleep(0.2)  # the request is being read
    with caplog.at_level(logging.INFO):
        writer.close()
        for _ in range(50):
            if any("hung up" in r.getMessage() for r in caplog.records):
                break
            await asyncio.sleep(0.05)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info], caplog.text
    assert [r.getMessage() for r in caplog.records if "hung up" in r.getMessage()] == [
        f"web request POST {path}: the client hung up before sending it whole"]
    status, listed, _ = await bot.get("/api/conversations")  # the server serves on, nothing half-made
    assert status == 200 and listed == {"conversations": []} and not model_server.requests


async def test_stop_pressed_after_the_run_ended_says_so_not_that_it_is_someone_else_s(start_web, web_config,
                                                                                        model_server):
    from tests.web.test_history import finished_runs

    script_team(model_server)
    bot = await start_web(web_config)
    _, started, _ = await bot.post("/api/conversations", {"task": "find all intf keys"})
    await finished_runs(bot.url, started["conversation"])
    # A second tab, or a page not yet told that the run ended, still shows its Stop.
    status, body, _ = await bot.post(f"/api/runs/{started['run']}/stop")
    assert (status, body) == (409, {"error": "This run is not running any more."})
