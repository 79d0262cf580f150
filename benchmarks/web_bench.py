"""Web chat figures, printed (no assertions on time): 50 pages' live streams on one person's conversation list,
with 20 runs streaming at once.

The web chat runs as in production (uvicorn, the real service, store and run renderer) in a process of its
own, so the pages' work does not share its event loop; the model is an in-process stand-in whose Planner
streams one line per ``--tick`` seconds, each line carrying the time it was written (the monotonic clock is
the same in both processes). The pages are 50 streams (``/api/stream``) spread over the 20 conversations;
each notes when a line first reaches it. Measured:

- token to page: a line written by the model -> the line arriving in a page (the renderer's throttle,
  ``--update-interval``, included); target p99 <= 250 ms;
- the server's memory (resident set) idle, at its peak and at the end;
- the server's event-loop lag: how late a 50 ms timer fires while all of this goes on.

Run: python -m benchmarks.web_bench [--pages 50] [--runs 20] [--lines 150] [--tick 0.02] [--update-interval 0.1]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import re
import signal
import socket
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import aiohttp

from agents.types import Message, Usage
from tests.fakes import team_script as s

STAMP = re.compile(r"⏱ (\d+)")
LAG_EVERY_S = 0.05
FINISHED = {"passed", "failed", "stopped", "error", "interrupted"}


def percentile(values: Sequence[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))] if ordered else float("nan")


def line(name: str, values: Sequence[float], target_ms: float | None = None) -> str:
    p50, p99 = percentile(values, 50) * 1000, percentile(values, 99) * 1000
    verdict = "" if target_ms is None else ("  (target met)" if p99 <= target_ms else "  (TARGET MISSED)")
    return (f"{name:<26} p50 {p50:8.1f} ms   p99 {p99:8.1f} ms   max {max(values, default=0) * 1000:8.1f} ms"
            f"   n={len(values)}{verdict}")


# -- the server process -----------------------------------------------------------------------


class TickingModel:
    """A ``ChatModel`` whose Planner first streams ``lines`` stamped lines, ``tick`` seconds apart (after
    ``wait_s``, so the pages are watching), then every role answers from the happy-path script."""

    def __init__(self, lines: int, tick: float, wait_s: float) -> None:
        self.lines, self.tick, self.wait_s = lines, tick, wait_s

    def model_name(self, role: str) -> str:
        return "bench"

    async def stream(self, role: str, messages: Sequence[Message],
                     temperature: float | None = None) -> AsyncIterator[str | Usage]:
        if role == "planner":
            await asyncio.sleep(self.wait_s)
            for _ in range(self.lines):
                yield f"⏱ {time.monotonic_ns()}\n"
                await asyncio.sleep(self.tick)
        yield s.TEAM_DEFAULTS[role]
        yield Usage(1000, 200)


def rss_mb() -> float:
    for row in Path("/proc/self/status").read_text().splitlines():
        if row.startswith("VmRSS:"):
            return int(row.split()[1]) / 1024
    return float("nan")


async def serve(args: argparse.Namespace) -> None:
    import adapters.web
    from bot.config.sections import Config, LimitsConfig, Secrets, StorageConfig, WebConfig
    from bot.runs.service import Service
    from bot.safety.redact import Redactor
    from bot.store.sqlite import SQLiteStore
    from tests.fakes.team_script import ScriptedSandbox

    config = Config(
        storage=StorageConfig(path=str(Path(args.folder) / "bench.sqlite3")),
        limits=LimitsConfig(max_concurrent_runs=args.runs, max_runs_per_user=args.runs, max_queued_runs=1000,
                            max_queued_runs_per_user=1000),
        web=WebConfig(port=args.port, update_interval_s=args.update_interval),
    )
    secrets = Secrets(openai_api_key="sk-bench-0123456789")
    store = await SQLiteStore.open(config.db_path())
    service = Service(config, store, TickingModel(args.lines, args.tick, args.wait), ScriptedSandbox(delay=0.05),
                      redact=Redactor(secrets.values()))
    stopping = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stopping.set)
    lags: list[float] = []
    rss = {"idle": rss_mb(), "peak": 0.0}

    async def watch() -> None:
        while True:
            before = time.monotonic()
            await asyncio.sleep(LAG_EVERY_S)
            lags.append(max(0.0, time.monotonic() - before - LAG_EVERY_S))
            rss["peak"] = max(rss["peak"], rss_mb())

    serving = asyncio.create_task(adapters.web.serve(service, config, secrets))
    await wait_listening(args.port)  # the lag of the work under load, not of starting up
    watching = asyncio.create_task(watch())
    await stopping.wait()
    rss["end"] = rss_mb()
    for task in (watching, serving):
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    await store.close()
    print(json.dumps({"lags": lags, "rss": rss}), flush=True)


# -- the pages --------------------------------------------------------------------------------


class PageStream:
    """One page's stream: when each stamped line first reached it, and whether its run has finished."""

    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.seen: set[int] = set()
        self.finished = asyncio.Event()
        self.connected = asyncio.Event()

    def take(self, op: dict) -> None:  # type: ignore[type-arg]
        now = time.monotonic_ns()
        texts = []
        if op["type"] == "snapshot":
            texts = [m["text"] for m in op["messages"]]
            self.connected.set()
        elif op["type"] == "message":
            texts = [op["message"]["text"]]
        elif op["type"] == "edit":
            texts = [op["text"]]
        for text in texts:
            for stamp in map(int, STAMP.findall(text)):
                if stamp not in self.seen:
                    self.seen.add(stamp)
                    if op["type"] != "snapshot":  # a line already there when the page connected says nothing
                        self.latencies.append((now - stamp) / 1e9)
        panel = op.get("panel") or {}
        if panel.get("status") in FINISHED:
            self.finished.set()


async def follow(session: aiohttp.ClientSession, url: str, key: str, page: PageStream) -> None:
    async with session.get(f"{url}/api/stream?c={key}", timeout=aiohttp.ClientTimeout(total=None)) as response:
        async for raw in response.content:
            if raw.startswith(b"data: "):
                page.take(json.loads(raw[6:]))
            if page.finished.is_set():
                return


async def wait_listening(port: int, within_s: float = 30.0) -> None:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            return
        except OSError:
            await asyncio.sleep(0.05)
    raise SystemExit("the web chat did not start")


async def bench(args: argparse.Namespace) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with tempfile.TemporaryDirectory() as folder:
        server = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "benchmarks.web_bench", "--serve", "--port", str(port), "--folder", folder,
            "--runs", str(args.runs), "--lines", str(args.lines), "--tick", str(args.tick),
            "--update-interval", str(args.update_interval), "--wait", str(args.wait),
            stdout=asyncio.subprocess.PIPE)
        try:
            await wait_listening(port)
            url = f"http://127.0.0.1:{port}"
            pages = [PageStream() for _ in range(args.pages)]
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
                keys = []
                for i in range(args.runs):
                    async with session.post(f"{url}/api/conversations", json={"task": f"find all intf keys ({i})"}) as r:
                        keys.append((await r.json())["conversation"])
                following = [asyncio.create_task(follow(session, url, keys[i % args.runs], page))
                             for i, page in enumerate(pages)]
                connected = time.monotonic()
                await asyncio.wait_for(asyncio.gather(*(p.connected.wait() for p in pages)), 60)
                connect_s = time.monotonic() - connected
                done, pending = await asyncio.wait(following, timeout=args.wait + args.lines * args.tick + 120)
                for task in pending:
                    task.cancel()
        finally:
            server.send_signal(signal.SIGTERM)
            out, _ = await server.communicate()
    figures = json.loads(out.decode().strip().splitlines()[-1])
    latencies = [x for p in pages for x in p.latencies]
    print(f"web chat: {args.pages} pages on {args.runs} live runs of one person's list; the Planner writes a line "
          f"every {args.tick * 1000:.0f} ms ({args.lines} per run); edits at most every "
          f"{args.update_interval * 1000:.0f} ms")
    print(f"{'pages connected':<26} all {args.pages} within {connect_s * 1000:.0f} ms; "
          f"{len(done)} followed their run to its end")
    print(line("token -> page", latencies, target_ms=250))
    print(line("server event-loop lag", figures["lags"]))
    rss = figures["rss"]
    print(f"{'server memory (RSS)':<26} idle {rss['idle']:.0f} MB   peak {rss['peak']:.0f} MB   end {rss['end']:.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=50)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--lines", type=int, default=150, help="stamped lines each run's Planner writes")
    parser.add_argument("--tick", type=float, default=0.02, help="seconds between two lines")
    parser.add_argument("--update-interval", type=float, default=0.1, help="[web] update_interval_s")
    parser.add_argument("--wait", type=float, default=2.0, help="seconds a Planner waits before writing")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)  # the server process
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--folder", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)  # the server's own "open http://..." line is not a figure
    asyncio.run(serve(args) if args.serve else bench(args))


if __name__ == "__main__":
    main()
