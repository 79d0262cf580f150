"""The results file survives what stops an eval: a line cut off mid-write is skipped, never glued to the
next one; progress says how far it got."""

import io
import json

from bot.eval.progress import Progress
from bot.eval.results import EvalFolder, EvalMeta, Result


async def test_a_line_cut_off_by_a_crash_is_skipped_and_the_next_lands_on_its_own(tmp_path):
    folder = EvalFolder(tmp_path)
    folder.write_meta(EvalMeta("s.jsonl", ("single",), ("a", "b", "c")))
    await folder.append(Result("a", "single", True, "1 passed, 0 failed", "answered"))
    whole = folder.results_path.read_text()
    folder.results_path.write_text(whole + whole[: len(whole) // 2])  # "b" was being written when the power went
    assert [r.problem for r in folder.read_results()] == ["a"]
    await folder.append(Result("c", "single", False, "0 passed, 1 failed", "answered", files={"c.py": "x = 1\n"}))
    assert [r.problem for r in folder.read_results()] == ["a", "c"]
    assert folder.read_results()[1].files == {"c.py": "x = 1\n"}
    lines = folder.results_path.read_text().splitlines()
    assert len(lines) == 3 and json.loads(lines[2])["problem"] == "c"


def test_the_meta_file_reads_back_what_was_written(tmp_path):
    folder = EvalFolder(tmp_path)
    meta = EvalMeta("humaneval", ("single", "team"), ("HumanEval/0",), 1, {"programmer": "m"}, "2025-01-01T00:00:00")
    folder.write_meta(meta)
    assert folder.read_meta() == meta and folder.exists()


def test_progress_on_a_terminal_redraws_one_line_with_each_modes_running_pass_rate():
    out = io.StringIO()
    earlier = [Result("a", "single", True, "", "answered")]
    progress = Progress(out, ["single", "team"], 4, earlier, live=True, clock=lambda: 75.0)
    progress.finished(Result("a", "team", False, "0 passed, 1 failed", "failed"))
    progress.close()
    drawn = out.getvalue()
    assert drawn.count("\r\x1b[K") == 2 and drawn.endswith("\n")
    last = drawn.rsplit("\r\x1b[K", 1)[1]
    assert last.startswith("████████████░░░░░░░░░░░░ 2/4") and "single 1/1 100%, team 0/1 0%" in last


def test_progress_in_a_log_writes_a_line_per_attempt():
    out = io.StringIO()
    progress = Progress(out, ["single"], 2, [], live=False)
    progress.finished(Result("p\x1b[2J", "single", False, "0 passed, 1 failed", "answered"))
    assert out.getvalue() == "1/2  p^[[2J single: failed (0 passed, 1 failed)  [single 0/1 0%]\n"


async def test_a_scoring_run_killed_from_outside_is_run_once_more():
    from agents.types import FileSet, TestReport, TestStatus
    from bot.eval.attempts import score
    from bot.eval.problems import Problem

    killed = TestReport(TestStatus.FAILED, 137, 1.0, 0, 1, stderr="[sandbox] killed (exit 137)")
    passed = TestReport(TestStatus.PASSED, 0, 1.0, 1, 0, "1 passed")

    class Sandbox:
        def __init__(self, *reports):
            self.reports, self.jobs = list(reports), []

        async def run(self, job):
            self.jobs.append(job)
            return self.reports.pop(0)

    problem = Problem("p", "python", "task", FileSet({"test_p.py": "from p import f\n"}))
    once = Sandbox(killed, passed)
    assert (await score(problem, FileSet({"p.py": "f = 1\n"}), once)).passed and len(once.jobs) == 2
    assert once.jobs[0].authoritative == ("test_p.py",) and set(once.jobs[0].files) == {"p.py", "test_p.py"}
    twice = Sandbox(killed, killed)
    result = await score(problem, FileSet({"p.py": "f = 1\n"}), twice)
    assert not result.passed and "killed (exit 137)" in result.output and len(twice.jobs) == 2
    nothing = Sandbox()
    assert (await score(problem, FileSet(), nothing)).summary == "no code to test" and nothing.jobs == []
