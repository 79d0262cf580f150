"""Replicas on one PostgreSQL, figures printed (no assertions): real ``serve`` processes (``tests.fakes.replica``:
the command itself, with the scripted sandbox in place of Docker) in Slack HTTP mode behind a round-robin "load
balancer" (each mention's request goes to the next replica), against the loopback Slack fake and the scripted
model answering each call after 100 ms. PostgreSQL is Debian's, started in a temp dir (``tests.postgres_support``).

Three phases, each on a fresh database with all mentions sent at once:

- 1 replica, no faults;
- 3 replicas, no faults;
- 3 replicas, one SIGKILLed (while it has runs under way) once a quarter of the runs have finished, PostgreSQL
  restarted (fast shutdown, then started again) once half have.

Printed per phase: runs lost (a mention whose thread never got a final summary), runs executed twice to
completion (two claims of one run that both finished), threads with two final summaries, the takeover time of
the killed replica's runs (SIGKILL -> claimed by another replica) p50/p99, and the throughput.

Run: python -m benchmarks.replicas_bench [--runs 100] [--heartbeat 1.0] [--lost-after 5.0]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import psycopg

from tests.fakes import team_script as s
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.replicas import Replica, finals, mention, replica
from tests.fakes.slack_api import FakeSlack
from tests.postgres_support import Cluster, fresh_database, running_cluster

MODEL_CALL_S = 0.1
CHANNELS = 5


@dataclass
class Result:
    label: str
    runs: int
    lost: int
    twice: int
    two_finals: int
    seconds: float
    takeovers: list[float]
    note: str = ""

    def lines(self) -> list[str]:
        taken = (f"takeover p50 {percentile(self.takeovers, 50):5.2f} s  p99 {percentile(self.takeovers, 99):5.2f} s"
                 f" ({len(self.takeovers)} runs)" if self.takeovers else "takeover -")
        return [f"{self.label:<34} {self.runs} runs in {self.seconds:6.1f} s = {self.runs / self.seconds:5.2f} runs/s",
                f"{'':<34} lost {self.lost}  executed twice {self.twice}  threads with two finals {self.two_finals}"
                f"  {taken}{'  ' + self.note if self.note else ''}"]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


async def phase(cluster: Cluster, folder: Path, label: str, replicas: int, runs: int, faults: bool,
                heartbeat_s: float, lost_after_s: float, per_replica: int) -> Result:
    url = await fresh_database(cluster)
    async with FakeSlack() as slack, FakeOpenAI(pace=(MODEL_CALL_S, 1_000_000.0)) as model:
        model.responder = lambda recorded: Reply(s.TEAM_DEFAULTS[recorded.agent])
        name = f"{'faults' if faults else 'clean'}{replicas}"
        started = [replica(folder, f"{name}-{n}", url, slack, model.base_url, heartbeat_s, lost_after_s,
                           max_concurrent_runs=per_replica * 3, max_runs_per_replica=per_replica)
                   for n in range(replicas)]
        for each in started:
            each.start()
        try:
            await asyncio.gather(*(each.ready() for each in started))
            return await _measure(cluster, url, slack, started, label, runs, faults, lost_after_s)
        finally:
            for each in started:
                each.stop()


async def _measure(cluster: Cluster, url: str, slack: FakeSlack, started: list[Replica], label: str, runs: int,
                   faults: bool, lost_after_s: float) -> Result:
    begun = time.monotonic()
    async with aiohttp.ClientSession() as session:
        threads = await asyncio.gather(*(mention(session, slack, started[n % len(started)],
                                                 f"find all intf keys, please ({n})", channel=f"C{n % CHANNELS}")
                                         for n in range(runs)))
    places = [(f"C{n % CHANNELS}", ts) for n, ts in enumerate(threads)]

    def done() -> int:
        return sum(bool(finals(slack, channel, ts)) for channel, ts in places)

    killed_at, killed_runs, note = 0.0, [], ""
    deadline = begun + 120 + runs * 3.0
    if faults:
        victim = started[0]
        await _until(lambda: done() >= runs // 4, deadline)
        while not (killed_runs := await _owned_by(url, victim)) and time.monotonic() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.05)  # the moment it has runs under way
        killed_at = time.time()
        victim.kill()
        await _until(lambda: done() >= runs // 2, deadline)
        restart_began = time.monotonic()
        cluster.stop()
        cluster.start()
        note = f"(SIGKILL with {len(killed_runs)} runs under way; PostgreSQL down {time.monotonic() - restart_began:.1f} s)"
    await _until(lambda: done() >= runs, deadline)
    seconds = time.monotonic() - begun
    await asyncio.sleep(max(2.0, lost_after_s))  # a late duplicate would land now
    claims = await _rows(url, "SELECT run_id, epoch, owner, claimed_at, finished_at FROM run_claims")
    finished_twice = {}
    for run_id, _, _, _, finished_at in claims:
        finished_twice[run_id] = finished_twice.get(run_id, 0) + (finished_at is not None)
    takeovers = [min(c[3] for c in claims if c[0] == run_id and c[3] > killed_at) - killed_at
                 for run_id in killed_runs if any(c[0] == run_id and c[3] > killed_at for c in claims)]
    unfinished = [ts for channel, ts in places if not finals(slack, channel, ts)]
    if unfinished:  # how the store sees the runs whose threads got no final summary
        for row in await _rows(url, "SELECT r.id, r.status, r.owner, r.epoch, c.thread_key, (SELECT string_agg("
                               "k.epoch || ':' || k.owner || ':' || COALESCE(k.finished_at::text, '-'), ' ')"
                               " FROM run_claims k WHERE k.run_id = r.id) FROM runs r JOIN conversations c"
                               " ON c.id = r.conversation_id"):
            if row[4].split(":", 1)[1] in unfinished:
                print("  without a final summary:", row, flush=True)
    return Result(label, runs, lost=runs - done(), twice=sum(n > 1 for n in finished_twice.values()),
                  two_finals=sum(len(finals(slack, channel, ts)) > 1 for channel, ts in places), seconds=seconds,
                  takeovers=takeovers, note=note)


async def _owned_by(url: str, victim: Replica) -> list[str]:
    pid = victim.process.pid if victim.process else 0
    rows = await _rows(url, f"SELECT id FROM runs WHERE status = 'running' AND owner LIKE '%:{pid}:%'")
    return [row[0] for row in rows]


async def _until(predicate, deadline: float) -> None:  # type: ignore[no-untyped-def]
    while not predicate() and time.monotonic() < deadline:  # noqa: ASYNC110  (the fake signals no such event)
        await asyncio.sleep(0.1)


async def _rows(url: str, sql: str) -> list[tuple]:  # type: ignore[type-arg]
    async with await psycopg.AsyncConnection.connect(url) as db:
        cursor = await db.execute(sql.encode())
        return list(await cursor.fetchall())


async def bench(runs: int, heartbeat_s: float, lost_after_s: float, per_replica: int, faults_only: bool) -> None:
    folder = Path(tempfile.mkdtemp(prefix="replicas-bench-"))
    with running_cluster() as cluster:
        results = []
        phases = (("1 replica", 1, False), ("3 replicas", 3, False), ("3 replicas, SIGKILL + PG restart", 3, True))
        for label, count, faults in phases[2:] if faults_only else phases:
            results.append(await phase(cluster, folder, label, count, runs, faults, heartbeat_s, lost_after_s,
                                       per_replica))
            for text in results[-1].lines():
                print(text, flush=True)
    print(f"\nmodel: {MODEL_CALL_S * 1000:.0f} ms per call; {per_replica} runs at once per replica; heartbeat "
          f"{heartbeat_s:g} s, owner lost after {lost_after_s:g} s; logs in {folder}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--heartbeat", type=float, default=1.0)
    parser.add_argument("--lost-after", type=float, default=5.0)
    parser.add_argument("--per-replica", type=int, default=10)
    parser.add_argument("--faults-only", action="store_true", help="only the phase with the SIGKILL and the restart")
    args = parser.parse_args()
    asyncio.run(bench(args.runs, args.heartbeat, args.lost_after, args.per_replica, args.faults_only))


if __name__ == "__main__":
    main()
