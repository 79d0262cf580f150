"""codegen-chat against AutoGen 0.7.5, side by side in one run, on the same work and the same scripted server.

    python -m benchmarks.autogen_bench [--runs N] [--chunk CHARS] [--profile FILE]

The work is the realistic five-fix-round run (``tests/fakes/durations_script.py``) and the model is instant,
streaming 64-character chunks as real servers send (``--chunk 4`` streams a token at a time;
``tests/fakes/openai_server.py``, on loopback in this process). Both teams are outside processes:
``codegen-chat run --json`` (``python -m codegen_chat``, as the installed command starts; its tests in the real
sandbox) and ``benchmarks/autogen_team.py`` (AutoGen's ``SelectorGroupChat`` with the same agents speaking in
the same order, chosen without a model call; its system prompts are codegen-chat's own, and each of codegen-chat's
test runs is posted to its chat, where it happened, by an agent that makes no model call). AutoGen comes from PyPI
(``autogen-agentchat`` and ``autogen-ext[openai]`` 0.7.5) into a virtualenv of the benchmark's own under
``~/.cache/codegen-chat-bench``, created on the first run; it is never a dependency of the product.

Measured per process:
- start-up: the process start to its first model request;
- orchestration CPU per model call: the process's CPU time after its first request, over its model calls
  (read from ``/proc`` at the first request and from the exit status at the end);
- orchestration wall per model call: from a reply's last byte to the next request, the median over the run
  (a median, so codegen-chat's six test runs in the sandbox, which AutoGen does not do, are left out);
- prompt characters sent, and the largest prompt against the first Programmer prompt.
Both sides run from compiled bytecode: pip compiled AutoGen's packages as it installed them, and the benchmark
compiles this checkout's (as its first run would, except where ``PYTHONDONTWRITEBYTECODE`` is set: then every run
compiled all its modules again, about 0.5 s of start-up and 6 ms per call on a 2-core machine).
Prints the figures and the ratios; asserts nothing about time.
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import itertools
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aiohttp import web

from tests.fakes import durations_script as d
from tests.fakes.openai_server import FakeOpenAI, Reply

ROOT = Path(__file__).resolve().parents[1]
AUTOGEN = ("autogen-agentchat==0.7.5", "autogen-ext[openai]==0.7.5")
VENV = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "codegen-chat-bench" / "autogen-0.7.5"
ROUNDS = 5
CHUNK = 64
TICKS = os.sysconf("SC_CLK_TCK")
PACKAGES = ("agents", "bot", "adapters", "codegen_chat", "prompts")  # pyproject.toml's


class TimedServer(FakeOpenAI):
    """The scripted server, noting when each request came and when its reply ended."""

    def __init__(self, chunk: int = CHUNK) -> None:
        super().__init__()
        self.chunk = chunk
        self.spans: list[tuple[float, float]] = []
        self.on_request: list[object] = []

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        started = time.perf_counter()
        for callback in self.on_request:
            callback()  # type: ignore[operator]
        response = await super()._completions(request)
        self.spans.append((started, time.perf_counter()))
        return response

    def script_run(self) -> None:
        for role, replies in d.fix_rounds(ROUNDS).items():
            self.script(role, *(Reply(text, chunk=self.chunk) for text in replies))


@dataclass
class Measured:
    startup_s: float = 0.0
    cpu_per_call_ms: float = 0.0
    threads_per_call_ms: float = 0.0  # of it, in threads other than the main one (Docker SDK, SQLite)
    wall_per_call_ms: float = 0.0
    calls: int = 0
    prompt_chars: int = 0
    instructions: int = 0  # of prompt_chars, the system prompts
    largest: int = 0
    first_programmer: int = 0
    order: list[str] = field(default_factory=list)
    system: dict[str, str] = field(default_factory=dict)
    tests: list[str] = field(default_factory=list)  # codegen-chat's test outputs, in order


def cpu_of(pid: int, task: int | None = None) -> float:
    """A live process's (or one of its threads') CPU seconds, user and system, from ``/proc``; 0 once gone."""
    where = f"/proc/{pid}/task/{task}/stat" if task else f"/proc/{pid}/stat"
    try:
        fields = Path(where).read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS


def thread_cpu(pid: int, seen: dict[int, float]) -> None:
    """The CPU of each of the process's threads so far, kept in ``seen`` (the last reading before it exits)."""
    try:
        tasks = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return
    for task in tasks:
        seen[task] = max(seen.get(task, 0.0), cpu_of(pid, task))


async def measure(server: TimedServer, argv: list[str], env: dict[str, str], cwd: str) -> Measured:
    """Run one team as a child process against ``server``; what it cost, from the server's records and ``/proc``."""
    before = len(server.requests)
    server.spans.clear()
    at_first: dict[str, float] = {}
    started = time.perf_counter()
    out = tempfile.TemporaryFile()  # read back only when the process failed
    process = subprocess.Popen(argv, env=env, cwd=cwd, stdout=out, stderr=subprocess.PIPE)  # noqa: ASYNC220  # starting does not wait

    def first_request() -> None:
        if not at_first:
            at_first["wall"], at_first["cpu"] = time.perf_counter() - started, cpu_of(process.pid)

    server.on_request[:] = [first_request]
    threads: dict[int, float] = {}
    while True:  # the server runs on this loop, so the child is polled; wait4 gives its CPU time as it is reaped
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)  # noqa: ASYNC222  # WNOHANG: never waits
        if pid:
            break
        thread_cpu(process.pid, threads)
        await asyncio.sleep(0.005)
    process.returncode = os.waitstatus_to_exitcode(status)
    server.on_request.clear()
    stderr = process.stderr.read().decode(errors="replace") if process.stderr else ""
    requests = server.requests[before:]
    if process.returncode != 0 or not requests:
        out.seek(0)
        said = out.read().decode(errors="replace")
        raise SystemExit(f"{argv[1:3]} failed ({process.returncode}):\n{stderr[-3000:]}\n{said[-1500:]}")
    out.close()
    spans = sorted(server.spans)
    gaps = [(nxt[0] - end) * 1000 for (_, end), nxt in itertools.pairwise(spans)]
    sizes = [(r.agent, r.prompt_chars) for r in requests]
    system: dict[str, str] = {}
    for r in requests:
        system.setdefault(r.agent, r.body["messages"][0]["content"])
    return Measured(
        startup_s=at_first["wall"],
        cpu_per_call_ms=(usage.ru_utime + usage.ru_stime - at_first["cpu"]) / len(requests) * 1000,
        threads_per_call_ms=sum(cpu for task, cpu in threads.items() if task != process.pid) / len(requests) * 1000,
        wall_per_call_ms=statistics.median(gaps) if gaps else 0.0,
        calls=len(requests), prompt_chars=sum(c for _, c in sizes), largest=max(c for _, c in sizes),
        instructions=sum(len(m.get("content") or "") for r in requests for m in r.body.get("messages", [])
                         if m.get("role") == "system"),
        first_programmer=next((c for a, c in sizes if a == "programmer"), 0),
        order=[a for a, _ in sizes], system=system)


def compile_checkout() -> None:
    """This checkout's packages compiled to bytecode, as an installed package's are (``pip install`` compiles them)."""
    for package in PACKAGES:
        compileall.compile_dir(ROOT / package, quiet=1)


def autogen_python() -> Path:
    """AutoGen's own virtualenv, made on the first run (PyPI, through pip)."""
    python = VENV / "bin" / "python"
    if not python.exists():
        print(f"installing {' and '.join(AUTOGEN)} into {VENV} (once)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *AUTOGEN], check=True)
    return python


async def codegen_chat(server: TimedServer, tmp: str, profile: str = "") -> Measured:
    tmp = tempfile.mkdtemp(dir=tmp)  # a store of its own: its turns and test runs are read back below
    config = Path(tmp) / "config.toml"
    config.write_text(f'[storage]\npath = "{tmp}/store.sqlite3"\n[sandbox]\nuse_offline_images = true\n'
                      f'[budget]\nmax_rounds = {ROUNDS + 1}\n')
    env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-bench", "CODEGEN_CONFIG": str(config),
           "PYTHONPATH": str(ROOT)}
    server.script_run()
    out = tempfile.mkdtemp(dir=tmp)
    command = [str(ROOT / "benchmarks" / "profiled_cli.py"), profile] if profile else ["-m", "codegen_chat"]
    measured = await measure(server, [sys.executable, *command, "run", d.TASK, "--json", "--out", out], env, tmp)
    measured.order, measured.tests = transcript(Path(tmp) / "store.sqlite3")
    return measured


def transcript(path: Path) -> tuple[list[str], list[str]]:
    """The run's speakers in order, "sandbox" where a test run reported, and each test run's output."""
    with sqlite3.connect(path) as db:
        turns = [(at, agent, "") for agent, at in db.execute("SELECT agent, started_at FROM turns")]
        tests = [(at, "sandbox", json.loads(body)) for body, at in
                 db.execute("SELECT body, at FROM notes WHERE kind = 'test_report'")]
    order = sorted(turns + tests, key=lambda item: item[0])
    return ([who for _, who, _ in order],
            [f"{body['stdout']}{body['stderr']}" for _, who, body in order if who == "sandbox"])


async def autogen(server: TimedServer, tmp: str, python: Path, ours: Measured) -> Measured:
    spec = Path(tmp) / "autogen.json"
    spec.write_text(json.dumps({"base_url": server.base_url, "task": d.TASK, "order": ours.order,
                                "system": ours.system, "tests": ours.tests}))
    server.script_run()
    return await measure(server, [str(python), str(ROOT / "benchmarks" / "autogen_team.py"), str(spec)],
                         {**os.environ, "PYTHONPATH": ""}, tmp)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="runs of each, taken in turn; the medians are shown")
    parser.add_argument("--chunk", type=int, default=CHUNK,
                        help=f"characters per streamed chunk (default {CHUNK}; a token at a time is about 4)")
    parser.add_argument("--profile", metavar="FILE", default=None, type=lambda path: str(Path(path).resolve()),
                        help="profile codegen-chat's process from its first request on (cProfile, written to FILE) in one "
                             "extra run, not measured")
    args = parser.parse_args()
    python = await asyncio.to_thread(autogen_python)
    await asyncio.to_thread(compile_checkout)
    ours: list[Measured] = []
    theirs: list[Measured] = []
    async with TimedServer(args.chunk) as server:
        with tempfile.TemporaryDirectory() as tmp:
            for _ in range(args.runs):
                ours.append(await codegen_chat(server, tmp))
                theirs.append(await autogen(server, tmp, python, ours[-1]))
            show(ours, theirs, args.chunk)
            if args.profile:
                await codegen_chat(server, tmp, args.profile)
                print(f"codegen-chat's profile from its first request on: {args.profile}")


def show(ours: list[Measured], theirs: list[Measured], chunk: int = CHUNK) -> None:
    def med(runs: list[Measured], name: str) -> float:
        return statistics.median(getattr(m, name) for m in runs)

    print(f"codegen-chat against AutoGen 0.7.5 (fixed order): the five-fix-round run, an instant model streaming "
          f"{chunk}-character chunks, medians of {len(ours)} runs each, taken in turn")
    print(f"  {'measure':<44}{'codegen-chat':>14}{'AutoGen':>14}{'ratio':>9}")
    rows = [("model calls", "calls", "{:.0f}"), ("prompt characters sent", "prompt_chars", "{:,.0f}"),
            ("  of it, instructions (system prompts)", "instructions", "{:,.0f}"),
            ("orchestration CPU per model call (ms)", "cpu_per_call_ms", "{:.1f}"),
            ("  of it in worker threads (ms)", "threads_per_call_ms", "{:.1f}"),
            ("orchestration wall per model call (ms)", "wall_per_call_ms", "{:.1f}"),
            ("start-up to the first request (s)", "startup_s", "{:.2f}")]
    for label, name, form in rows:
        a, b = med(ours, name), med(theirs, name)
        print(f"  {label:<44}{form.format(a):>14}{form.format(b):>14}{a / b if b else 0:>8.2f}x")
    material = med(ours, "prompt_chars") - med(ours, "instructions")
    print(f"  codegen-chat's prompts without their instructions (the task, plan, code, changes and failures alone): "
          f"{material:,.0f}, {material / med(theirs, 'prompt_chars'):.3f}x AutoGen's prompt characters")
    largest, first = med(ours, "largest"), med(ours, "first_programmer")
    print(f"  codegen-chat's largest prompt / its first Programmer prompt: {largest:,.0f} / {first:,.0f} "
          f"= {largest / first:.2f}x")
    print("  targets: CPU per call <= 1.00x, start-up <= 1.00x, prompt characters <= 0.10x, largest prompt <= 1.5x")


if __name__ == "__main__":
    asyncio.run(main())
