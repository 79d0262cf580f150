"""Stopping the bot as a supervisor does (SIGTERM, SIGHUP; Ctrl-C too), with real processes: ``codegen-chat
serve`` against a loopback Slack in HTTP mode and the scripted model, with the tests running in real
Docker; and ``codegen-chat run``. The runs under way end "stopped" (reason: the bot was shut down), their
thread or terminal says they can be continued, no container is left, the process exits 0; after a restart
a reply continues from the saved files. A second signal exits at once."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import pytest

from adapters.slack.thread import STOP_ACTION
from bot.sandbox.hardening import LABEL, LABEL_PID
from tests.fakes import team_script as s
from tests.fakes.loopback import free_port
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.slack_api import (
    BOT_TOKEN,
    BOT_USER,
    SIGNING_SECRET,
    FakeSlack,
    Message,
    event_callback,
    message_event,
    signed_headers,
)

ROOT = Path(__file__).resolve().parents[2]
API_KEY = "sk-test-0123456789abcdef"
SHUTDOWN_LINE = "⏹️ Stopped: the bot was shut down. Reply in this thread to continue from where it stopped."
SLOW_TESTS = '''```python path=test_intf.py
import time
from intf import find_intf

def test_slow():
    time.sleep(300)
    assert find_intf({"intf": 1}) == [("intf", 1)]
```
'''
WAIT_S = 60  # the longest any step here may take (a process start, a run, a shutdown)


@dataclass
class Bot:
    proc: asyncio.subprocess.Process
    url: str
    stderr: list[str]


def write_config(tmp_path: Path, model: FakeOpenAI, slack: FakeSlack, port: int, extra: str = "") -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        f'[llm]\nbase_url = "{model.base_url}"\nrequest_timeout_s = 10.0\nmax_retries = 0\n'
        f'[storage]\npath = "{tmp_path / "db.sqlite3"}"\n'
        f'[sandbox]\nuse_offline_images = true\ntimeout_s = 600.0\n'
        f'[checkin]\npublish_failed = false\n'
        f'[slack]\nenabled = true\nmode = "http"\napi_url = "{slack.api_url}"\nhttp_host = "127.0.0.1"\n'
        f'http_port = {port}\nupdate_interval_s = 0.05\n'
        f'[runtime]\nhealth_port = 0\n{extra}')
    return path


def env(tmp_path: Path, config: Path, **extra: str) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PYTHONPATH": str(ROOT), "NO_COLOR": "1",
            "OPENAI_API_KEY": API_KEY, "SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_SIGNING_SECRET": SIGNING_SECRET,
            "CODEGEN_CONFIG": str(config), **extra}


async def start_serve(tmp_path: Path, config: Path, port: int) -> Bot:
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "codegen_chat.cli", "serve", cwd=tmp_path,
                                                env=env(tmp_path, config), stderr=asyncio.subprocess.PIPE)
    bot = Bot(proc, f"http://127.0.0.1:{port}", [])
    asyncio.get_running_loop().create_task(_collect(proc, bot.stderr))
    await _until_ready(bot)
    return bot


async def _collect(proc: asyncio.subprocess.Process, into: list[str]) -> None:
    assert proc.stderr is not None
    async for line in proc.stderr:
        into.append(line.decode(errors="replace"))


async def _until_ready(bot: Bot) -> dict:
    """/readyz on Slack's own HTTP server: 200 once the store, Docker and Slack are all fine."""
    async with aiohttp.ClientSession() as session:
        for _ in range(WAIT_S * 10):
            if bot.proc.returncode is not None:
                raise AssertionError("serve exited: " + "".join(bot.stderr))
            try:
                async with session.get(f"{bot.url}/readyz") as response:
                    if response.status == 200:
                        return await response.json()
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
    raise AssertionError("serve never became ready: " + "".join(bot.stderr))


async def send(bot: Bot, message: Message, kind: str, event_id: str) -> None:
    body = json.dumps(event_callback(message_event(message, kind=kind), event_id))
    async with aiohttp.ClientSession() as session, \
            session.post(f"{bot.url}/slack/events", data=body, headers=signed_headers(body)) as response:
        assert response.status == 200


async def exit_code(proc: asyncio.subprocess.Process) -> int:
    return await asyncio.wait_for(proc.wait(), WAIT_S)


def containers_of(docker_client, pid: int) -> list:
    return docker_client.containers.list(all=True, sparse=True, filters={"label": [f"{LABEL}=1", f"{LABEL_PID}={pid}"]})


async def running_container(docker_client, pid: int):
    for _ in range(WAIT_S * 10):
        found = [c for c in containers_of(docker_client, pid) if c.attrs.get("State") == "running"]
        if found:
            return found[0]
        await asyncio.sleep(0.1)
    raise AssertionError("the test container never started")


def stop_button(message: Message) -> str | None:
    return next((e["value"] for b in message.blocks for e in b.get("elements", []) if e.get("action_id") == STOP_ACTION),
                None)


def stored_run(tmp_path: Path) -> sqlite3.Row:
    db = sqlite3.connect(tmp_path / "db.sqlite3")
    db.row_factory = sqlite3.Row
    try:
        return db.execute("SELECT * FROM runs ORDER BY rowid LIMIT 1").fetchone()
    finally:
        db.close()


def script_slow_team(model: FakeOpenAI) -> None:
    for role, replies in {**s.happy_path(), "tester": [SLOW_TESTS]}.items():
        model.script(role, *replies)


@pytest.mark.docker
@pytest.mark.parametrize("signal_", [signal.SIGTERM, signal.SIGHUP])
async def test_serve_stops_its_runs_tells_the_thread_and_a_reply_after_a_restart_continues(
        signal_, tmp_path, model_server, docker_client):
    async with FakeSlack() as slack:
        port = free_port()
        config = write_config(tmp_path, model_server, slack, port)
        bot = await start_serve(tmp_path, config, port)
        ready = await _until_ready(bot)
        assert ready["parts"]["slack"]["ok"] is True and ready["parts"]["docker"]["ok"] is True

        script_slow_team(model_server)
        mention = slack.say("C1", "UANN", f"<@{BOT_USER}> find all intf keys")
        await send(bot, mention, "app_mention", "Ev1")
        await running_container(docker_client, bot.proc.pid)  # the Tester's tests are running in Docker now

        bot.proc.send_signal(signal_)
        assert await exit_code(bot.proc) == 0, "".join(bot.stderr)
        thread = slack.thread("C1", mention.ts)
        assert thread[-1].text.startswith(SHUTDOWN_LINE)
        status = thread[0]
        assert status.text.startswith("⏹️ *Stopped*") and stop_button(status) is None  # the button is gone
        assert containers_of(docker_client, bot.proc.pid) == []
        run = stored_run(tmp_path)
        assert (run["status"], run["reason"]) == ("stopped", "the bot was shut down")
        assert "def find_intf" in json.loads(run["files"])["intf.py"]  # the work so far is saved
        assert "Traceback" not in "".join(bot.stderr)

        # A new process: a reply in the thread (no mention) continues from the saved files.
        bot = await start_serve(tmp_path, config, port)
        for role, replies in s.happy_path().items():
            model_server.script(role, *replies)
        reply = slack.say("C1", "UANN", "carry on", thread_ts=mention.ts)
        await send(bot, reply, "message", "Ev2")
        await slack.wait_for(lambda: sum(m.text.startswith("✅ Passed:") for m in slack.thread("C1", mention.ts)),
                             within=WAIT_S)
        planner_prompt = model_server.calls("planner")[-1].body["messages"][1]["content"]
        assert "find all intf keys" in planner_prompt and "def find_intf" in planner_prompt
        bot.proc.send_signal(signal.SIGTERM)  # idle: it just stops
        assert await exit_code(bot.proc) == 0, "".join(bot.stderr)


async def test_a_second_signal_exits_at_once(tmp_path, model_server):
    """The first signal waits for the runs to say goodbye (here Slack rate-limits every call for minutes);
    the second one does not wait."""
    async with FakeSlack() as slack:
        port = free_port()
        config = write_config(tmp_path, model_server, slack, port, extra="shutdown_grace_s = 600.0\n")
        config.write_text(config.read_text().replace("[sandbox]\nuse_offline_images = true\n",
                                                     "[sandbox]\nenabled = false\n"))
        bot = await start_serve(tmp_path, config, port)
        model_server.script_any(Reply("1. Plan the work.\n2. Write it.\n" * 5, stall_after=40))  # hangs mid-reply
        mention = slack.say("C1", "UANN", f"<@{BOT_USER}> find all intf keys")
        await send(bot, mention, "app_mention", "Ev1")
        await slack.wait_for(lambda: model_server.requests, within=WAIT_S)
        for method in ("chat.postMessage", "chat.update"):
            slack.fail(method, status=429, times=100, retry_after="300")
        bot.proc.send_signal(signal.SIGTERM)
        await slack.wait_for(lambda: any("shutting down" in line for line in bot.stderr), within=WAIT_S)
        bot.proc.send_signal(signal.SIGTERM)
        assert await exit_code(bot.proc) == 128 + signal.SIGTERM
        # the process has ended; its last line may still be on its way through the pipe to the reader
        for _ in range(WAIT_S * 10):
            if any("SIGTERM again: exiting now" in line for line in bot.stderr):
                break
            await asyncio.sleep(0.1)
        assert any("SIGTERM again: exiting now" in line for line in bot.stderr), "".join(bot.stderr)


# -- codegen-chat run ------------------------------------------------------------------------------

def run_config(tmp_path: Path, model: FakeOpenAI) -> Path:
    path = tmp_path / "run.toml"
    path.write_text(f'[llm]\nbase_url = "{model.base_url}"\nrequest_timeout_s = 10.0\nmax_retries = 0\n'
                    f'[storage]\npath = "{tmp_path / "db.sqlite3"}"\n'
                    f'[sandbox]\nuse_offline_images = true\ntimeout_s = 600.0\n')
    return path


async def start_run(tmp_path: Path, config: Path, *args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "codegen_chat.cli", "run", *args, cwd=tmp_path, env=env(tmp_path, config),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)


@pytest.mark.docker
@pytest.mark.parametrize("signal_", [signal.SIGTERM, signal.SIGHUP])
async def test_run_stops_its_run_says_how_to_continue_and_continue_picks_it_up(
        signal_, tmp_path, model_server, docker_client):
    config = run_config(tmp_path, model_server)
    script_slow_team(model_server)
    proc = await start_run(tmp_path, config, "find all intf keys", "--out", "result")
    await running_container(docker_client, proc.pid)
    proc.send_signal(signal_)
    out, err = await asyncio.wait_for(proc.communicate(), WAIT_S)
    text = out.decode()
    assert proc.returncode == 0, text + err.decode()
    run_id = text.split("Run ", 1)[1].split(" ", 1)[0]
    assert f"Run {run_id}: STOPPED — the bot was shut down" in text
    assert f'codegen-chat run --continue {run_id} "carry on"' in text
    assert "shutting down" in err.decode() and "Traceback" not in err.decode()
    assert containers_of(docker_client, proc.pid) == []
    run = stored_run(tmp_path)
    assert (run["status"], run["reason"]) == ("stopped", "the bot was shut down")

    for role, replies in s.happy_path().items():
        model_server.script(role, *replies)
    proc = await start_run(tmp_path, config, "carry on", "--continue", run_id)
    out, err = await asyncio.wait_for(proc.communicate(), WAIT_S)
    assert proc.returncode == 0, out.decode() + err.decode()
    assert "PASSED" in out.decode()
    planner_prompt = model_server.calls("planner")[-1].body["messages"][1]["content"]
    assert "find all intf keys" in planner_prompt and "def find_intf" in planner_prompt


# -- after a crash ---------------------------------------------------------------------------------

INTERRUPTED_LINE = ("⏸️ Interrupted: the bot stopped while this run was under way. "
                    "Reply in this thread to continue from where it stopped.")


async def crash_during_tests(tmp_path, model_server, slack, docker_client, config, port) -> tuple[Message, int]:
    """A serve process killed (SIGKILL: no goodbye) while its run's tests run in Docker."""
    bot = await start_serve(tmp_path, config, port)
    script_slow_team(model_server)
    mention = slack.say("C1", "UANN", f"<@{BOT_USER}> find all intf keys")
    await send(bot, mention, "app_mention", "Ev1")
    await running_container(docker_client, bot.proc.pid)
    bot.proc.kill()
    await exit_code(bot.proc)
    assert stop_button(slack.thread("C1", mention.ts)[0])  # nobody was told: the Stop button is still there
    return mention, bot.proc.pid


@pytest.mark.docker
async def test_after_a_crash_the_thread_shows_the_run_interrupted_and_a_reply_continues(
        tmp_path, model_server, docker_client):
    async with FakeSlack() as slack:
        port = free_port()
        config = write_config(tmp_path, model_server, slack, port)
        mention, dead_pid = await crash_during_tests(tmp_path, model_server, slack, docker_client, config, port)

        bot = await start_serve(tmp_path, config, port)
        thread = await slack.wait_for(
            lambda: (t := slack.thread("C1", mention.ts)) and t[-1].text.startswith(INTERRUPTED_LINE) and t,
            within=WAIT_S)
        assert thread[0].text.startswith("⏸️ *Interrupted*") and stop_button(thread[0]) is None
        # The steps the status message showed before the crash are still there; the one cut short says so.
        assert "✅ Plan — language: python" in thread[0].text.splitlines()
        assert "⏹️ Tests · round 1" in thread[0].text.splitlines()
        await slack.wait_for(lambda: not containers_of(docker_client, dead_pid), within=WAIT_S)  # reaped at start

        for role, replies in s.happy_path().items():
            model_server.script(role, *replies)
        await send(bot, slack.say("C1", "UANN", "carry on", thread_ts=mention.ts), "message", "Ev2")
        await slack.wait_for(lambda: any(m.text.startswith("✅ Passed:") for m in slack.thread("C1", mention.ts)),
                             within=WAIT_S)
        assert "def find_intf" in model_server.calls("planner")[-1].body["messages"][1]["content"]
        told = [m for m in slack.thread("C1", mention.ts) if m.text.startswith(INTERRUPTED_LINE)]
        bot.proc.send_signal(signal.SIGTERM)
        assert await exit_code(bot.proc) == 0

        bot = await start_serve(tmp_path, config, port)  # a second restart tells the thread nothing new
        bot.proc.send_signal(signal.SIGTERM)
        assert await exit_code(bot.proc) == 0
        assert [m for m in slack.thread("C1", mention.ts) if m.text.startswith(INTERRUPTED_LINE)] == told


@pytest.mark.docker
async def test_with_resume_interrupted_the_bot_continues_the_run_by_itself(tmp_path, model_server, docker_client):
    async with FakeSlack() as slack:
        port = free_port()
        config = write_config(tmp_path, model_server, slack, port)
        mention, _ = await crash_during_tests(tmp_path, model_server, slack, docker_client, config, port)

        config.write_text(config.read_text().replace("[runtime]\n", "[runtime]\nresume_interrupted = true\n"))
        for role, replies in s.happy_path().items():
            model_server.script(role, *replies)
        bot = await start_serve(tmp_path, config, port)
        await slack.wait_for(lambda: any(m.text.startswith("✅ Passed:") for m in slack.thread("C1", mention.ts)),
                             within=WAIT_S)
        texts = [m.text for m in slack.thread("C1", mention.ts)]
        assert any(t.startswith(INTERRUPTED_LINE) for t in texts)
        planner_prompt = model_server.calls("planner")[-1].body["messages"][1]["content"]
        assert "Resumed after a restart" in planner_prompt and "def find_intf" in planner_prompt
        bot.proc.send_signal(signal.SIGTERM)
        assert await exit_code(bot.proc) == 0
