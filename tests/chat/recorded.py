"""A recorded run for the platforms' render tests: a scripted team whose first round fails with long test
output, then is fixed; and the checks of what a person reads in the thread it leaves."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence

from agents.types import TestJob, TestReport, TestStatus
from tests.fakes import team_script as s

NOISE = [f"tests/test_intf.py::test_case_{i} PASSED" + " " * 10 + f"[{i:3d}%]" for i in range(120)]
FAILING_OUTPUT = "\n".join([
    *NOISE[:60],
    "_________________________________ test_nested _________________________________",
    "    def test_nested():",
    ">       assert sorted(find_intf({\"a\": {\"intf\": 1}, \"intf\": 2})) == [(\"intf\", 1), (\"intf\", 2)]",
    "E       AssertionError: assert [('intf', 2)] == [('intf', 1), ('intf', 2)]",
    *NOISE[60:],
    "FAILED test_intf.py::test_nested - AssertionError: assert [('intf', 2)] == [('intf', 1), ('intf', 2)]",
    "1 failed, 120 passed in 0.31s",
])
CONTROL_LINE = re.compile(r"^\W*(?:VERDICT|DECISION|LANGUAGE)\W*[:=]", re.I | re.M)
FENCED = re.compile(r"^```[^\n]*\n(.*?)\n```", re.M | re.S)


def script(server) -> None:
    """Plan; buggy code, approved; tests fail; triage: fix the code; fixed code, approved; tests pass."""
    for role, replies in {**s.happy_path(), "programmer": [s.BUGGY_CODE, s.CODE], "optimizer": [s.APPROVE, s.APPROVE],
                          "manager": [s.FIX_CODE]}.items():
        server.script(role, *replies)


def verdict(job: TestJob) -> TestReport:
    """The buggy code fails with long output; the fixed code passes."""
    if "found.extend(find_intf(value))" in job.files.get("intf.py", ""):
        return TestReport(TestStatus.PASSED, 0, 0.3, 121, 0, "121 passed in 0.30s")
    return TestReport(TestStatus.FAILED, 1, 0.3, 120, 1, FAILING_OUTPUT)


def check_readable(texts: list[str], test_report_prefix: str, plain: Callable[[str], str] = str) -> None:
    """What the thread shows reads as meant: code captioned with its file, no line meant for the workflow
    shown raw, badges instead, and the failing output cut on whole lines with the failure first. ``plain``:
    the text a platform's escaping stands for (Slack writes ``>`` as ``&gt;``)."""
    joined = "\n".join(texts)
    assert "📄 `intf.py`" in joined and "📄 `test_intf.py`" in joined
    assert not CONTROL_LINE.search(joined), CONTROL_LINE.search(joined)
    assert "approves" in joined and "fix the code" in joined and "language: python" in joined
    [failing] = [t for t in texts if t.startswith(test_report_prefix) and "1 failed" in t.splitlines()[0]]
    excerpt = plain(FENCED.search(failing).group(1)).splitlines()
    output = FAILING_OUTPUT.splitlines()
    marker = next(line for line in excerpt if line.startswith("[…"))
    assert all(line in output for line in excerpt if line != marker)  # whole lines only
    failure = excerpt[: excerpt.index(marker)]  # the failing test, its failing line, its assertion, its name
    assert failure[0].startswith("____") and failure[1].startswith(">       assert sorted(find_intf(")
    assert "E       AssertionError" in failure[2] and failure[3].startswith("FAILED test_intf.py::test_nested")
    assert not any("PASSED" in line for line in excerpt)  # passing tests are noise here
    assert excerpt[-1] == output[-1] and marker.endswith("passing tests); the end of the output:]")


def write_transcript(messages: Sequence[tuple[str, Sequence[str]]], first: str = "") -> None:
    """The thread as a person reads it, one paragraph per message (its attached files' names after it), to
    the file ``CODEGEN_TRANSCRIPT`` names; nothing without it."""
    path = os.environ.get("CODEGEN_TRANSCRIPT")
    if not path:
        return
    shown = [f"{text}  [{', '.join(files)}]" if files else text for text, files in messages]
    with open(path, "w", encoding="utf-8") as out:
        out.write("\n\n".join([first, *shown] if first else shown) + "\n")
