"""/healthz and /readyz over real HTTP: ready when the store takes writes and Docker answers; not ready,
with the part named, when the engine is down in any of its ways or the store cannot take a write; the
model endpoint is never called by a probe."""

import asyncio
import contextlib
import json
import socket
import sqlite3
import subprocess

import aiohttp
import pytest
from aiohttp import web

from agents.errors import ModelError
from agents.types import Message
from bot.config.sections import ConfigError, SandboxConfig
from bot.health.checks import Health, ModelWatch
from bot.health.http import start_health_server
from bot.model.client import OpenAIChatModel
from tests.fakes import loopback
from tests.fakes.openai_server import error
from tests.terminal.test_terminal import cli, write_config


@contextlib.asynccontextmanager
async def endpoints(health: Health):
    runner = await start_health_server(health, "127.0.0.1", 0)
    port = runner.addresses[0][1]
    try:
        async with aiohttp.ClientSession(f"http://127.0.0.1:{port}") as session:
            yield session
    finally:
        await runner.cleanup()


async def probe(session: aiohttp.ClientSession, path: str = "/readyz") -> tuple[int, dict]:
    async with session.get(path) as response:
        return response.status, await response.json()


def no_sandbox() -> SandboxConfig:
    return SandboxConfig(enabled=False)


async def test_ready_when_the_store_takes_writes(store):
    async with endpoints(Health(store, no_sandbox(), ModelWatch())) as session:
        status, body = await probe(session)
        assert status == 200 and body["ready"] is True
        assert body["parts"]["store"] == {"ok": True, "detail": "writable", "required": True}
        assert body["parts"]["model"]["detail"] == "not called yet"
        assert await probe(session, "/healthz") == (200, {"alive": True})


@pytest.mark.docker
async def test_ready_when_docker_answers(store, docker_client):
    async with endpoints(Health(store, SandboxConfig(), ModelWatch())) as session:
        status, body = await probe(session)
    assert status == 200 and body["parts"]["docker"]["ok"] is True


# -- Docker down, each way an engine can be down --------------------------------------------------

async def _closed_port() -> str:
    server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()
    return f"tcp://127.0.0.1:{port}"


@contextlib.asynccontextmanager
async def failing_engine():
    """Something listening where the engine should be, answering every call with a 500."""
    async def broken(_: web.Request) -> web.Response:
        return web.json_response({"message": "engine broken"}, status=500)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", broken)
    runner, port = await loopback.start(app)
    try:
        yield f"tcp://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


@contextlib.asynccontextmanager
async def silent_engine():
    """Something that takes the connection and never answers."""
    held = []

    async def hold(reader, writer):
        held.append(writer)
        await asyncio.sleep(3600)

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    try:
        yield f"tcp://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    finally:
        for writer in held:
            writer.close()
        server.close()


@contextlib.asynccontextmanager
async def missing_socket(tmp_path):
    yield f"unix://{tmp_path}/no-docker.sock"


@pytest.mark.parametrize("engine", ["missing socket", "closed port", "answers 500", "never answers"])
async def test_not_ready_when_docker_is_down(store, tmp_path, engine):
    async with contextlib.AsyncExitStack() as stack:
        if engine == "missing socket":
            host = await stack.enter_async_context(missing_socket(tmp_path))
        elif engine == "closed port":
            host = await _closed_port()
        elif engine == "answers 500":
            host = await stack.enter_async_context(failing_engine())
        else:
            host = await stack.enter_async_context(silent_engine())
        health = Health(store, SandboxConfig(docker_host=host), ModelWatch())
        session = await stack.enter_async_context(endpoints(health))
        status, body = await probe(session)
        assert status == 503 and body["ready"] is False
        docker = body["parts"]["docker"]
        assert docker["ok"] is False and docker["required"] is True
        assert "Docker" in docker["detail"] and "Traceback" not in docker["detail"]
        assert body["parts"]["store"]["ok"] is True  # only the broken part is blamed
        assert await probe(session, "/healthz") == (200, {"alive": True})  # alive all the same


# -- the store cannot take a write ----------------------------------------------------------------

async def test_not_ready_while_another_writer_holds_the_database_then_ready_again(store):
    other = sqlite3.connect(store.path, isolation_level=None)
    try:
        async with endpoints(Health(store, no_sandbox(), ModelWatch())) as session:
            other.execute("BEGIN EXCLUSIVE")
            status, body = await probe(session)
            assert status == 503 and body["parts"]["store"]["ok"] is False
            assert "database" in body["parts"]["store"]["detail"]
            other.execute("ROLLBACK")
            status, body = await probe(session)
            assert status == 200 and body["parts"]["store"]["ok"] is True
    finally:
        other.close()


async def test_not_ready_while_the_database_files_refuse_writes_then_ready_again(store):
    files = [str(store.path), f"{store.path}-wal"]
    if subprocess.run(["chattr", "+i", *files], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not available here (needs root on a file system with the immutable flag)")
    try:
        async with endpoints(Health(store, no_sandbox(), ModelWatch())) as session:
            status, body = await probe(session)
            assert status == 503 and "takes no write" in body["parts"]["store"]["detail"]
            subprocess.run(["chattr", "-i", *files], check=True)
            status, body = await probe(session)
            assert status == 200
    finally:
        subprocess.run(["chattr", "-i", *files], capture_output=True)


# -- the model: the last answer of a real call, never a call per probe ----------------------------

async def test_the_model_part_shows_the_last_real_answer_and_probes_never_call_it(store, config, secrets, model_server):
    watch = ModelWatch()
    real = OpenAIChatModel(config, secrets)
    model = watch.watch(real)
    async with endpoints(Health(store, no_sandbox(), watch)) as session:
        model_server.script("planner", "a plan", error(401, "bad key"))
        for _ in range(3):
            await probe(session)
        assert model_server.requests == []

        pieces = [p async for p in model.stream("planner", [Message("user", "plan it")])]
        assert "a plan" in "".join(p for p in pieces if isinstance(p, str))
        status, body = await probe(session)
        assert body["parts"]["model"]["ok"] is True and body["parts"]["model"]["detail"].startswith("answered at")

        with pytest.raises(ModelError):
            _ = [p async for p in model.stream("planner", [Message("user", "plan it")])]
        status, body = await probe(session)
        assert body["parts"]["model"]["ok"] is False and "failed at" in body["parts"]["model"]["detail"]
        assert status == 200 and body["ready"] is True  # shown, but a bot out of rotation could never recover
        assert len(model_server.requests) == 2  # the two real calls; none from the probes
    await real.close()


# -- who is told what is wrong --------------------------------------------------------------------

def _address_of_this_machine_beyond_loopback() -> str:
    """One of this machine's own addresses that is not loopback (the one it would reach the world from)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe_socket:
        try:
            probe_socket.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the outgoing address
        except OSError:
            pytest.skip("this machine has no address beyond loopback")
        address = probe_socket.getsockname()[0]
    if address.startswith("127.") or address == "0.0.0.0":
        pytest.skip("this machine has no address beyond loopback")
    return address


async def test_a_probe_from_another_machine_learns_only_which_parts_are_fine(store):
    """The server faces a network (the image listens on 0.0.0.0): the Docker engine's address, the database's
    location and the model's failures are told only to a probe from this machine."""
    health = Health(store, SandboxConfig(docker_host=await _closed_port()), ModelWatch())
    outside = _address_of_this_machine_beyond_loopback()
    runner = await start_health_server(health, "0.0.0.0", 0)
    port = runner.addresses[0][1]
    try:
        async with aiohttp.ClientSession(f"http://{outside}:{port}") as session:
            status, body = await probe(session)
        assert status == 503 and body["ready"] is False
        assert body["parts"]["docker"] == {"ok": False, "required": True}
        assert body["parts"]["store"] == {"ok": True, "required": True}
        assert "127.0.0.1" not in json.dumps(body)
        async with aiohttp.ClientSession(f"http://127.0.0.1:{port}") as session:
            status, body = await probe(session)
        assert status == 503 and "Docker" in body["parts"]["docker"]["detail"]  # here, on this machine: the detail
        # A proxy on this machine passes on probes from anywhere: what it passes on is not this machine's own.
        for header in ("X-Forwarded-For", "Forwarded", "X-Real-IP"):
            async with aiohttp.ClientSession(f"http://127.0.0.1:{port}", headers={header: outside}) as session:
                status, body = await probe(session)
            assert status == 503 and body["parts"]["docker"] == {"ok": False, "required": True}, header
    finally:
        await runner.cleanup()


# -- the server and the `codegen-chat health` probe -----------------------------------------------

async def test_a_taken_port_is_one_clear_error(store):
    blocker = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = blocker.sockets[0].getsockname()[1]
    try:
        with pytest.raises(ConfigError, match=rf"runtime.health_port: cannot listen on 127.0.0.1:{port}"):
            await start_health_server(Health(store, no_sandbox(), ModelWatch()), "127.0.0.1", port)
    finally:
        blocker.close()


async def test_the_health_command_exits_0_when_ready_and_1_when_not(store, tmp_path, model_server):
    runner = await start_health_server(Health(store, no_sandbox(), ModelWatch()), "127.0.0.1", 0)
    port = runner.addresses[0][1]
    config = write_config(tmp_path, model_server.base_url, f"[runtime]\nhealth_host = \"0.0.0.0\"\nhealth_port = {port}\n")
    try:
        code, out, err = await cli(tmp_path, "health", config=config)
        assert code == 0, err
        assert '"ready": true' in out
        code, out, err = await cli(tmp_path, "health", "--alive", config=config)
        assert code == 0 and '"alive": true' in out
    finally:
        await runner.cleanup()
    code, out, err = await cli(tmp_path, "health", config=config)
    assert code == 1 and "no answer" in out and "is the bot running?" in out and "Traceback" not in out + err


# -- chat adapters: expected, connected, dropped -----------------------------------------------------

async def test_an_expected_adapter_keeps_the_bot_unready_until_it_connects_and_while_it_is_down(store):
    health = Health(store, no_sandbox())
    health.expect("slack", "discord")
    async with endpoints(health) as session:
        status, body = await probe(session)
        assert status == 503 and body["parts"]["slack"] == {"ok": False, "detail": "not connected yet",
                                                             "required": True}
        up = {"slack": True}

        async def discord_connected() -> bool:  # a client that can only tell asynchronously
            return True

        health.connection("slack", lambda: up["slack"])
        health.connection("discord", discord_connected)
        assert (await probe(session))[0] == 200
        up["slack"] = False  # the connection dropped
        status, body = await probe(session)
        assert status == 503 and body["parts"]["slack"]["detail"] == "disconnected"
        assert body["parts"]["discord"]["ok"] is True

        def broken() -> bool:
            raise RuntimeError("client in a bad state")

        health.connection("slack", broken)
        status, body = await probe(session)
        assert status == 503 and body["parts"]["slack"]["ok"] is False


def test_the_health_command_asks_slack_s_server_in_http_mode_the_web_chat_s_and_its_own_otherwise(config):
    from codegen_chat.health import health_url
    from tests.conftest import with_changes

    assert health_url(config) == "http://127.0.0.1:8080/readyz"
    assert health_url(with_changes(config, runtime={"health_host": "0.0.0.0", "health_port": 9100}),
                      "/healthz") == "http://127.0.0.1:9100/healthz"
    slack = with_changes(config, slack={"enabled": True, "mode": "http", "http_port": 3300})
    assert health_url(slack) == "http://127.0.0.1:3300/readyz"
    web = with_changes(config, web={"enabled": True, "host": "0.0.0.0", "port": 8400})
    assert health_url(web) == "http://127.0.0.1:8400/readyz"
    both = with_changes(slack, web={"enabled": True, "port": 8400})
    assert health_url(both) == "http://127.0.0.1:3300/readyz"  # one server carries them: Slack's
    with pytest.raises(ConfigError, match="health_port is 0"):
        health_url(with_changes(config, runtime={"health_port": 0}))
