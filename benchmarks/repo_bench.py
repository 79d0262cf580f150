"""Mention to pull request on a small and a large repository: what the team's first prompt costs, and how
long a person waits before the first model call, for a 50-file repository versus a 10,000-file / ~100 MB one.

The map has a fixed budget, so the prompt must not grow with the repository; the wait includes the fetch
(git over a loopback smart-HTTP server), laying out the files and building the map.

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

    def stream(self, role: str, messages: Sequence[Message]) -> AsyncGenerator[str | Usage, None]:
        if self.first_at is None:
            self.first_at = time.perf_counter()
            self.first_chars = sum(len(m.content) for m in messages)
        return super().stream(role, messages)  # type: ignore[return-value]


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
                                                      "acme/billing", place="terminal"), sink, _Nowhere())
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
        large = await _measure(args.files, args.file_bytes, Path(folder) / "large")
    print(f"{'repository':<34}{'first prompt (chars)':>22}{'before first model call':>26}")
    print(f"{'50 files':<34}{small[0]:>22,}{small[1]:>25.2f}s")
    print(f"{f'{args.files:,} files, ~{args.files * args.file_bytes / 1e6:.0f} MB':<34}{large[0]:>22,}{large[1]:>25.2f}s")
    print(f"ratio (large / small): prompt {large[0] / small[0]:.2f}x, time {large[1] / small[1]:.2f}x")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
