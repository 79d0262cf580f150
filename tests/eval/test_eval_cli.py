"""``codegen-chat eval`` as a person runs it: what it refuses before any model is called, in one sentence."""

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from tests.eval.test_suites import GOOD

ROOT = Path(__file__).resolve().parents[2]


def eval_config(tmp_path: Path, base_url: str, extra: str = "") -> Path:
    path = tmp_path / "config.toml"
    path.write_text(f'[llm]\nbase_url = "{base_url}"\nrequest_timeout_s = 5.0\nmax_retries = 1\nbackoff_s = 0.01\n'
                    f'[budget]\nmax_rounds = 2\n[sandbox]\nuse_offline_images = true\n{extra}')
    return path


async def eval_cli(tmp_path: Path, *args: str, config: Path | None = None, key: str = "sk-test-0123456789abcdef",
                   wait_s: float = 60, started: list | None = None):
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
    if key:
        env["OPENAI_API_KEY"] = key
    if config:
        env["CODEGEN_CONFIG"] = str(config)
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "codegen_chat.cli", "eval", *args, cwd=tmp_path,
                                                env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                preexec_fn=_default_sigint)
    if started is not None:
        started.append(proc)
    out, err = await asyncio.wait_for(proc.communicate(), wait_s)
    return proc.returncode, out.decode(), err.decode()


def _default_sigint():
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def tasks(tmp_path, *lines):
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


@pytest.mark.parametrize(("args", "lines", "message"), [
    (["--suite", "nowhere.jsonl"], None, "No suite nowhere.jsonl: name `humaneval`, or the path of a JSONL file"),
    (["--suite", "/dev/null"], None, "/dev/null is a device, not a regular file; suites must be regular files."),
    (["--suite", "tasks.jsonl"], [GOOD, '{"id": "b",'], "tasks.jsonl line 2: not valid JSON"),
    (["--suite", "tasks.jsonl"], [{**GOOD, "language": "fortran"}], "tasks.jsonl line 1: the sandbox has no language 'fortran'"),
    (["--suite", "tasks.jsonl", "--modes", "single,committee"], [GOOD], "Unknown mode 'committee'; the modes are single, team"),
    ([], [GOOD], "Name a suite: --suite humaneval, or --suite FILE.jsonl"),
    (["--suite", "tasks.jsonl", "--out", "tasks.jsonl"], [GOOD], "tasks.jsonl is a file, not a folder"),
    (["--report", "nothing-here"], None, "nothing-here holds no eval (eval.json is missing)"),
    (["--suite", "tasks.jsonl", "--resume", "--out", "fresh"], [GOOD], "fresh holds no eval (eval.json is missing)"),
    # Text a strict encoder refuses, anywhere in a task line: refused here, not after the model was called.
    (["--suite", "tasks.jsonl"], [{**GOOD, "task": "Write slugify\ud800 in slug.py."}],
     "tasks.jsonl line 1: task is not all text (character 14 is half of a UTF-16 pair (U+D800)"),
    (["--suite", "tasks.jsonl"], [{**GOOD, "hidden_tests": {"test_slug.py": "def test_x():\n    assert '\udfff'\n"}}],
     "tasks.jsonl line 1: hidden_tests: 'test_slug.py' is not all text"),
    (["--suite", "tasks.jsonl"], [{**GOOD, "hidden_tests": {"test_\udc80.py": "def test_x(): pass\n"}}],
     "tasks.jsonl line 1: hidden_tests: 'test_\\udc80.py' is not all text"),
    (["--suite", "tasks.jsonl"], [{**GOOD, "id": "a\ud83d"}], "tasks.jsonl line 1: id is not all text"),
    (["--suite", "tasks.jsonl"], ["[" * 100_000], "tasks.jsonl line 1: not a task (arrays or objects nested deeper"),
    # A hidden test is a file a user gives: the same size limit, before any work.
    (["--suite", "tasks.jsonl"], [{**GOOD, "hidden_tests": {"test_slug.py": "# padding\n" * 2_500_000}}],
     "tasks.jsonl line 1: hidden test 'test_slug.py' is 25,000,000 bytes; the limit is 256,000"),
])
async def test_a_request_that_cannot_run_is_refused_in_one_line_before_any_model_call(
        tmp_path, model_server, args, lines, message):
    if lines:
        tasks(tmp_path, *lines)
    code, out, err = await eval_cli(tmp_path, *args, config=eval_config(tmp_path, model_server.base_url))
    assert code == 2, err
    assert err.startswith("codegen-chat: ") and message in err and err.count("\n") == 1
    assert "Traceback" not in err and model_server.requests == []


async def test_hidden_tests_that_leave_no_room_in_a_sandbox_job_are_refused(tmp_path, model_server):
    tasks(tmp_path, {**GOOD, "hidden_tests": {f"test_{i}.py": "#" * 900 for i in range(3)}})
    # eval_config's last table is [sandbox]
    config = eval_config(tmp_path, model_server.base_url, "max_upload_bytes = 2000\n[input]\nmax_attachment_bytes = 1000\n")
    code, _, err = await eval_cli(tmp_path, "--suite", "tasks.jsonl", config=config)
    assert code == 2 and "tasks.jsonl line 1: the hidden tests and starter files are 2,7" in err, err
    assert "sandbox.max_upload_bytes" in err and err.count("\n") == 1 and model_server.requests == []


async def test_no_model_configured_is_said_before_anything_runs(tmp_path):
    tasks(tmp_path, GOOD)
    config = tmp_path / "config.toml"
    config.write_text('[llm]\nprovider = "openai"\n[sandbox]\nuse_offline_images = true\n')
    code, out, err = await eval_cli(tmp_path, "--suite", "tasks.jsonl", config=config, key="")
    assert code == 2 and "OPENAI_API_KEY is not set: export it, or set OPENAI_BASE_URL" in err
    assert not (tmp_path / "eval.json").exists() and list(tmp_path.glob("eval-*")) == []


async def test_a_disabled_sandbox_is_refused_since_it_does_the_scoring(tmp_path, model_server):
    tasks(tmp_path, GOOD)
    config = eval_config(tmp_path, model_server.base_url).read_text().replace("use_offline_images = true", "enabled = false")
    (tmp_path / "config.toml").write_text(config)
    code, out, err = await eval_cli(tmp_path, "--suite", "tasks.jsonl", config=tmp_path / "config.toml")
    assert code == 2 and "The eval scores code in the sandbox, which is disabled" in err


async def test_the_help_lists_the_modes(tmp_path):
    code, out, err = await eval_cli(tmp_path, "--help")
    assert code == 0 and "single, team, team-no-review, team-1-round" in " ".join(out.split())
    assert "  team-no-review  the team without the Optimizer's review" in out


async def test_an_out_folder_holding_files_an_eval_writes_is_refused_and_left_as_it_was(tmp_path, model_server):
    tasks(tmp_path, GOOD)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "report.html").write_text("<p>my report</p>\n")
    (mine / "results.jsonl").write_text('{"mine": true}\n')
    code, _, err = await eval_cli(tmp_path, "--suite", "tasks.jsonl", "--out", "mine",
                                  config=eval_config(tmp_path, model_server.base_url))
    assert code == 2 and err == ("codegen-chat: mine already holds results.jsonl, report.html, which an eval writes; "
                                 "choose another --out (a new or empty folder).\n")
    assert (mine / "report.html").read_text() == "<p>my report</p>\n"
    assert (mine / "results.jsonl").read_text() == '{"mine": true}\n' and model_server.requests == []
