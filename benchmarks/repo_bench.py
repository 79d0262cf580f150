"""Mention to pull request on small and large repositories: what the team's first prompt costs, and how long
a person waits before the first model call, for a 50-file repository, a 1,000-file one and a 10,000-file /
~100 MB one.

The map has a fixed budget, so past it the prompt must not grow with the repository; the wait covers the
fetch of the tree (git over a loopback smart-HTTP server), the files the map shows and building the map. The
rest of the tree arrives in the background while the Planner writes, so its size is not in the wait.

    python benchmarks/repo_bench.py [--files 10000] [--file-bytes 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import string
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.types import Message, Usage
from bot.config.sections import BudgetConfig, CheckinConfig, Config, ReposConfig, RepoSettings
from bot.repos.desk import RepoDesk
from bot.runs.service import ChatRequest, Service
from bot.store.sqlite import SQLiteStore
from tests.fakes.git_server import FakeGitHost
from tests.fakes.github_server import FakeGitHub
from tests.fakes.team_script import ScriptedModel, ScriptedSandbox
from tests.repos.fixtures import PYTHON_PROJECT, make_repo

TOKEN = "ghp_bench_token"


class FirstCall(ScriptedModel):
    """The scripted team, noting when the first model call came and how long its prompt was."""

    first_at: float | None = None
    first_chars = 0

    def stream(self, role: str, messages: Sequence[Message],
               temperature: float | None = None) -> AsyncGenerator[str | Usage, None]:
        if self.first_at is None:
            self.first_at = time.perf_counter()
            self.first_chars = sum(len(m.content) for m in messages)
        return super().stream(role, messages, temperature)  # type: ignore[return-value]


def _files(count: int, size: int) -> dict[str, str]:
    rng = random.Random(count)
    files = dict(PYTHON_PROJECT)
    for i in range(count - len(files)):
        body = "".join(rng.choices(string.ascii_letters + " \n", k=size))
        files[f"pkg{i % 40}/sub{i % 7}/module_{i}.py"] = f"def function_{i}(x):\n    return x\n\n'''{body}'''\n"
    return files


async def _measure(count: int, size: int, work: Path) -> tuple[int, float]:
    (work / "root").mkdir(parents=True)
    async with FakeGitHost(work / "root", token=TOKEN) as host, FakeGitHub(token=TOKEN) as github:
        make_repo(host.root, "acme/billing", _files(count, size))
        github.add_repo("acme/billing")
        config = Config(repos=ReposConfig(git_url=host.url, allowed={"acme/billing": RepoSettings()},
                                          max_bytes=2_000_000_000),
                        budget=BudgetConfig(max_rounds=1), checkin=CheckinConfig(github_api_url=github.url))
        store = await SQLiteStore.open(work / "db.sqlite3")
        model = FirstCall()
        try:
            service = Service(config, store, model, ScriptedSandbox(), repos=RepoDesk(config, TOKEN))

            async def sink(event: object) -> None:
                pass

            started = time.perf_counter()
            handle = await service.submit(ChatRequest("terminal", "b", "me", "add retries to billing/client.py in "
                                                      "acme/billing", places=("terminal",)), sink, _Nowhere())
            finished = await handle.wait()
            assert model.first_at is not None, f"no model call was made: {finished.reason}"
            return model.first_chars, model.first_at - started
        finally:
            await store.close()


class _Nowhere:
    async def publish(self, publication: object) -> object:
        from agents.types import CheckInResult
        return CheckInResult(location="-", kind="none")


async def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--file-bytes", type=int, default=10_000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        small = await _measure(50, 400, Path(folder) / "small")
        medium = await _measure(1_000, 1_000, Path(folder) / "medium")  # already more than the map can show
        large = await _measure(args.files, args.file_bytes, Path(folder) / "large")
    print(f"{'repository':<34}{'first prompt (chars)':>22}{'before first model call':>26}")
    for name, (chars, seconds) in (("50 files", small), ("1,000 files, ~1 MB", medium),
                                   (f"{args.files:,} files, ~{args.files * args.file_bytes / 1e6:.0f} MB", large)):
        print(f"{name:<34}{chars:>22,}{seconds:>25.2f}s")
    print(f"ratio (largest / 50 files): prompt {large[0] / small[0]:.2f}x, time {large[1] / small[1]:.2f}x")
    print(f"ratio (largest / 1,000 files, both past the map's budget): prompt {large[0] / medium[0]:.2f}x, "
          f"time {large[1] / medium[1]:.2f}x")

if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
