"""``codegen-chat run --json`` as a pipeline step reads it: JSON lines that match the documented schema, a result
line last, and the documented exit code for each way a run ends, each produced by a real run."""

from __future__ import annotations

import io
import json
from pathlib import Path

import jsonschema
import pytest

from adapters.terminal import TerminalRun, exit_codes, run_in_terminal
from bot.checkin import FolderPublisher
from bot.model.client import OpenAIChatModel
from bot.runs.service import Service
from bot.safety.redact import Redactor
from tests.conftest import with_changes
from tests.fakes import team_script as s
from tests.fakes.team_script import ScriptedSandbox
from tests.terminal.test_terminal import cli, script_team, write_config

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "run-events.schema.json").read_text())


def lines_of(text: str) -> list[dict]:
    lines = [json.loads(line) for line in text.splitlines()]
    for line in lines:
        jsonschema.validate(line, SCHEMA)
    return lines


async def run_json(config, secrets, store, tmp_path, redact=None):
    service = Service(config, store, OpenAIChatModel(config, secrets), ScriptedSandbox())
    out = io.StringIO()
    code = await run_in_terminal(service, TerminalRun("find all intf keys", [], str(tmp_path / "out"), None, True),
                                 FolderPublisher, 10_000, "session-1", out=out, redact=redact)
    return code, lines_of(out.getvalue())


async def test_a_passing_run_prints_each_event_then_the_result_as_json_lines(model_server, config, secrets, store,
                                                                              tmp_path):
    script_team(model_server)
    code, lines = await run_json(config, secrets, store, tmp_path)
    assert code == exit_codes.PASSED
    kinds = [line["type"] for line in lines]
    assert kinds[0] == "run_started" and kinds[-1] == "result" and kinds.count("result") == 1
    turns = [line for line in lines if line["type"] == "turn"]
    assert {t["agent"] for t in turns} >= {"planner", "programmer", "optimizer", "tester"}
    assert next(t for t in turns if t["agent"] == "programmer")["files"] == ["intf.py"]
    report = next(line for line in lines if line["type"] == "test_report")
    assert (report["status"], report["passed"], report["failed"]) == ("passed", 2, 0)
    result = lines[-1]
    assert result["status"] == "passed" and result["exit_code"] == 0 and result["tests"]["passed"] == 2
    assert result["checkin"]["kind"] == "folder" and result["files"] == ["intf.py"]
    assert result["usage"]["prompt_tokens"] > 0
    assert (tmp_path / "out" / "intf.py").exists()


async def test_secrets_are_masked_in_every_json_line(model_server, config, secrets, store, tmp_path):
    token = "ghp_" + "x" * 36
    script_team(model_server, planner=[s.PLAN + f"\nUse the token {token} to publish."])
    code, lines = await run_json(config, secrets, store, tmp_path, redact=Redactor([token]))
    assert token not in json.dumps(lines) and code == exit_codes.PASSED


@pytest.mark.parametrize("case, expected", [
    ("failed", exit_codes.TESTS_FAILED),
    ("limit", exit_codes.LIMIT),
])
async def test_each_ending_has_its_own_exit_code_in_the_result(model_server, config, secrets, store, tmp_path, case,
                                                                expected):
    config = with_changes(config, budget={"max_rounds": 1})
    if case == "failed":
        script_team(model_server, programmer=[s.BUGGY_CODE])
    else:  # the tests pass but the review never approves: its rounds run out
        script_team(model_server, optimizer=[s.CHANGES, s.CHANGES])
    code, lines = await run_json(config, secrets, store, tmp_path)
    assert code == expected and lines[-1]["exit_code"] == expected
    assert lines[-1]["status"] == {"failed": "failed", "limit": "stopped"}[case]


async def test_a_run_whose_sandbox_cannot_run_exits_3_with_its_reason(model_server, tmp_path):
    config = write_config(tmp_path, model_server.base_url)  # the sandbox is disabled in this config
    script_team(model_server)
    code, out, err = await cli(tmp_path, "run", "find all intf keys", "--json", "--out", "result", config=config)
    lines = lines_of(out)
    assert code == exit_codes.BROKE == lines[-1]["exit_code"]
    assert lines[-1]["status"] == "error" and "sandbox is disabled" in lines[-1]["reason"]


async def test_bad_input_exits_2_with_a_result_line_and_no_model_call(model_server, tmp_path):
    config = write_config(tmp_path, model_server.base_url)
    code, out, err = await cli(tmp_path, "run", "   ", "--json", config=config)
    lines = lines_of(out)
    assert code == exit_codes.BAD_INPUT and lines == [lines[-1]] and lines[-1]["status"] == "refused"
    assert "The task is empty" in lines[-1]["reason"] and "The task is empty" in err
    assert model_server.requests == []


async def test_the_result_line_has_the_same_keys_whether_the_run_ran_or_was_refused(model_server, tmp_path):
    """A pipeline reads ``result["usage"]`` or ``result["files"]`` the same way after any run: a refused one had
    only six of the keys."""
    config = write_config(tmp_path, model_server.base_url)
    script_team(model_server)
    _, ran, _ = await cli(tmp_path, "run", "find all intf keys", "--json", "--out", "result", config=config)
    _, refused, _ = await cli(tmp_path, "run", "   ", "--json", config=config)
    _, unparsed, _ = await cli(tmp_path, "run", "--json", config=config)
    ran_result, refused_result, unparsed_result = (lines_of(out)[-1] for out in (ran, refused, unparsed))
    assert ran_result["status"] == "error" and refused_result["status"] == unparsed_result["status"] == "refused"
    assert list(refused_result) == list(unparsed_result) == list(ran_result)
    assert refused_result["usage"] == {"prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0, "estimated": False}
    assert (refused_result["files"], refused_result["checkin"], refused_result["tests"]) == ([], None, None)


@pytest.mark.parametrize("stop", ["SIGTERM", "SIGHUP"])
async def test_a_run_the_machine_shuts_down_says_the_exit_code_the_process_ends_with(model_server, tmp_path, stop):
    import asyncio
    import os
    import signal
    import sys

    from tests.fakes.openai_server import Reply
    from tests.terminal.test_terminal import ROOT

    config = write_config(tmp_path, model_server.base_url)
    model_server.script("planner", Reply("Thinking very hard about this...", chunk=4, stall_after=8))
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "OPENAI_API_KEY": "sk-x", "PYTHONPATH": str(ROOT),
           "CODEGEN_CONFIG": str(config)}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "codegen_chat.cli", "run", "task", "--json",
                                                cwd=tmp_path, env=env, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE)
    await asyncio.wait_for(proc.stdout.readline(), 30)  # run_started: the run is under way
    while not model_server.requests:
        await asyncio.sleep(0.05)
    proc.send_signal(getattr(signal, stop))
    out, _ = await asyncio.wait_for(proc.communicate(), 30)
    lines = lines_of(out.decode())
    result = lines[-1]
    assert result["status"] == "stopped" and result["reason"] == "the bot was shut down"
    assert proc.returncode == 0 and result["exit_code"] == 0  # as documented: the run can be continued
    [planner] = [line for line in lines if line["type"] == "turn"]  # the reply the stop cut, and what it cost
    assert planner["cut_short"] and planner["usage"]["estimated"] and planner["usage"]["prompt_tokens"] > 0
    assert result["usage"]["prompt_tokens"] == planner["usage"]["prompt_tokens"]


async def test_with_stderr_closed_stdout_holds_the_json_lines_alone(model_server, tmp_path):
    import asyncio
    import os
    import sys

    from tests.terminal.test_terminal import ROOT

    config = write_config(tmp_path, model_server.base_url)
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "OPENAI_API_KEY": "sk-x", "PYTHONPATH": str(ROOT),
           "CODEGEN_CONFIG": str(config)}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "codegen_chat.cli", "run", "  ", "--json",
                                                cwd=tmp_path, env=env, stdout=asyncio.subprocess.PIPE,
                                                preexec_fn=lambda: os.close(2))  # as `2>&-` leaves it
    out, _ = await asyncio.wait_for(proc.communicate(), 30)
    (result,) = lines_of(out.decode())  # the one sentence for a person went nowhere, not before the JSON
    assert proc.returncode == 2 and result["status"] == "refused"


@pytest.mark.parametrize("args, reason", [
    (["run", "--json"], "codegen-chat run: the following arguments are required: task"),
    (["run", "a task", "--json", "--repo"], "codegen-chat run: argument --repo: expected one argument"),
    (["run", "a task", "--json", "--jsn"], "codegen-chat: unrecognized arguments: --jsn"),
])
async def test_a_command_line_the_parser_refuses_still_gives_the_pipeline_its_result_line(tmp_path, args, reason):
    code, out, err = await cli(tmp_path, *args)
    assert code == 2 and f"error: {reason.split(': ', 1)[1]}" in err  # the usage and the reason, as ever
    (result,) = lines_of(out)
    assert (result["status"], result["exit_code"], result["reason"]) == ("refused", 2, reason)


async def test_a_refused_command_line_without_json_prints_nothing_on_stdout(tmp_path):
    code, out, err = await cli(tmp_path, "history", "--limit", "0")
    assert code == 2 and out == "" and "argument --limit: must be between 1 and 100,000, got 0" in err


async def test_ctrl_c_before_the_run_starts_still_ends_with_a_result_line(model_server, tmp_path):
    """Ctrl-C while ``run - --json`` still waits for its task on a pipe: the pipeline gets its result line (stopped,
    130) as after any other ending, not an output that simply stops."""
    import asyncio
    import os
    import signal
    import sys

    from tests.terminal.test_terminal import ROOT

    config = write_config(tmp_path, model_server.base_url)
    reader, writer = os.pipe()  # a producer that has written nothing yet
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "codegen_chat.cli", "run", "-", "--json", cwd=tmp_path, stdin=reader,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
            env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), "OPENAI_API_KEY": "sk-x", "PYTHONPATH": str(ROOT),
                 "CODEGEN_CONFIG": str(config)})
        wchan = Path(f"/proc/{proc.pid}/wchan")
        while "pipe" not in await asyncio.to_thread(wchan.read_text):  # it waits in its read of the task
            await asyncio.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        out, _ = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        os.close(reader)
        os.close(writer)
    result = lines_of(out.decode())[-1]
    assert proc.returncode == exit_codes.CTRL_C == result["exit_code"]
    assert (result["status"], result["run_id"]) == ("stopped", "")
