"""Where the CPU of a run goes: the realistic five-fix-round run (``tests/fakes/durations_script.py``) with an
instant model streaming 64-character chunks, through the real Service, SQLite store and chat renderer (a thread
that keeps what it is sent, at a chat platform's pace), under cProfile.

    python -m benchmarks.stream_profile [--runs N] [--top N] [--interval S]

Prints the CPU per model call and the profile's top entries by own time; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import pstats
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.types import RunStatus
from bot.config.sections import Config, LimitsConfig, StorageConfig
from bot.runs.service import ChatRequest, Service
from bot.store.sqlite import SQLiteStore
from tests.fakes import durations_script as d
from tests.fakes.chat_thread import RecordingThread, platform
from tests.fakes.team_script import ScriptedModel, ScriptedSandbox

ROUNDS = 5


def verdict(job):  # type: ignore[no-untyped-def]
    from agents.types import TestReport, TestStatus

    if job.files.get("durations.py") == d.CODE:
        return TestReport(TestStatus.PASSED, 0, 0.1, 41, 0, "41 passed")
    return TestReport(TestStatus.FAILED, 1, 0.1, 40, 1, "FAILED test_durations.py::test_x - assert 1 == 2")


async def runs(count: int, interval_s: float) -> tuple[int, int]:
    """``count`` runs one after another; returns the model calls and the streamed chunks."""
    calls = chunks = 0
    with tempfile.TemporaryDirectory() as tmp:
        config = Config(storage=StorageConfig(path=str(Path(tmp) / "bench.sqlite3")),
                        limits=LimitsConfig(max_concurrent_runs=4, max_runs_per_user=4))
        store = await SQLiteStore.open(config.db_path())
        for i in range(count):
            model = ScriptedModel(d.fix_rounds(ROUNDS), chunk=64)
            service = Service(config, store, model, ScriptedSandbox(verdict))
            thread = RecordingThread()
            handle = await service._start(ChatRequest("bench", f"t{i}", "u", d.TASK), thread,
                                          platform(update_interval_s=interval_s))
            finished = await handle.wait()
            assert finished.status is RunStatus.PASSED, finished.reason
            calls, chunks = calls + len(model.calls), chunks + model.chunks_sent
            renderer = service._drawn.get(finished.run_id)
            if renderer is not None:
                await renderer[1].done()
        await store.close()
    return calls, chunks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--interval", type=float, default=1.0, help="the thread's edit pace in seconds (Slack: 1)")
    args = parser.parse_args()
    asyncio.run(runs(1, args.interval))  # warm: imports, the first SQLite file
    cpu, wall = time.process_time(), time.perf_counter()
    calls, chunks = asyncio.run(runs(args.runs, args.interval))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    print(f"{args.runs} runs, {calls} model calls, {chunks} chunks of 64 characters, edit pace {args.interval} s")
    print(f"CPU per model call {cpu / calls * 1000:.2f} ms   wall per model call {wall / calls * 1000:.2f} ms")
    profile = cProfile.Profile()
    profile.runcall(asyncio.run, runs(args.runs, args.interval))
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(args.top)
    print(out.getvalue())


if __name__ == "__main__":
    main()
