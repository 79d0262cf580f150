"""Sandbox figures, printed side by side (no assertions on time).

1. A trivial passing pytest suite: directly on the host vs through the sandbox, warm pool off and on,
   median of N runs each (the pool is refilled between runs, as it is between the team's turns; a used
   warm container is removed in the background, as in the bot).
2. 20 concurrent runs with a cap of 4: all complete, none fail, containers left at the end.
3. Peak memory of this process while a test prints 100 MB.

Run: python -m benchmarks.sandbox_bench [--runs 20] [--online]   (needs Docker and the images)
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import datetime
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import docker

from agents.types import FileSet, TestJob, TestStatus
from bot.config.sections import SandboxConfig
from bot.sandbox import DockerSandbox
from bot.sandbox.hardening import LABEL, LABEL_PID

SUITE = FileSet({
    "calc.py": "def add(a, b):\n    return a + b\n",
    "test_calc.py": "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n\n"
                    "def test_zero():\n    assert add(0, 0) == 0\n",
})
FLOOD = FileSet({"test_flood.sh": "head -c 104857600 /dev/zero | tr '\\0' 'x'\n"})


async def host_run(folder: Path, plugins: bool) -> float:
    # Without plugin autoload the host's pytest is as bare as the sandbox's: the fair baseline.
    env = {**os.environ, **({} if plugins else {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})}
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=folder, env=env,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
    if await process.wait() != 0:
        raise SystemExit("the suite failed on the host")
    return time.monotonic() - started


async def sandbox_run(sandbox: DockerSandbox) -> float:
    # Not timed: the background work of the previous run (removal, the pool's refill), as between turns.
    await sandbox.settle()
    started = time.monotonic()
    report = await sandbox.run(TestJob("python", SUITE))
    elapsed = time.monotonic() - started
    if report.status is not TestStatus.PASSED:
        raise SystemExit(f"the suite did not pass in the sandbox:\n{report.output()}")
    return elapsed


async def side_by_side(config: SandboxConfig, runs: int) -> dict[str, float]:
    """Medians of the four ways, taken in turn, so that the load of a shared machine falls on all alike."""
    times: dict[str, list[float]] = {name: [] for name in WAYS}
    pooled = dataclasses.replace(config, warm_pool=True, warm_pool_size=1)
    with tempfile.TemporaryDirectory() as folder:
        for path, content in SUITE.items():
            (Path(folder) / path).write_text(content)
        async with DockerSandbox(config) as cold, DockerSandbox(pooled) as warm:
            warm.warm("python")
            for _ in range(runs):
                times[WAYS[0]].append(await host_run(Path(folder), plugins=False))
                times[WAYS[1]].append(await host_run(Path(folder), plugins=True))
                times[WAYS[2]].append(await sandbox_run(cold))
                times[WAYS[3]].append(await sandbox_run(warm))
    return {name: statistics.median(values) for name, values in times.items()}


WAYS = ("host, bare pytest", "host, installed plugins", "sandbox, no warm pool", "sandbox, warm pool")


async def concurrent(config: SandboxConfig, count: int, cap: int) -> None:
    started = time.monotonic()
    async with DockerSandbox(dataclasses.replace(config, concurrency=cap)) as sandbox:
        reports = await asyncio.gather(*(sandbox.run(TestJob("python", SUITE)) for _ in range(count)))
        peak = sandbox.peak_active
    elapsed = time.monotonic() - started
    passed = sum(r.status is TestStatus.PASSED for r in reports)
    mine = {"label": [f"{LABEL}=1", f"{LABEL_PID}={os.getpid()}"]}  # not other processes' on the same engine
    left = len(docker.from_env().containers.list(all=True, sparse=True, filters=mine))
    print(f"{count} concurrent runs, cap {cap}: {passed}/{count} passed, peak running {peak}, "
          f"{elapsed:.1f}s total, sandbox containers left: {left}")


async def flood_memory(config: SandboxConfig) -> None:
    samples: list[int] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            samples.append(_rss_kib())
            time.sleep(0.005)

    baseline = _rss_kib()
    sampler = threading.Thread(target=sample)
    sampler.start()
    async with DockerSandbox(config) as sandbox:
        report = await sandbox.run(TestJob("bash", FLOOD))
    stop.set()
    sampler.join()
    print(f"100 MB printed: status {report.status}, truncated {report.truncated}, kept "
          f"{len(report.stdout) + len(report.stderr)} chars (cap {config.max_output_bytes} bytes); "
          f"bot RSS {baseline / 1024:.1f} MiB before, peak {max(samples) / 1024:.1f} MiB "
          f"(+{(max(samples) - baseline) / 1024:.1f} MiB)")


def _rss_kib() -> int:
    for line in Path(f"/proc/{os.getpid()}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--online", action="store_true", help="use the configured images, not the offline ones")
    args = parser.parse_args()
    config = SandboxConfig(use_offline_images=not args.online)
    await flood_memory(config)  # first, so the peak is not hidden by the later phases
    medians = await side_by_side(config, args.runs)
    host = medians[WAYS[0]]
    print(f"trivial pytest suite, median of {args.runs}, the four taken in turn (ratio to the bare host run), "
          f"{datetime.date.today()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}:")
    for name, seconds in medians.items():
        print(f"  {name:<28}{seconds * 1000:8.0f} ms   {seconds / host:.2f}x")
    await concurrent(config, count=20, cap=4)


if __name__ == "__main__":
    asyncio.run(main())
