"""The terminal as a user meets it: ``codegen-chat`` in a subprocess against the scripted model server,
and the renderer in-process for the full loop."""

import asyncio
import io
import json
import os
import signal
import sys
from pathlib import Path

import pytest

from adapters.terminal import TerminalRun, run_in_terminal
from agents.events import RunFinished
from agents.types import RunStatus
from bot.checkin import FolderPublisher
from bot.model.client import OpenAIChatModel
from bot.runs.service import Service
from tests.conftest import with_changes
from tests.fakes import team_script as s
from tests.fakes.openai_server import Reply, error
from tests.fakes.team_script import ScriptedSandbox

ROOT = Path(__file__).resolve().parents[2]


def write_config(tmp_path: Path, base_url: str, extra: str = "") -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        f'[llm]\nbase_url = "{base_url}"\nrequest_timeout_s = 5.0\nmax_retries = 1\nbackoff_s = 0.01\n'
        f'[storage]\npath = "{tmp_path / "db.sqlite3"}"\n[sandbox]\nenabled = false\n{extra}'
    )
    return path


async def cli(tmp_path: Path, *args: str, config: Path | None = None, key: str = "sk-test-0123456789abcdef",
              pids: list[int] | None = None, env_extra: dict[str, str] | None = None, stdin: bytes | None = None):
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "OPENAI_API_KEY": key, "NO_COLOR": "1",
           "PYTHONPATH": str(ROOT), **(env_extra or {})}
    if config:
        env["CODEGEN_CONFIG"] = str(config)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "codegen_chat.cli", *args, cwd=tmp_path, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        stdin=None if stdin is None else asyncio.subprocess.PIPE,
    )
    if pids is not None:
        pids.append(proc.pid)
    out, err = await asyncio.wait_for(proc.communicate(stdin), 60)
    return proc.returncode, out.decode(), err.decode()


def script_team(server, **overrides):
    for role, replies in {**s.happy_path(), **overrides}.items():
        server.script(role, *replies)


async def test_full_loop_in_the_terminal_streams_turns_tests_and_check_in(model_server, config, secrets, store, tmp_path):
    script_team(model_server, programmer=[s.BUGGY_CODE, s.CODE], optimizer=[s.APPROVE, s.APPROVE], manager=[s.FIX_CODE])
    service = Service(config, store, OpenAIChatModel(config, secrets), ScriptedSandbox())
    out = io.StringIO()
    status = await run_in_terminal(service, TerminalRun("find all intf keys", [], str(tmp_path / "out"), None),
                                   FolderPublisher, 10_000, "session-1", out=out)
    text = out.getvalue()
    assert status == 0
    headers = [line for line in text.splitlines() if line.startswith("── ")]
    # The Tester writes while the Programmer does, and the review runs beside the tests: each turn still
    # reads as one block under its own header, then the test result, then its triage.
    assert headers == ["── Planner (round 0)", "── Programmer (round 1)", "── Tester (round 1)",
                       "── Optimizer (review) (round 1)", "── Manager (triage) (round 1)", "── Programmer (round 2)",
                       "── Optimizer (review) (round 2)", "── Check-In (round 2)"]
    programmer, tester = text.split("── Programmer (round 1)")[1].split("── Tester (round 1)")
    assert "def find_intf" in programmer and "def test_nested" not in programmer and "def test_nested" in tester
    review = text.split("── Optimizer (review) (round 1)")[1].split("── Manager (triage)")[0]
    assert review.index("VERDICT: APPROVE") < review.index("Tests (python): 1 passed, 1 failed")
    assert "Tests (python): 2 passed, 0 failed" in text
    assert "files: intf.py (" in text and f"Checked in: {tmp_path / 'out'}" in text
    assert "PASSED — tests passed and the review approved" in text
    assert (tmp_path / "out" / "intf.py").exists() and (tmp_path / "out" / "test_intf.py").exists()


async def test_a_failing_run_exits_non_zero_and_still_saves_its_files(model_server, config, secrets, store, tmp_path):
    config = with_changes(config, budget={"max_rounds": 1})
    script_team(model_server, programmer=[s.BUGGY_CODE])
    service = Service(config, store, OpenAIChatModel(config, secrets), ScriptedSandbox())
    out = io.StringIO()
    status = await run_in_terminal(service, TerminalRun("find all intf keys", [], str(tmp_path / "out"), None),
                                   FolderPublisher, 10_000, "session-1", out=out)
    assert status == 1
    assert "FAILED — the team used all 1 rounds" in out.getvalue()
    assert "FAILED test_intf.py::test_nested" in out.getvalue()
    assert (tmp_path / "out" / "intf.py").exists()


async def test_a_run_its_budget_stopped_exits_4_not_the_ctrl_c_code(model_server, config, secrets, store, tmp_path):
    config = with_changes(config, budget={"max_rounds": 1})
    script_team(model_server, optimizer=[s.CHANGES, s.CHANGES])
    service = Service(config, store, OpenAIChatModel(config, secrets), ScriptedSandbox())
    out = io.StringIO()
    status = await run_in_terminal(service, TerminalRun("find all intf keys", [], str(tmp_path / "out"), None),
                                   FolderPublisher, 10_000, "session-1", out=out)
    # The tests pass (they ran beside the review) but the review never approves: stopped, not failed.
    assert "STOPPED — the team used all 1 rounds; the tests passed" in out.getvalue()
    assert status == 4  # a limit stopped it (adapters/terminal/exit_codes.py)


async def test_cli_run_end_to_end_with_history_and_continue(model_server, tmp_path):
    config = write_config(tmp_path, model_server.base_url)
    script_team(model_server)
    code, out, err = await cli(tmp_path, "run", "find all intf keys", "--out", "result", config=config)
    # The sandbox is disabled in this config, so the run stops at the Tester with a clear reason.
    assert code == 3, err  # a part the run needs failed
    assert "── Planner (round 0)" in out and "── Tester (round 1)" in out
    assert "ERROR — The tests were not run: the sandbox is disabled" in out
    assert (tmp_path / "result" / "intf.py").exists()  # what the team wrote is kept
    run_id = out.split("Run ", 1)[1].split(" ", 1)[0]

    code, listing, _ = await cli(tmp_path, "history", config=config)
    assert code == 0 and run_id in listing and "error" in listing and "find all intf keys" in listing
    code, transcript, _ = await cli(tmp_path, "history", run_id, config=config)
    assert code == 0 and "── planner" in transcript and "── programmer" in transcript
    assert "Status: error — The tests were not run" in transcript

    script_team(model_server)
    code, out, _ = await cli(tmp_path, "run", "now make it async", "--continue", run_id, config=config)
    planner_prompt = model_server.calls("planner")[-1].body["messages"][1]["content"]
    assert "find all intf keys" in planner_prompt and "def find_intf" in planner_prompt


@pytest.mark.parametrize("args, message", [
    (["run", ""], "The task is empty"),
    (["run", "x" * 20_001], "the limit is 20,000"),
    (["run", "task", "--file", "missing.py"], "Cannot read missing.py"),
    (["history", "nope"], "no run nope"),
    (["run", "task", "--continue", "nope"], "No run nope"),
])
async def test_bad_input_gets_one_clear_line(model_server, tmp_path, args, message):
    config = write_config(tmp_path, model_server.base_url)
    code, out, err = await cli(tmp_path, *args, config=config)
    assert code != 0 and message in err and "Traceback" not in err
    assert model_server.requests == []


async def test_binary_and_oversized_attachments_are_refused(model_server, tmp_path):
    config = write_config(tmp_path, model_server.base_url, "[input]\nmax_attachment_bytes = 100\n")
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02")
    (tmp_path / "big.py").write_text("x = 1\n" * 100)
    code, _, err = await cli(tmp_path, "run", "task", "--file", "blob.bin", config=config)
    assert code == 2 and "blob.bin looks like a binary file" in err
    code, _, err = await cli(tmp_path, "run", "task", "--file", "big.py", config=config)
    assert code == 2 and "big.py is 600 bytes; attachments are limited to 100 bytes" in err


async def test_a_bad_config_fails_at_start_naming_the_key(model_server, tmp_path):
    config = write_config(tmp_path, model_server.base_url, "[budget]\nmax_rounds = \"six\"\n")
    code, _, err = await cli(tmp_path, "history", config=config)
    assert code == 2 and "budget.max_rounds: expected a whole number, got a string" in err
    config.write_text("[budgets]\nmax_rounds = 3\n")
    code, _, err = await cli(tmp_path, "history", config=config)
    assert code == 2 and "budgets: unknown key" in err


@pytest.mark.parametrize("url, problem", [
    ("ftp://foo", "must be an http:// or https:// URL"), ("not a url", "must be an http:// or https:// URL"),
    ("http:///v1", "must name a host"),
    ("http://h:99999/v1", "must be an http:// or https:// URL with a host and, if any, a port"),
])
async def test_an_endpoint_url_that_could_never_answer_is_refused_before_the_run(model_server, tmp_path, url, problem):
    code, out, err = await cli(tmp_path, "run", "task", config=write_config(tmp_path, url))
    assert code == 2 and f"llm.base_url: {problem}" in err and len(err.splitlines()) == 1, err
    code, _, err = await cli(tmp_path, "run", "task", config=write_config(tmp_path, ""), env_extra={"OPENAI_BASE_URL": url})
    assert code == 2 and f"OPENAI_BASE_URL in the environment {problem}" in err and len(err.splitlines()) == 1, err
    code, listing, _ = await cli(tmp_path, "history", config=write_config(tmp_path, model_server.base_url))
    assert code == 0 and "task" not in listing  # no run was recorded
    assert model_server.requests == []


async def test_a_missing_api_key_is_named_when_the_endpoint_is_asked_for(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(f'[llm]\nprovider = "openai"\n[storage]\npath = "{tmp_path / "db.sqlite3"}"\n')
    code, _, err = await cli(tmp_path, "run", "task", config=config, key="")
    assert code == 2 and "OPENAI_API_KEY is not set" in err


async def test_doctor_reports_the_endpoint_and_models(model_server, tmp_path):
    config = write_config(tmp_path, model_server.base_url, '[agents.tester]\nmodel = "no-such-model"\n')
    code, out, _ = await cli(tmp_path, "doctor", config=config)
    assert "[ok  ] model endpoint" in out and "[ok  ] model gpt-4o-mini: available" in out
    assert "[FAIL] model no-such-model: not offered by the endpoint" in out
    assert code == 1


async def test_doctor_says_why_an_endpoint_did_not_answer_in_words(tmp_path):
    """It read "did not answer: Unreachable", the name of a class."""
    import socket

    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = write_config(tmp_path, f"http://127.0.0.1:{port}/v1")
    code, out, _ = await cli(tmp_path, "doctor", config=config)
    assert code == 1
    assert f"[FAIL] model endpoint: http://127.0.0.1:{port}/v1 did not answer: nothing accepts connections there\n" in out


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


async def test_ctrl_c_stops_the_run_and_records_it_stopped(model_server, tmp_path):

    config = write_config(tmp_path, model_server.base_url)
    model_server.script("planner", Reply("Thinking very hard about this...", chunk=4, stall_after=8))
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "OPENAI_API_KEY": "sk-x", "NO_COLOR": "1",
           "PYTHONPATH": str(ROOT), "CODEGEN_CONFIG": str(config)}
    # Ctrl-C as in a terminal, even when this suite itself was started in the background (SIGINT ignored).
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "codegen_chat.cli", "run", "task", cwd=tmp_path, env=env,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                preexec_fn=_default_sigint)
    while not model_server.requests:
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.3)
    proc.send_signal(2)
    out, _ = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 130 and "STOPPED — stopped on request" in out.decode()
    code, listing, _ = await cli(tmp_path, "history", config=config)
    assert "stopped" in listing
    assert await model_server.hung_up() == 1


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
async def test_a_stop_during_the_first_model_call_counts_the_tokens_it_spent(model_server, tmp_path, stop):
    config = write_config(tmp_path, model_server.base_url)
    model_server.script("planner", Reply("Reading the task closely.\nNow the plan", chunk=4, stall_after=32))
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "OPENAI_API_KEY": "sk-x", "NO_COLOR": "1",
           "PYTHONPATH": str(ROOT), "CODEGEN_CONFIG": str(config)}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "codegen_chat.cli", "run", "a task " * 40,
                                                cwd=tmp_path, env=env, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE, preexec_fn=_default_sigint)
    run_id = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode().split()[1]
    while b"Reading the task closely." not in await asyncio.wait_for(proc.stdout.readline(), 30):
        pass  # the Planner's reply has begun to stream
    proc.send_signal(stop)
    out, _ = await asyncio.wait_for(proc.communicate(), 30)
    _, transcript, _ = await cli(tmp_path, "history", run_id, config=config)
    for shown in (out.decode(), transcript):  # the summary, and the run as the store keeps it
        tokens = next(line for line in shown.splitlines() if line.startswith("Tokens: "))
        assert "(estimated)" in tokens, tokens
        counts = tokens[8:].split(" (estimated)")[0]
        prompt, reply = (int(part.split()[0].lstrip("~").replace(",", "")) for part in counts.split(" / "))
        assert prompt > 0 and reply > 0, tokens
    assert "Reading the task closely." in transcript  # the cut reply is kept with its turn


async def test_ctrl_c_before_any_test_run_still_saves_what_the_team_wrote(model_server, tmp_path):
    config = write_config(tmp_path, model_server.base_url)
    model_server.script("planner", s.PLAN)
    model_server.script("programmer", s.CODE)
    model_server.script("tester", Reply("Writing the tests now...", chunk=4, stall_after=8))  # still writing
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "OPENAI_API_KEY": "sk-x", "NO_COLOR": "1",
           "PYTHONPATH": str(ROOT), "CODEGEN_CONFIG": str(config)}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "codegen_chat.cli", "run", "task", "--out", "out",
                                                cwd=tmp_path, env=env, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE, preexec_fn=_default_sigint)
    run_id = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode().split()[1]
    transcript = ""
    while "Files: intf.py" not in transcript:  # the Programmer's turn has ended and its file is saved
        _, transcript, _ = await cli(tmp_path, "history", run_id, config=config)
    proc.send_signal(signal.SIGINT)
    out, _ = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 130 and "STOPPED — stopped on request" in out.decode()
    assert "Files: out" in out.decode()
    assert (tmp_path / "out" / "intf.py").read_text() == s.CODE.split("```python path=intf.py\n")[1].split("```")[0]


async def test_continue_waits_for_a_run_still_under_way_in_another_terminal(model_server, tmp_path):
    config = write_config(tmp_path, model_server.base_url)
    model_server.script("planner", Reply("Thinking very hard about this...", chunk=4, stall_after=8))
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "OPENAI_API_KEY": "sk-x", "NO_COLOR": "1",
           "PYTHONPATH": str(ROOT), "CODEGEN_CONFIG": str(config)}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "codegen_chat.cli", "run", "task", cwd=tmp_path,
                                                env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    run_id = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode().split()[1]
    code, _, err = await cli(tmp_path, "run", "now make it async", "--continue", run_id, config=config)
    assert code == 2 and f"Run {run_id} of that conversation is still under way (in another terminal)" in err
    assert len(model_server.requests) == 1  # the follow-up asked nothing
    proc.kill()  # a terminal closed without a word: the run is interrupted, and may be continued
    await proc.communicate()
    code, _, err = await cli(tmp_path, "run", "now make it async", "--continue", run_id, config=config)
    assert code != 2 and "still under way" not in err


async def test_continue_is_not_held_up_by_a_run_another_host_left_running(model_server, tmp_path):
    """A container since removed, or a home folder shared by two machines: that host's runs cannot be judged here."""
    import sqlite3

    config = write_config(tmp_path, model_server.base_url)
    model_server.script("planner", error(400, "refused"))
    code, out, _ = await cli(tmp_path, "run", "task", config=config)
    run_id = out.split()[1]
    with sqlite3.connect(tmp_path / "db.sqlite3") as db:  # as a run killed on another host leaves it
        db.execute("UPDATE runs SET status = 'running', owner = 'a-removed-container:42:1700000000' WHERE id = ?",
                   (run_id,))
    asked = len(model_server.calls("planner"))
    code, _, err = await cli(tmp_path, "run", "now make it async", "--continue", run_id, config=config)
    assert "still under way" not in err and len(model_server.calls("planner")) > asked, err


async def test_a_killed_run_is_marked_interrupted_at_the_next_start(model_server, tmp_path):

    config = write_config(tmp_path, model_server.base_url)
    model_server.script("planner", s.PLAN)
    model_server.script("programmer", Reply("Writing the code now...", chunk=4, stall_after=8))
    model_server.script("tester", Reply("Writing the tests now...", chunk=4, stall_after=8))  # beside it
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "OPENAI_API_KEY": "sk-x", "NO_COLOR": "1",
           "PYTHONPATH": str(ROOT), "CODEGEN_CONFIG": str(config)}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "codegen_chat.cli", "run", "task", cwd=tmp_path, env=env,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    while not model_server.calls("programmer"):
        await asyncio.sleep(0.05)
    proc.kill()
    await proc.wait()
    code, listing, _ = await cli(tmp_path, "history", config=config)
    assert code == 0 and "interrupted" in listing
    run_id = listing.splitlines()[1].split()[0]
    code, transcript, _ = await cli(tmp_path, "history", run_id, config=config)
    assert "Status: interrupted — the bot stopped while this run was under way" in transcript
    assert "── planner" in transcript and "LANGUAGE: python" in transcript  # the finished turn survived


async def test_a_secret_split_across_streamed_pieces_is_masked(tmp_path):
    from adapters.terminal import Renderer
    from agents.events import TextDelta, TurnFinished, TurnStarted
    from bot.safety.redact import Redactor

    out = io.StringIO()
    renderer = Renderer(out, color=False, redact=Redactor(["sk-live-0123456789"]))
    await renderer(TurnStarted("r1", agent="programmer", round=1))
    for piece in ["key = 'sk-live-01", "23456789'\nnext line", " and more"]:
        await renderer(TextDelta("r1", agent="programmer", text=piece))
    await renderer(TurnFinished("r1", agent="programmer", round=1, text=""))
    assert "sk-live" not in out.getvalue() and "key = '[redacted]'\nnext line and more\n" in out.getvalue()


async def test_text_streamed_a_character_at_a_time_comes_out_in_whole_lines_masked():
    from adapters.terminal import Renderer
    from agents.events import TextDelta, TurnFinished, TurnStarted
    from bot.safety.redact import Redactor

    text = "first\n\nkey = 'sk-live-0123456789' on a line\nlast, unended"
    out = io.StringIO()
    renderer = Renderer(out, color=False, redact=Redactor(["sk-live-0123456789"]))
    await renderer(TurnStarted("r1", agent="programmer", round=1))
    written = []
    for piece in text:
        await renderer(TextDelta("r1", agent="programmer", text=piece))
        written.append(out.getvalue())
    await renderer(TurnFinished("r1", agent="programmer", round=1, text=text))
    shown = out.getvalue()
    assert "first\n\nkey = '[redacted]' on a line\nlast, unended\n" in shown and "sk-live" not in shown
    assert all(w.endswith("\n") for w in written)  # never half a line


async def test_an_unfinished_turns_last_partial_line_stays_under_its_own_header():
    from adapters.terminal import Renderer
    from agents.events import TextDelta, TurnFinished, TurnStarted

    out = io.StringIO()
    renderer = Renderer(out, color=False)
    await renderer(TurnStarted("r1", agent="programmer", round=1))
    await renderer(TextDelta("r1", agent="programmer", text="Here it is.\n```python path=intf"))  # then cut off
    await renderer(TurnStarted("r1", agent="tester", round=1))
    await renderer(TextDelta("r1", agent="tester", text="```python path=test_intf.py\nfrom intf import"))
    await renderer(TurnFinished("r1", agent="tester", round=1, text=""))
    await renderer(TurnStarted("r1", agent="programmer", round=2))
    await renderer(TextDelta("r1", agent="programmer", text="still writing"))  # the run ends mid-line
    await renderer(RunFinished("r1", RunStatus.ERROR, "the model stopped"))
    assert out.getvalue().startswith(
        "\n── Programmer (round 1)\nHere it is.\n```python path=intf\n\n── Tester (round 1)\n"
        "```python path=test_intf.py\nfrom intf import\n")
    assert out.getvalue().endswith("── Programmer (round 2)\nstill writing\n")


async def test_files_saved_while_another_turn_streams_leave_its_lines_whole():
    from adapters.terminal import Renderer
    from agents.events import TextDelta, TurnFinished, TurnStarted, WorkSaved
    from agents.types import FileSet

    out = io.StringIO()
    renderer = Renderer(out, color=False)
    await renderer(TurnStarted("r1", agent="tester", round=1))
    await renderer(TextDelta("r1", agent="tester", text="```python path=test_intf"))
    # The Programmer, writing beside the Tester, saved its files now: nothing is drawn for that.
    await renderer(WorkSaved("r1", files=FileSet({"intf.py": "x = 1\n"}), tests=FileSet(), user_tests=FileSet()))
    await renderer(TextDelta("r1", agent="tester", text=".py\nfrom intf import x\n```"))
    await renderer(TurnFinished("r1", agent="tester", round=1, text=""))
    assert "\n```python path=test_intf.py\nfrom intf import x\n```\n" in out.getvalue()


async def test_run_dash_takes_the_task_piped_in(model_server, tmp_path):
    config = write_config(tmp_path, model_server.base_url)
    script_team(model_server)
    task = "Write find_intf(obj) — every 'intf' key, at any depth.\nKeep it short.\n"
    _, out, _ = await cli(tmp_path, "run", "-", config=config, stdin=task.encode())
    asked = "".join(m["content"] for m in model_server.calls("planner")[0].body["messages"])
    assert "Write find_intf(obj) — every 'intf' key, at any depth.\nKeep it short." in asked
    assert "── Planner (round 0)" in out  # the run went on (the sandbox is off in this config)


@pytest.mark.parametrize("piped, refusal", [
    (b"", "The task is empty"),
    (b"caf\xe9 au lait", "The task on standard input is not UTF-8 text (byte 0xe9 at offset 3); save it as UTF-8."),
    (b"x" * 100_001, "The task on standard input is longer than the limit of 20,000 characters"),
])
async def test_a_piped_task_that_cannot_be_one_is_refused_before_any_model_call(model_server, tmp_path, piped, refusal):
    config = write_config(tmp_path, model_server.base_url)
    code, out, err = await cli(tmp_path, "run", "-", "--json", config=config, stdin=piped)
    assert code == 2 and refusal in err and not model_server.requests
    assert json.loads(out)["status"] == "refused"


async def test_run_dash_with_nothing_piped_in_says_how_instead_of_waiting_for_the_keyboard(model_server, tmp_path):
    config = write_config(tmp_path, model_server.base_url)
    keyboard, terminal = os.openpty()
    try:
        done = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "codegen_chat.cli", "run", "-", cwd=tmp_path, stdin=terminal,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), "OPENAI_API_KEY": "sk-x", "PYTHONPATH": str(ROOT),
                 "CODEGEN_CONFIG": str(config)})
        _, err = await asyncio.wait_for(done.communicate(), 60)
    finally:
        os.close(keyboard)
        os.close(terminal)
    assert done.returncode == 2 and "nothing is piped in: codegen-chat run - < task.md" in err.decode()


async def test_run_dash_with_standard_input_closed_says_so_in_one_line(model_server, tmp_path):
    config = write_config(tmp_path, model_server.base_url)
    done = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "codegen_chat.cli", "run", "-", cwd=tmp_path, preexec_fn=lambda: os.close(0),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), "OPENAI_API_KEY": "sk-x", "PYTHONPATH": str(ROOT),
             "CODEGEN_CONFIG": str(config)})
    _, err = await asyncio.wait_for(done.communicate(), 60)
    assert done.returncode == 2 and err.decode().startswith("codegen-chat: run - reads the task from standard input")


async def test_output_whose_reader_went_away_costs_no_traceback_and_not_the_work(model_server, tmp_path):
    config = write_config(tmp_path, model_server.base_url)
    script_team(model_server)
    code, _, _ = await cli(tmp_path, "run", "the same run, read to its end", "--out", "earlier", config=config)
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "OPENAI_API_KEY": "sk-x", "NO_COLOR": "1",
           "PYTHONPATH": str(ROOT), "CODEGEN_CONFIG": str(config)}
    script_team(model_server)
    reader, writer = os.pipe()
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "codegen_chat.cli", "run", "find all intf keys",
                                                "--out", "out", cwd=tmp_path, env=env, stdout=writer,
                                                stderr=asyncio.subprocess.PIPE)
    os.close(writer)
    with os.fdopen(reader, "rb") as head:  # as `| head -1` reads: one line, then it is gone
        head.readline()
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert "Traceback" not in err.decode() and "failed on" not in err.decode()
    assert proc.returncode == code  # the run's own status, as with the reader there (here: the sandbox is off)
    _, listing, _ = await cli(tmp_path, "history", config=config)
    assert listing.splitlines()[1].split()[3] != "running"  # its end was recorded
    assert (tmp_path / "out" / "intf.py").exists()


async def test_a_huge_attachment_is_refused_without_reading_it_all(model_server, tmp_path):
    config = write_config(tmp_path, model_server.base_url, "[input]\nmax_attachment_bytes = 1000\n")
    (tmp_path / "big.py").write_text("x" * 1001)
    code, _, err = await cli(tmp_path, "run", "task", "--file", "big.py", config=config)
    assert code == 2 and "big.py is 1,001 bytes; attachments are limited to 1,000 bytes" in err
    code, _, err = await cli(tmp_path, "run", "task", "--file", str(tmp_path), config=config)
    assert code == 2 and "is a folder" in err


async def test_waiting_for_the_model_and_estimated_counts_are_shown_as_such():
    from adapters.terminal import Renderer
    from agents.events import RunFinished, TurnFinished, TurnStarted, Waiting
    from agents.types import RunStatus, Usage

    out = io.StringIO()
    renderer = Renderer(out, color=False)
    await renderer(TurnStarted("r1", agent="planner", round=0))
    await renderer(Waiting("r1", agent="planner", seconds=5))
    await renderer(TurnFinished("r1", agent="planner", round=0, text="plan", usage=Usage(1200, 34, estimated=True)))
    shown = out.getvalue()
    assert "… waiting for the model (5 s)" in shown and "[~1,200 in / ~34 out (estimated) tokens" in shown
    final = RunFinished("r1", status=RunStatus.PASSED, reason="ok", usage=Usage(10, 2) + Usage(1200, 34, estimated=True))
    assert "Tokens: ~1,210 in / ~36 out (estimated)" in renderer.summary(final, None)
    exact = RunFinished("r1", status=RunStatus.PASSED, reason="ok", usage=Usage(10, 2))
    assert "Tokens: 10 in / 2 out\n" in renderer.summary(exact, None) + "\n"


async def _cli_bytes(tmp_path, *args: bytes, config: Path, env_extra: dict[bytes, bytes] | None = None):
    env = {b"PATH": os.environb[b"PATH"], b"HOME": os.fsencode(tmp_path), b"OPENAI_API_KEY": b"sk-test-0123456789",
           b"PYTHONPATH": os.fsencode(ROOT), b"CODEGEN_CONFIG": os.fsencode(config), **(env_extra or {})}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "codegen_chat.cli", *args, cwd=tmp_path, env=env,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode, out.decode(), err.decode()


@pytest.mark.parametrize(("args", "words"), [
    ([b"run", b"write a parser for caf\xe9 menus"], "argument 2 (write a parser for caf\\xe9 menus) is not UTF-8 text: "
                                                    "byte 0xe9 at character 23 is not UTF-8; write it in UTF-8"),
    ([b"run", b"task", b"--file", b"\xff.py"], "argument 4 (\\xff.py) is not UTF-8 text: byte 0xff at character 1"),
    ([b"run", b"task", b"--continue", b"r\xc3"], "argument 4 (r\\xc3) is not UTF-8 text"),
    ([b"history", b"\x80"], "argument 2 (\\x80) is not UTF-8 text"),
    ([b"sandbox", b"run", b"--language", b"py\xfe", b"."], "argument 4 (py\\xfe) is not UTF-8 text"),
])
async def test_a_command_line_that_is_not_utf8_is_refused_in_one_line_before_anything(model_server, tmp_path, args,
                                                                                      words):
    config = write_config(tmp_path, model_server.base_url)
    code, out, err = await _cli_bytes(tmp_path, *args, config=config)
    assert code == 2 and err.startswith(f"codegen-chat: {words}") and err.count("\n") == 1, err
    assert model_server.requests == [] and not (tmp_path / "db.sqlite3").exists()


async def test_an_environment_secret_that_is_not_utf8_is_refused_in_one_line(model_server, tmp_path):
    config = write_config(tmp_path, model_server.base_url)
    code, _, err = await _cli_bytes(tmp_path, b"run", b"task", config=config,
                                    env_extra={b"OPENAI_API_KEY": b"sk-\xff-secret"})
    assert code == 2 and err == ("codegen-chat: OPENAI_API_KEY in the environment is not usable: byte 0xff at "
                                 "character 4 is not UTF-8; export it again as plain text\n")
    assert model_server.requests == []


async def test_run_json_refusing_a_command_line_that_is_not_utf8_still_prints_its_result_line(model_server, tmp_path):
    config = write_config(tmp_path, model_server.base_url)
    code, out, err = await _cli_bytes(tmp_path, b"run", b"caf\xe9", b"--json", config=config)
    assert code == 2 and err.startswith("codegen-chat: argument 2 (caf\\xe9) is not UTF-8 text")
    result = json.loads(out.splitlines()[-1])
    assert "argument 2" in json.dumps(result) and model_server.requests == []


@pytest.mark.parametrize("json_lines", [False, True])
async def test_a_run_that_ends_with_only_tests_written_saves_them_where_the_summary_says(model_server, tmp_path,
                                                                                          json_lines):
    # The Programmer's reply stops mid-way and the run ends in error after the Tester finished its tests.
    config = write_config(tmp_path, model_server.base_url).read_text().replace("request_timeout_s = 5.0",
                                                                                 "request_timeout_s = 1.0")
    (tmp_path / "config.toml").write_text(config.replace("max_retries = 1", "max_retries = 0"))
    script_team(model_server, programmer=[Reply(s.CODE, stall_after=30)])
    code, out, err = await cli(tmp_path, "run", "find all intf keys", "--out", "result",
                               *(["--json"] if json_lines else []), config=tmp_path / "config.toml")
    assert code == 3, err
    if json_lines:
        result = json.loads(out.splitlines()[-1])
        assert result["out_dir"] == "result" and result["test_files"] == ["test_intf.py"] and result["files"] == []
    else:
        assert "ERROR — The model stopped mid-reply for the programmer" in out and "\nFiles: result\n" in out
        assert "── Tester (round 1)\n```python path=test_intf.py\n" in out  # nothing of the Programmer's cut reply
    assert (tmp_path / "result" / "test_intf.py").read_text().startswith("from intf import find_intf")
    assert not (tmp_path / "result" / "intf.py").exists()
