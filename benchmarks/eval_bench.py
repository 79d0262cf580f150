"""The eval's own cost: what the harness adds around each attempt it measures, and how many problems a
minute it gets through at concurrency 1, 4 and 8.

    python -m benchmarks.eval_bench [--problems N] [--no-docker]

1. Overhead: an instant in-process model and a sandbox double, so what is left is the eval's own work per
   attempt (starting it, driving the run, the results line written and synced, the progress line):
   the eval's wall time minus the time inside the attempts and their scoring.
2. Throughput: a model that answers every call in 1 s (in-process, simulated latency) and the real Docker
   sandbox (offline images), at concurrency 1, 4 and 8. The wall time of a problem at concurrency 1 is
   what the overhead of part 1 is compared with (target: under 5%).

Prints figures side by side; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.language import BUILT_IN
from agents.prompts import PromptBook
from agents.protocols import ChatModel, Sandbox
from bot.config.sections import Config, SandboxConfig
from bot.eval.attempts import Parts
from bot.eval.harness import run_eval, still_to_run
from bot.eval.jsonl_suite import read_jsonl_suite
from bot.eval.modes import parse_modes
from bot.eval.progress import Progress
from bot.eval.results import EvalFolder, Result
from bot.runs.service import team_settings
from bot.sandbox import DockerSandbox
from tests.eval.scripted import ContentSandbox, Kind, ScriptedEvalModel, ScriptedTeam, Spec, write_suite

MODES = "single,team"


def specs(count: int) -> list[Spec]:
    """Half right at once, half right after a failing test."""
    return [Spec(n, Kind.ONE_SHOT if n % 2 else Kind.AFTER_FAILURE) for n in range(1, count + 1)]


async def timed_eval(count: int, model_delay: float, sandbox: Sandbox, concurrency: int) -> tuple[float, list[Result]]:
    """Wall time of an eval of ``count`` problems in both modes, and its results."""
    chosen = specs(count)
    with tempfile.TemporaryDirectory() as tmp:
        suite = read_jsonl_suite(write_suite(Path(tmp) / "tasks.jsonl", chosen), BUILT_IN)
        model: ChatModel = ScriptedEvalModel(ScriptedTeam(chosen), delay=model_delay)
        parts = Parts(model, sandbox, PromptBook(), team_settings(Config()), {})
        folder = EvalFolder(Path(tmp) / "out")
        folder.path.mkdir()
        modes = parse_modes(MODES)
        units = still_to_run(suite.problems, modes, [])
        progress = Progress(io.StringIO(), [m.name for m in modes], len(units), [], live=False)
        started = time.perf_counter()
        await run_eval(units, parts, folder, concurrency, progress)
        elapsed = time.perf_counter() - started
        return elapsed, folder.read_results()


def own_time(elapsed: float, results: list[Result]) -> float:
    """The eval's own seconds: all of it but the attempts and their scoring (exact at concurrency 1)."""
    return elapsed - sum(r.wall_s + r.score_s for r in results)


async def overhead(count: int) -> float:
    await timed_eval(4, 0.0, ContentSandbox(), 1)  # warm up imports and templates
    elapsed, results = await timed_eval(count, 0.0, ContentSandbox(), 1)
    per_attempt = own_time(elapsed, results) / len(results)
    calls = statistics.fmean(r.model_calls for r in results)
    print(f"1. The eval's own time, instant model and sandbox double, {count} problems x {MODES}, concurrency 1")
    print(f"   per attempt: {1000 * per_attempt:.2f} ms   per problem ({len(MODES.split(','))} attempts): "
          f"{2000 * per_attempt:.2f} ms   (mean {calls:.1f} model calls an attempt)")
    return 2 * per_attempt


async def throughput(count: int, per_problem_overhead: float) -> None:
    config = SandboxConfig(use_offline_images=True, concurrency=8)
    print(f"\n2. Problems per minute, model answering in 1 s, real Docker sandbox, {count} problems x {MODES}")
    print("   concurrency   wall      problems/min   wall per problem (median, p90)   scoring run (median)")
    async with DockerSandbox(config) as sandbox:
        for concurrency in (1, 4, 8):
            elapsed, results = await timed_eval(count, 1.0, sandbox, concurrency)
            problems = {r.problem: 0.0 for r in results}
            for r in results:
                problems[r.problem] += r.wall_s + r.score_s
            walls = sorted(problems.values())
            p90 = walls[max(0, round(0.9 * len(walls)) - 1)]
            scoring = statistics.median(r.score_s for r in results)
            print(f"   {concurrency:>11}   {elapsed:6.1f}s   {60 * count / elapsed:12.1f}   "
                  f"{statistics.median(walls):10.1f}s ({p90:.1f}s){'':14}{scoring:.2f}s")
            if concurrency == 1:
                wall = elapsed / count
                own = own_time(elapsed, results) / count
                print(f"      a problem takes {wall:.1f}s; the eval's own time in it: measured here {1000 * own:.0f} ms, "
                      f"with the instant model {1000 * per_problem_overhead:.1f} ms = "
                      f"{100 * per_problem_overhead / wall:.2f}% of it (target < 5%)")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=8, help="problems in the Docker runs (default 8)")
    parser.add_argument("--no-docker", action="store_true", help="only the overhead, without the sandbox")
    args = parser.parse_args()
    print(f"codegen-chat eval benchmark, {time.strftime('%Y-%m-%d')}\n")
    per_problem = await overhead(100)
    if not args.no_docker:
        await throughput(args.problems, per_problem)


if __name__ == "__main__":
    asyncio.run(main())
