"""Core benchmarks: orchestration overhead, prompt economy, wall time with a slow model, start-up, 50 runs at once.

    python -m benchmarks.core_bench [--no-slow]

Prints figures side by side; asserts nothing about time.

1. Overhead per turn: an instant in-process model and a sandbox double, so what is measured is the team's own
   machinery (workflow, prompts, parsing, events, SQLite store).
2. Prompt economy on a realistic five-fix-round run (``tests/fakes/durations_script.py``: a 1,200-character
   plan, a ~60-line module rewritten each round, ~40 pytest cases, reviews and triage of two or three
   sentences): prompt characters per role, the largest prompt against the first Programmer prompt, and a
   broadcast group chat (every agent gets the whole transcript, as AutoGen's SelectorGroupChat in fixed order)
   over the same turns. The tests run in the real sandbox when Docker answers, so the failing output is
   pytest's own.
3. Wall time with a slow model (a scripted OpenAI-compatible server that waits 0.5 s before the first token
   and streams 50 tokens a second, reached by the real client) on that script with 0, 1 and 5 fix rounds:
   ``order = "sequential"`` with whole files (one agent at a time, as before) against ``"overlapped"`` with whole
   files, and the default (overlapped, ``fix_replies = "auto"``) with a model whose diffs apply (the script's fixes
   are then diffs of the version before) and with one whose first diff does not.
4. ``codegen-chat run``: from the process start to the first model request, and which libraries it has
   imported by then.
5. 50 runs at once on one event loop.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.events import Event, RunFinished, TestReported, TurnFinished, TurnStarted
from agents.manager import Budget, FixReplies, Manager, Order, TeamSettings
from agents.prompts import PromptBook
from agents.protocols import Sandbox
from agents.run_request import RunRequest
from agents.types import Message, RunStatus, TestReport, TestStatus
from bot.config.sections import Config, LimitsConfig, LLMConfig, SandboxConfig, Secrets, StorageConfig
from bot.model.client import OpenAIChatModel
from bot.runs.service import ChatRequest, Service
from bot.store.sqlite import SQLiteStore
from tests.fakes import durations_script as d
from tests.fakes import team_script as s
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.publishers import RecordingPublisher
from tests.fakes.team_script import TEAM_DEFAULTS, ScriptedModel, ScriptedSandbox

SLOW_MODEL = (0.5, 50.0)  # seconds before the first token, tokens per second
ORDERS = (Order.SEQUENTIAL, Order.OVERLAPPED)
# The ways of working timed with the slow model, and how the scripted model writes its fixes in each: the old
# order (one agent at a time, whole files), the overlapped order with whole files, and today's default (overlapped,
# fixes asked as diffs) with a model whose diffs apply and with one whose first diff does not (it then fixes whole).
WAYS: dict[str, tuple[TeamSettings, dict[str, bool]]] = {
    "sequential": (TeamSettings(order=Order.SEQUENTIAL, fix_replies=FixReplies.WHOLE), {}),
    "overlapped": (TeamSettings(order=Order.OVERLAPPED, fix_replies=FixReplies.WHOLE), {}),
    "default": (TeamSettings(), {"diffs": True}),
    "no diffs": (TeamSettings(), {"failed_diff": True}),
}

# The same realistic run measured before prompts were made lean (commit 2d83ea5, 2026-12-01, real sandbox):
# pytest's long tracebacks, one agent at a time, the plan and the whole code and tests in most prompts.
BEFORE = dict(calls=20, ours=99_427, largest=9_554, first_programmer=1_932, broadcast=276_503,
              by_role={"planner": 722, "programmer": 37_347, "optimizer": 21_500, "tester": 3_967,
                       "manager": 34_013, "checkin": 1_878})


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def fix_rounds_script(rounds: int) -> dict[str, list[str]]:
    """The terse intf script: the code is wrong ``rounds`` times before it is right."""
    return {"planner": [s.PLAN], "programmer": [s.BUGGY_CODE] * rounds + [s.CODE],
            "optimizer": [s.APPROVE] * (rounds + 1), "manager": [s.FIX_CODE] * rounds,
            "tester": [s.TESTS], "checkin": [s.README]}


async def orchestration_overhead(runs: int = 30) -> None:
    """Per-turn time with an instant model and a no-op sandbox, store writes included."""
    with tempfile.TemporaryDirectory() as tmp:
        store = await SQLiteStore.open(Path(tmp) / "bench.sqlite3")
        prompts = PromptBook()
        per_turn: list[float] = []
        for i in range(runs):
            run_id = f"r{i}"
            await store.create_run(run_id, await store.conversation("bench", run_id), "task", "u", [])
            manager = Manager(ScriptedModel(fix_rounds_script(2)), ScriptedSandbox(), RecordingPublisher(), prompts,
                              TeamSettings(budget=Budget(max_rounds=5)))
            last = time.perf_counter()
            async for event in manager.run(RunRequest(task="find all intf keys", run_id=run_id)):
                await store.record(event)
                if isinstance(event, TurnFinished):
                    now = time.perf_counter()
                    per_turn.append((now - last) * 1000)  # prompt, stream, parse, events, SQLite writes
                    last = now
        await store.close()
    print("1. Orchestration overhead per agent turn (instant model, no-op sandbox, SQLite store)")
    print(f"  turns measured: {len(per_turn)}")
    print(f"  p50 {statistics.median(per_turn):.2f} ms   p90 {percentile(per_turn, 90):.2f} ms   "
          f"p99 {percentile(per_turn, 99):.2f} ms   (target p50 <= 5 ms)")


# -- the sandbox the realistic runs use ------------------------------------------------------------------


def docker_answers() -> bool:
    try:
        import docker

        client = docker.from_env(timeout=10)
        client.ping()
        client.close()
        return True
    except Exception:
        return False


class StandInSandbox(ScriptedSandbox):
    """Without Docker: the script's code passes when it is the right version, else one failing line."""

    def __init__(self) -> None:
        super().__init__(lambda job: TestReport(TestStatus.PASSED, 0, 0.1, 41, 0, "41 passed") if
                         job.files.get("durations.py") == d.CODE else
                         TestReport(TestStatus.FAILED, 1, 0.1, 40, 1, "FAILED test_durations.py::test_x - assert 1 == 2"))


def sandbox_factory(real: bool):  # type: ignore[no-untyped-def]
    """A fresh sandbox per run: Docker's (offline images), or the stand-in."""
    if not real:
        return StandInSandbox
    from bot.sandbox import DockerSandbox

    return lambda: DockerSandbox(SandboxConfig(use_offline_images=True))


async def closing(sandbox: Sandbox) -> None:
    close = getattr(sandbox, "close", None)
    if close is not None:
        await close()


# -- 2. prompt economy ---------------------------------------------------------------------------------


def broadcast_chars(events: list[Event], calls: list[tuple[str, list[Message]]], task: str) -> int:
    """A group chat's prompts over the same turns: each turn gets its system prompt, the task and every
    message so far (every agent's reply and every test report, posted to the chat as they happen)."""
    systems = iter(len(messages[0].content) for _, messages in calls)
    total, transcript = 0, len(task)
    for event in events:
        if isinstance(event, TurnStarted):
            total += next(systems) + transcript
        elif isinstance(event, TurnFinished):
            transcript += len(event.text)
        elif isinstance(event, TestReported):
            transcript += len(event.report.output())
    return total


@dataclasses.dataclass
class Economy:
    calls: int
    ours: int
    largest: int
    first_programmer: int
    broadcast: int
    by_role: dict[str, int]
    instructions: int | None = None  # of ``ours``, the system prompts (None: not recorded)


async def economy(order: Order, new_sandbox, rounds: int = 5) -> Economy:  # type: ignore[no-untyped-def]
    model = ScriptedModel(d.fix_rounds(rounds))  # instant; it keeps every call's messages
    sandbox = new_sandbox()
    try:
        manager = Manager(model, sandbox, RecordingPublisher(), PromptBook(),
                          TeamSettings(budget=Budget(max_rounds=rounds + 1), order=order))
        events = [e async for e in manager.run(RunRequest(task=d.TASK, run_id=f"economy-{order}"))]
    finally:
        await closing(sandbox)
    final = events[-1]
    assert isinstance(final, RunFinished) and final.status is RunStatus.PASSED, final
    sizes = model.prompts
    by_role: dict[str, int] = defaultdict(int)
    for role, chars in sizes:
        by_role[role] += chars
    instructions = sum(len(m.content) for _, messages in model.calls for m in messages if m.role == "system")
    return Economy(len(sizes), sum(c for _, c in sizes), max(c for _, c in sizes),
                   next(c for r, c in sizes if r == "programmer"), broadcast_chars(events, model.calls, d.TASK),
                   dict(by_role), instructions)


async def prompt_economy(real_sandbox: bool) -> None:
    factory = sandbox_factory(real_sandbox)
    measured = {order: await economy(order, factory) for order in ORDERS}
    where = "the real sandbox (pytest's own output)" if real_sandbox else "a stand-in sandbox (no Docker: one-line output)"
    print(f"\n2. Prompt economy: the realistic run with 5 fix rounds, tests in {where}")
    columns: list[tuple[str, Economy]] = [("before (recorded)", Economy(**BEFORE))] + [
        (f"now, {order}", measured[order]) for order in ORDERS]
    print("  " + " " * 34 + "".join(f"{name:>22}" for name, _ in columns))
    rows = [
        ("model calls", lambda e: f"{e.calls}"),
        ("prompt characters", lambda e: f"{e.ours:,}"),
        ("broadcast group chat, same turns", lambda e: f"{e.broadcast:,}"),
        ("ratio to the group chat (<= 0.25)", lambda e: f"{e.ours / e.broadcast:.2f}x"),
        ("  of it, instructions (system)", lambda e: "-" if e.instructions is None else f"{e.instructions:,}"),
        ("  without them, to the group chat", lambda e: "-" if e.instructions is None
         else f"{(e.ours - e.instructions) / e.broadcast:.3f}x"),
        ("largest prompt", lambda e: f"{e.largest:,}"),
        ("first Programmer prompt", lambda e: f"{e.first_programmer:,}"),
        ("largest / first Programmer (<= 1.5)", lambda e: f"{e.largest / e.first_programmer:.2f}x"),
        *[(f"  {role}", (lambda r: lambda e: f"{e.by_role.get(r, 0):,}")(role))
          for role in ("planner", "programmer", "optimizer", "tester", "manager", "checkin")],
    ]
    for label, cell in rows:
        print(f"  {label:<34}" + "".join(f"{cell(e):>22}" for _, e in columns))
    ten = await economy(Order.OVERLAPPED, factory, rounds=10)
    print(f"  the same run with 10 fix rounds, overlapped: largest prompt {ten.largest:,} "
          f"(with 5: {measured[Order.OVERLAPPED].largest:,}); prompt characters {ten.ours:,}, "
          f"{ten.ours / ten.broadcast:.2f}x the group chat's")


# -- 3. wall time with a slow model ---------------------------------------------------------------------


async def slow_run(server: FakeOpenAI, way: TeamSettings, writes: dict[str, bool], rounds: int,  # type: ignore[no-untyped-def]
                   new_sandbox) -> float:
    for role, replies in d.fix_rounds(rounds, **writes).items():
        server.script(role, *replies)
    config = Config(llm=LLMConfig(base_url=server.base_url, request_timeout_s=60.0))
    model = OpenAIChatModel(config, Secrets(openai_api_key="sk-bench"))
    sandbox = new_sandbox()
    try:
        manager = Manager(model, sandbox, RecordingPublisher(), PromptBook(),
                          dataclasses.replace(way, budget=Budget(max_rounds=rounds + 1)))
        started = time.perf_counter()
        events = [e async for e in manager.run(RunRequest(task=d.TASK, run_id=f"slow-{way.order}-{rounds}"))]
        elapsed = time.perf_counter() - started
    finally:
        await closing(sandbox)
        await model.close()
    final = events[-1]
    assert isinstance(final, RunFinished) and final.status is RunStatus.PASSED, final.reason
    return elapsed


async def slow_model(real_sandbox: bool) -> None:
    factory = sandbox_factory(real_sandbox)
    print(f"\n3. Wall time with a slow model ({SLOW_MODEL[0]} s to the first token, {SLOW_MODEL[1]:.0f} tokens/s), "
          f"the realistic script, tests in {'the real sandbox' if real_sandbox else 'a stand-in sandbox'}")
    print("  (sequential: one agent at a time, whole files, as before; overlapped: today's order, whole files;")
    print("   default: overlapped, [team] fix_replies = \"auto\", a model whose diffs apply; no diffs: the same with a")
    print("   model whose first diff does not apply, so it fixes whole; ratios against sequential, target <= 0.6x)")
    print(f"  {'fix rounds':<12}" + "".join(f"{name:>14}" for name in WAYS)
          + "".join(f"{name + ' ratio':>18}" for name in list(WAYS)[1:]))
    async with FakeOpenAI(pace=SLOW_MODEL) as server:
        for rounds in (0, 1, 5):
            times = {name: await slow_run(server, way, writes, rounds, factory) for name, (way, writes) in WAYS.items()}
            seq = times["sequential"]
            print(f"  {rounds:<12}" + "".join(f"{t:>13.1f}s" for t in times.values())
                  + "".join(f"{times[name] / seq:>17.2f}x" for name in list(WAYS)[1:]))


# -- 4. start-up ---------------------------------------------------------------------------------------


async def startup(runs: int = 5) -> None:
    """``codegen-chat run``: the process start to the model's first request (the run is then stopped)."""
    times: list[float] = []
    async with FakeOpenAI() as server:
        with tempfile.TemporaryDirectory() as tmp:
            config = Path(tmp) / "config.toml"
            config.write_text(f'[storage]\npath = "{tmp}/store.sqlite3"\n[sandbox]\nuse_offline_images = true\n')
            env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-bench",
                   "CODEGEN_CONFIG": str(config)}
            for _ in range(runs):
                before = len(server.requests)
                started = time.perf_counter()
                process = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "codegen_chat", "run", "say hi", "--out", f"{tmp}/out",
                    env=env, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                while len(server.requests) == before and process.returncode is None:  # noqa: ASYNC110  # polls a child
                    await asyncio.sleep(0.002)
                times.append(time.perf_counter() - started)
                process.kill()
                await process.wait()
    probe = ("import sys, codegen_chat.cli; print(' '.join(sorted({m.split('.')[0] for m in sys.modules} "
             "& {'docker', 'github', 'slack_bolt', 'discord', 'openai'})))")
    probing = await asyncio.create_subprocess_exec(sys.executable, "-c", probe, stdout=subprocess.PIPE)
    imported = (await probing.communicate())[0].decode().strip()
    print(f"\n4. codegen-chat run: start to the first model request, median of {runs}: "
          f"{statistics.median(times):.2f} s (min {min(times):.2f} s)")
    print(f"  libraries imported with the command: {imported or '(none of docker, github, slack_bolt, discord, openai)'}")


# -- 5. runs at once ------------------------------------------------------------------------------------


async def concurrent_runs(count: int = 50, latency_s: float = 0.1) -> None:
    """``count`` runs on one event loop, each model call taking ``latency_s``: wall time and loop lag."""
    # As every command does once its start-up is over (``codegen_chat.cli._settle_heap``): what the process holds by
    # then, here what the sections before left too, is no run's, and the garbage collector stops scanning it. Without
    # it the collector's full passes over the earlier sections' objects paused the loop up to 140 ms.
    gc.collect()
    gc.freeze()
    with tempfile.TemporaryDirectory() as tmp:
        config = Config(storage=StorageConfig(path=str(Path(tmp) / "bench.sqlite3")),
                        limits=LimitsConfig(max_concurrent_runs=count, max_runs_per_user=count))
        store = await SQLiteStore.open(config.db_path())

        async def sink(event: Event) -> None:
            return None

        async def batch(n: int) -> float:
            service = Service(config, store, ScriptedModel(fallback=TEAM_DEFAULTS, delay=latency_s), ScriptedSandbox())
            started = time.perf_counter()
            handles = [await service.submit(ChatRequest("bench", f"{n}-{i}-{time.time_ns()}", "u", "find intf keys"),
                                            sink, RecordingPublisher()) for i in range(n)]
            finished = await asyncio.gather(*(h.wait() for h in handles))
            assert all(f.status is RunStatus.PASSED for f in finished), [f.reason for f in finished]
            return time.perf_counter() - started

        one = await batch(1)
        lags: list[float] = []
        stop = asyncio.Event()

        async def ticker() -> None:
            while not stop.is_set():
                before = time.perf_counter()
                await asyncio.sleep(0.01)
                lags.append((time.perf_counter() - before - 0.01) * 1000)

        watcher = asyncio.create_task(ticker())
        many = await batch(count)
        stop.set()
        await watcher
        await store.close()
    print(f"\n5. {count} concurrent runs on one event loop, {latency_s * 1000:.0f} ms per model call")
    print(f"  one run: {one:.2f} s   {count} runs: {many:.2f} s   ratio {many / one:.2f}x   (target <= 1.5x)")
    print(f"  event-loop lag p50 {statistics.median(lags):.1f} ms   p99 {percentile(lags, 99):.1f} ms   "
          f"max {max(lags):.1f} ms   (target p99 <= 50 ms)")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-slow", action="store_true", help="skip the slow-model runs (about 5 minutes)")
    args = parser.parse_args()
    real = await asyncio.to_thread(docker_answers)
    await orchestration_overhead()
    await prompt_economy(real)
    if not args.no_slow:
        await slow_model(real)
    await startup()
    await concurrent_runs()


if __name__ == "__main__":
    asyncio.run(main())
