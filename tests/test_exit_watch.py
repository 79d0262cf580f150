"""A finished test run ends even when a test left something behind, and names what it was."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tests.exit_watch import GRACE_ENV, output_holders

ROOT = Path(__file__).resolve().parents[1]


def test_a_process_left_holding_the_output_is_found_and_one_that_is_not_is_left_alone():
    holding = subprocess.Popen(["sleep", "30"])  # inherits this process's stdout
    quiet = subprocess.Popen(["sleep", "30"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        found = {pid for pid, _ in output_holders()}
        assert holding.pid in found
        assert quiet.pid not in found
    finally:
        for process in (holding, quiet):
            process.kill()
            process.wait()


def test_a_run_whose_thread_never_ends_still_ends_with_its_own_status(tmp_path):
    (tmp_path / "test_stuck.py").write_text(textwrap.dedent("""
        import subprocess, threading

        def test_leaves_things_behind(capfd):
            threading.Thread(target=threading.Event().wait, name="stuck-worker").start()
            with capfd.disabled():  # what a process started while pytest reports would hold: the run's own output
                subprocess.Popen(["sleep", "600"])
    """))
    ended = subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.exit_watch", "-q", str(tmp_path)],
                           cwd=ROOT, env={"PATH": "/usr/bin:/bin", GRACE_ENV: "2", "PYTHONPATH": str(ROOT)},
                           capture_output=True, text=True, timeout=120)
    assert ended.returncode == 0, ended.stdout + ended.stderr
    assert "1 passed" in ended.stdout
    assert "sleep 600" in ended.stderr and "threads still running as the run ends: stuck-worker" in ended.stderr
    assert "every thread's stack" in ended.stderr
