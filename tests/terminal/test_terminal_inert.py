"""Hostile text never drives the terminal: every control sequence from outside is shown escaped, in
``run`` (turn text, file names, notices, test output, check-in notes, the final reason) and ``history``;
only our own colours reach the terminal as escape sequences."""

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from adapters.terminal import Renderer, print_run, print_runs
from agents.events import CheckedIn, Notice, RunFinished, TestReported, TextDelta, TurnFinished, TurnStarted
from agents.types import CheckInResult, FileSet, RunStatus, TestReport, TestStatus, Usage
from bot.safety.inert import inert
from bot.safety.redact import Redactor
from bot.store.sqlite import SQLiteStore

ROOT = Path(__file__).resolve().parents[2]

HOSTILE = {
    "clear screen": "\x1b[2J\x1b[3J",
    "cursor move": "\x1b[1;1H\x1b[5A",
    "colour that hides text": "\x1b[8m\x1b[30;40m",
    "window title OSC 0": "\x1b]0;pwned\x07",
    "window title OSC 2": "\x1b]2;pwned\x1b\\",
    "OSC 8 link": "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\",
    "OSC 52 clipboard": "\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07",
    "DCS": "\x1bP+q544e\x1b\\",
    "8-bit CSI": "\x9b2J",
    "8-bit OSC": "\x9d0;pwned\x9c",
    "bare carriage return": "rm -rf ~\rls -l   ",
    "backspace": "evil\x08\x08\x08\x08safe",
    "bell and NUL": "\x07\x00",
    "bidi override": "access = 'user\u202e \u2066// admin\u2069\u2066'",
    "lone surrogate": "\udc9b2J",
}
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
OUR_COLOURS = re.compile(r"\x1b\[(?:0|1|2|31|32|33|36)m")


def assert_inert(text: str) -> None:
    """Nothing a terminal acts on but our own colour codes."""
    leftover = UNSAFE.findall(OUR_COLOURS.sub("", text))
    assert leftover == [], leftover


@pytest.mark.parametrize("kind", HOSTILE)
def test_each_kind_of_control_sequence_is_shown_escaped(kind):
    shown = inert(f"before {HOSTILE[kind]} after\n\tindented")
    assert_inert(shown)
    assert shown.startswith("before ") and shown.endswith(" after\n\tindented")  # text, newline and tab kept


def test_escapes_are_visible_and_windows_line_ends_are_quiet():
    assert inert("\x1b[2J") == "^[[2J" and inert("a\rb") == "a^Mb" and inert("\x9b") == "\\x9b"
    assert inert("\u202e") == "\\u202e" and inert("line\r\nnext") == "line\nnext"
    assert inert("ünïcødé and emoji 👨‍👩‍👧 stay") == "ünïcødé and emoji 👨‍👩‍👧 stay"


def hostile_run(payload: str) -> list:
    report = TestReport(TestStatus.FAILED, 1, 0.5, 1, 1, f"FAILED test_x.py {payload}", f"stderr {payload}")
    return [
        TurnStarted("r1", agent=f"programmer{payload}", round=1),
        TextDelta("r1", agent="programmer", text=f"Here {payload} is the"),
        TextDelta("r1", agent="programmer", text=f" code\nand {payload} more"),
        TurnFinished("r1", agent="programmer", round=1, text="",
                     files=FileSet({f"mod{payload}.py": "x = 1\n"}), usage=Usage(10, 20)),
        Notice("r1", f"Retrying {payload}"),
        TestReported("r1", round=1, language="python", report=report),
        CheckedIn("r1", result=CheckInResult(f"/tmp/out{payload}", "folder", note=f"not written: a{payload}")),
        RunFinished("r1", status=RunStatus.FAILED, reason=f"the budget {payload} ran out", report=report,
                     checkin=CheckInResult(f"https://gist.example/{payload}", "gist"), files=FileSet({"a.py": "x"})),
    ]


@pytest.mark.parametrize("color", [False, True])
@pytest.mark.parametrize("kind", HOSTILE)
async def test_run_output_is_inert_everywhere_model_text_appears(kind, color):
    out = io.StringIO()
    renderer = Renderer(out, color=color)
    events = hostile_run(HOSTILE[kind])
    for event in events:
        await renderer(event)
    out.write(renderer.summary(events[-1], Path("/tmp/out")))
    text = out.getvalue()
    assert_inert(text)
    assert "Here " in text and "the budget " in text and "Retrying " in text and "stderr " in text
    if color:
        assert "\x1b[1m── " in text and "\x1b[31mTests (python)" in text  # our own colours survive


async def test_history_is_inert_and_masks_secrets(tmp_path):
    payload = "".join(HOSTILE.values())
    store = await SQLiteStore.open(tmp_path / "db.sqlite3")
    conversation = await store.conversation("terminal", f"t{payload}")
    await store.create_run("r1", conversation, f"task {payload}", "ann", [])
    await store.record(TurnFinished("r1", agent="programmer", round=1, text=f"key sk-live-0123456789 {payload}",
                                    files=FileSet({f"f{payload}.py": "x"}), model=f"m{payload}"))
    await store.record(Notice("r1", f"note {payload}"))
    await store.record(RunFinished("r1", status=RunStatus.ERROR, reason=f"reason {payload}",
                                   checkin=CheckInResult(f"/out/{payload}", "folder")))
    record = await store.run("r1")
    runs = await store.runs()
    await store.close()
    out = io.StringIO()
    print_run(record, out=out, redact=Redactor(["sk-live-0123456789"]))
    print_runs(runs, tmp_path, out=out)
    text = out.getvalue()
    assert_inert(text)
    assert "key [redacted] " in text and "Task: task " in text and "note " in text and "reason " in text


def test_cli_history_of_a_hostile_run_prints_nothing_a_terminal_acts_on(tmp_path):
    db = tmp_path / "db.sqlite3"
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\npath = "{db}"\n')
    payload = "".join(v for v in HOSTILE.values() if "\udc9b" not in v)  # written to the script as text
    script = f"""
import asyncio, pathlib
from agents.events import TurnFinished, RunFinished
from agents.types import RunStatus
from bot.store.sqlite import SQLiteStore
async def main():
    store = await SQLiteStore.open(pathlib.Path({str(db)!r}))
    conversation = await store.conversation("terminal", "t")
    await store.create_run("r1", conversation, {payload!r} + "\\udc9b", "ann", [])
    await store.record(TurnFinished("r1", agent="planner", round=0, text={payload!r}))
    await store.record(RunFinished("r1", status=RunStatus.ERROR, reason={payload!r}))
    await store.close()
asyncio.run(main())
"""
    subprocess.run([sys.executable, "-c", script], cwd=ROOT, check=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT), "CODEGEN_CONFIG": str(config)}
    for args in (["history"], ["history", "r1"], ["history", "r2" + payload.replace("\x00", "")]):
        done = subprocess.run([sys.executable, "-m", "codegen_chat.cli", *args], cwd=tmp_path, env=env, capture_output=True)
        shown = done.stdout.decode("utf-8", "surrogateescape") + done.stderr.decode("utf-8", "surrogateescape")
        assert_inert(shown)
        assert "Traceback" not in shown and b"\x9b" not in done.stdout + done.stderr
