"""Following CI, on loopback with the real PyGithub: how soon a webhook's nudge turns into a verdict (against the
poll it saves), what one look costs in GitHub requests, and how long a 5 MB Actions log takes to fetch (from its
end) and reduce to what a fix round is shown.

    python benchmarks/ci_bench.py [--rounds 20] [--log-mb 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.ci.failure import failure_context
from bot.ci.follow import CiFollower
from bot.ci.nudges import CiNudges
from bot.ci.rest import CiRest
from bot.config.sections import CheckinConfig, CiConfig
from bot.repos.github import GitHubRepos
from tests.fakes.github_ci import Job
from tests.fakes.github_server import FakeGitHub

TOKEN = "ghp_bench_token"
REPO = "acme/billing"


def _rest(github: FakeGitHub, log_max_bytes: int = 5_000_000) -> CiRest:
    config = CheckinConfig(github_api_url=github.url, write_interval_s=0)
    return CiRest(GitHubRepos.with_token(config, TOKEN), log_max_bytes)


async def _nudge_to_verdict(github: FakeGitHub, sha: str) -> tuple[float, int]:
    """Seconds from the nudge to the verdict, and the GitHub requests the follow made in all."""
    github.ci.on_commit(REPO, lambda _: [Job("tests", pending_reads=None)])
    nudges, looked = CiNudges(), asyncio.Event()

    async def changed(_: object) -> None:
        looked.set()

    before = len(github.requests)
    follower = CiFollower(_rest(github), nudges, CiConfig(poll_first_s=600))
    following = asyncio.create_task(follower.follow(REPO, sha, "main", changed))
    await looked.wait()
    github.ci.finish(REPO, sha, "tests", "success")
    started = time.perf_counter()
    nudges.nudge(REPO, sha)
    await following
    return time.perf_counter() - started, len(github.requests) - before


async def _log(github: FakeGitHub, megabytes: int) -> tuple[float, int]:
    failure = ("___ test_cents ___\n    def test_cents():\n>       assert cents(1.25) == 125\n"
               "E       assert 124 == 125\n=== short test summary info ===\nFAILED tests/test_money.py::test_cents\n")
    line = "2026-12-01T10:00:00.0000000Z collecting ... ok\n"
    log = line * (megabytes * 1_000_000 // len(line)) + failure
    github.ci.on_commit(REPO, lambda _: [Job("tests", "failure", log=log)])
    rest = _rest(github, megabytes * 1_000_000)
    checks = await rest.checks(REPO, "f" * 40)
    started = time.perf_counter()
    context = await failure_context(rest, REPO, checks, limit=6000)
    return time.perf_counter() - started, len(context.messages[0].text)


async def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--log-mb", type=int, default=5)
    args = parser.parse_args(argv)
    async with FakeGitHub(token=TOKEN) as github:
        github.add_repo(REPO)
        measured = [await _nudge_to_verdict(github, f"{n:040x}") for n in range(args.rounds)]
        waits = sorted(seconds for seconds, _ in measured)
        print(f"nudge to verdict: median {statistics.median(waits) * 1000:.1f} ms, worst {waits[-1] * 1000:.1f} ms "
              f"over {args.rounds} commits (without the nudge: the next poll, 600 s here, 10 s to 2 min by default)")
        print(f"GitHub requests per followed commit (its required checks: 2, then two looks of 2): {measured[0][1]}")
        seconds, chars = await _log(github, args.log_mb)
        print(f"a {args.log_mb} MB Actions log fetched from its end and reduced: {seconds:.2f} s, "
              f"{chars:,} characters for the fix round")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
