"""`codegen-chat sandbox run|build` and the doctor checks, through the real argument parser."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import time

import pytest

from agents.types import FileSet, TestJob, TestStatus
from bot.config.sections import Config, LanguageConfig, SandboxConfig, Secrets
from bot.sandbox import DockerSandbox, sandbox_checks
from bot.sandbox.commands import register
from bot.sandbox.images import prepare_online
from bot.sandbox.languages import DEFAULT_LANGUAGES, prepared_tag
from tests.docker_support import TEST_CONFIG
from tests.sandbox.programs import PYTHON

PYTHON_LANGUAGE: LanguageConfig = DEFAULT_LANGUAGES["python"]


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="codegen-chat")
    register(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(argv)


async def invoke(config: Config, *argv: str) -> int:
    args = parse(*argv)
    return await args.handler(args, config, Secrets())


def write(folder, files: FileSet) -> None:
    for path, content in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(content)


def test_run_arguments_parse():
    args = parse("sandbox", "run", "--language", "go", "src", "--timeout", "30", "--json")
    assert (args.language, args.dir, args.timeout, args.json) == ("go", "src", 30.0, True)
    assert parse("sandbox", "build", "--offline", "--language", "c", "--language", "go").languages == ["c", "go"]


async def test_run_refuses_a_language_it_has_not_before_reading_the_folder(tmp_path, capsys):
    (tmp_path / "data.bin").write_bytes(b"\x00\xff")  # a file the folder's reading would name as skipped
    code = await invoke(Config(sandbox=TEST_CONFIG), "sandbox", "run", "--language", "cobol", str(tmp_path))
    assert code == 2
    assert capsys.readouterr().err == ("codegen-chat: no sandbox is configured for the language 'cobol' (known: bash, "
                                       "c, cpp, go, java, javascript, python, rust, typescript); add "
                                       "[sandbox.languages.cobol] to config.toml\n")


@pytest.mark.docker
async def test_run_prints_one_json_object_and_exits_0_when_passed(tmp_path, capsys):
    write(tmp_path, PYTHON.correct())
    code = await invoke(Config(sandbox=TEST_CONFIG), "sandbox", "run", "--language", "python", str(tmp_path),
                        "--json")
    result = json.loads(capsys.readouterr().out)
    assert code == 0
    assert set(result) == {"status", "exit_code", "duration_s", "passed", "failed", "stdout", "stderr",
                           "truncated"}
    assert (result["status"], result["passed"], result["failed"]) == ("passed", 3, 0)


@pytest.mark.docker
async def test_run_exits_1_on_failed_tests_and_shows_the_summary(tmp_path, capsys):
    write(tmp_path, PYTHON.buggy())
    code = await invoke(Config(sandbox=TEST_CONFIG), "sandbox", "run", "--language", "python", str(tmp_path))
    out = capsys.readouterr().out
    assert code == 1
    assert "2 passed, 1 failed" in out and "test_sub" in out


@pytest.mark.docker
async def test_run_uploads_nothing_through_links_and_names_what_it_skipped(tmp_path, capsys):
    outside = tmp_path / "outside.txt"
    outside.write_text("OUTSIDE-SECRET-c0ffee")
    folder = tmp_path / "project"
    folder.mkdir()
    write(folder, FileSet({"test_seen.py": "import os\n\ndef test_only_the_regular_file_arrived():\n"
                                         "    assert [(r, sorted(d), sorted(f)) for r, d, f in os.walk('.')] == "
                                         "[('.', [], ['test_seen.py'])]\n"}))
    (folder / "environ.txt").symlink_to("/proc/self/environ")
    (folder / "passwd.txt").symlink_to("/etc/passwd")
    (folder / "up.txt").symlink_to("../outside.txt")
    (folder / "linked").symlink_to(tmp_path, target_is_directory=True)
    os.mkfifo(folder / "pipe.txt")
    code = await invoke(Config(sandbox=TEST_CONFIG), "sandbox", "run", "--language", "python", str(folder),
                        "--json")
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert (code, result["status"], result["passed"]) == (0, "passed", 1)
    assert "OUTSIDE-SECRET" not in captured.out and "root:x:0:0" not in captured.out
    for name in ("environ.txt", "passwd.txt", "up.txt", "linked", "pipe.txt"):
        assert f"skipped {name}: " in captured.err


@pytest.mark.docker
async def test_run_exits_2_when_tests_cannot_run(tmp_path, capsys):
    code = await invoke(Config(sandbox=TEST_CONFIG), "sandbox", "run", "--language", "cobol", str(tmp_path))
    assert code == 2
    assert "no sandbox is configured for the language 'cobol'" in capsys.readouterr().err


@pytest.mark.docker
async def test_offline_build_skips_present_images(capsys):
    code = await invoke(Config(sandbox=TEST_CONFIG), "sandbox", "build", "--offline", "--language", "go")
    assert code == 0
    assert "already present" in capsys.readouterr().err


@pytest.mark.docker
async def test_prepared_image_bakes_its_step_in_and_is_used(docker_client):
    base = TEST_CONFIG.base_image
    # A step of its own (so a tag of its own): other checkouts on this engine run this test too.
    step = f"echo prepared > /etc/prepared # {os.getpid()}-{time.monotonic_ns()}"
    language = dataclasses.replace(PYTHON_LANGUAGE, image=base, image_prepare=step)
    tag = prepared_tag(language)
    try:
        await asyncio.to_thread(prepare_online, docker_client, "python", language, lambda _: None)
        config = dataclasses.replace(TEST_CONFIG, use_offline_images=False, languages={"python": language})
        async with DockerSandbox(config, client=docker_client) as sandbox:
            report = await sandbox.run(TestJob("python", FileSet({
                "test_p.py": "def test_p():\n    assert open('/etc/prepared').read() == 'prepared\\n'\n"})))
        assert report.status is TestStatus.PASSED, report.output()
    finally:
        docker_client.images.remove(tag, force=True)


@pytest.mark.docker
async def test_doctor_reports_engine_and_images(docker_client):
    results = await sandbox_checks(Config(sandbox=TEST_CONFIG), Secrets())
    by_name = {r.name: r for r in results}
    assert by_name["docker"].ok
    assert by_name["sandbox image: python"].ok and "present" in by_name["sandbox image: python"].detail


async def test_doctor_says_how_to_fix_an_unreachable_engine():
    config = Config(sandbox=SandboxConfig(docker_host="unix:///nonexistent/docker.sock"))
    [result] = await sandbox_checks(config, Secrets())
    assert not result.ok and result.required
    assert "not reachable" in result.detail and result.fix


@pytest.mark.docker
async def test_run_in_text_mode_shows_the_tests_terminal_control_codes_inert(tmp_path, capsys):
    """The code under test prints what a terminal would act on: a window title, a screen clear, a carriage
    return overwriting its line, an 8-bit CSI and a bidi override. Text mode shows them; JSON keeps them as data."""
    write(tmp_path, FileSet({"test_loud.py": (
        "def test_loud():\n"
        "    print('\\x1b]0;owned\\x07\\x1b[2J FAKE PASS\\rreal \\x9b31m \\u202eevil')\n"
        "    assert False\n")}))
    code = await invoke(Config(sandbox=TEST_CONFIG), "sandbox", "run", "--language", "python", str(tmp_path))
    out = capsys.readouterr().out
    assert code == 1 and "1 failed" in out
    assert not set(out) & {"\x1b", "\x07", "\r", "\x9b", "\u202e"}
    assert "^[]0;owned^G^[[2J FAKE PASS^Mreal \\x9b31m \\u202eevil" in out
    await invoke(Config(sandbox=TEST_CONFIG), "sandbox", "run", "--language", "python", str(tmp_path), "--json")
    assert "\x1b]0;owned" in json.loads(capsys.readouterr().out)["stdout"]
