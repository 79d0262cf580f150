"""Which image a run uses, and `sandbox build` on a machine no registry answers (real Docker).

The registry images here are named under ``.invalid``, a top-level domain that never resolves: the
same as a machine without registry access, wherever the tests run.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import sys
from pathlib import Path

import pytest

from agents.errors import SandboxError
from agents.types import TestJob, TestStatus
from bot.config.sections import Config
from bot.sandbox import DockerSandbox
from bot.sandbox.languages import DEFAULT_LANGUAGES, OFFLINE_ENV
from tests.sandbox.conftest import configured, engine_requests
from tests.sandbox.programs import PROGRAMS
from tests.sandbox.test_commands import invoke

pytestmark = pytest.mark.docker

NO_REGISTRY_GO = dataclasses.replace(DEFAULT_LANGUAGES["go"], image="registry.invalid/golang:1.23")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def no_offline_switch(monkeypatch):
    monkeypatch.delenv(OFFLINE_ENV, raising=False)


async def test_a_run_uses_the_offline_image_when_the_registrys_is_missing(docker_client):
    config = configured(use_offline_images=False, languages={"go": NO_REGISTRY_GO})
    async with DockerSandbox(config, client=docker_client) as sandbox:
        report = await sandbox.run(TestJob("go", PROGRAMS["go"].correct()))
        assert await sandbox.missing_images(["go"]) == []
    assert (report.status, report.passed) == (TestStatus.PASSED, 3), report.output()


async def test_build_without_a_registry_builds_offline_and_says_so(capsys):
    config = Config(sandbox=configured(use_offline_images=False, languages={"go": NO_REGISTRY_GO}))
    code = await invoke(config, "sandbox", "build", "--language", "go")
    err = capsys.readouterr().err
    assert code == 0, err
    assert "no registry answered for registry.invalid/golang:1.23" in err
    assert "building the offline images from Debian packages instead" in err
    assert f"{NO_REGISTRY_GO.offline_image} already present" in err


async def test_a_run_without_any_image_says_so_before_any_other_model_call(tmp_path, docker_client):
    nothing = "".join(f'[sandbox.languages.{name}]\nimage = "registry.invalid/{name}:1"\ntest_command = "true"\n'
                      for name in DEFAULT_LANGUAGES)
    config = tmp_path / "config.toml"
    # The model endpoint is a closed port: reaching it would fail with the model's error, not the sandbox's.
    config.write_text(f'[llm]\nbase_url = "http://127.0.0.1:9/v1"\nmax_retries = 0\n[storage]\n'
                      f'path = "{tmp_path / "db.sqlite3"}"\n{nothing}')
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "codegen_chat.cli", "run", "write a calculator", cwd=tmp_path,
        env={"PATH": os.environ["PATH"], "CODEGEN_CONFIG": str(config), "OPENAI_API_KEY": "sk-test",
             "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 3, (out, err)  # the run could not start: an error (docs/terminal.md)
    # The run ends as an error with that sentence, before any model call but the Planner's first.
    assert b"ERROR \xe2\x80\x94 no sandbox image is present: run `codegen-chat sandbox build` first" in out
    assert b"Traceback" not in err + out


async def test_ready_names_what_is_missing(docker_client):
    config = configured(languages={"go": dataclasses.replace(NO_REGISTRY_GO, offline_image="")})
    async with DockerSandbox(config, client=docker_client) as sandbox:
        await sandbox.ready()  # the others are there: a warning, not an error
        assert await sandbox.missing_images() == ["go"]
        with pytest.raises(SandboxError, match="no go sandbox image is present"):
            await sandbox.run(TestJob("go", PROGRAMS["go"].correct()))


async def test_every_languages_image_is_found_in_one_look_at_the_engines_list(docker_client, monkeypatch):
    # Each language named as Docker Hub would name it: the list shows it without the prefix, and runs use it.
    hub = {name: dataclasses.replace(language, offline_image=f"docker.io/{language.offline_image}")
           for name, language in DEFAULT_LANGUAGES.items()}
    gone = dataclasses.replace(NO_REGISTRY_GO, offline_image="codegen-chat-sandbox/none:bookworm")
    config = configured(use_offline_images=True, languages={**hub, "go": gone})
    async with DockerSandbox(config, client=docker_client) as sandbox:
        await sandbox.start()
        asked = engine_requests(docker_client, monkeypatch)
        assert await sandbox.missing_images() == ["go"]
        # One look at the list for all; the engine is asked only about the one language's last choice it lacks.
        assert asked == ["GET images/json", "GET images/codegen-chat-sandbox/none:bookworm/json"]
        asked.clear()
        assert await sandbox.missing_images() == ["go"]  # the next run's check: what was found is known
        assert asked == ["GET images/codegen-chat-sandbox/none:bookworm/json"]
        report = await sandbox.run(TestJob("python", PROGRAMS["python"].correct()))
    assert report.status is TestStatus.PASSED, report.output()
