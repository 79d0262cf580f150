"""``codegen-chat history``: runs and transcripts as a person reads them in a terminal."""

from __future__ import annotations

import json
import time
from pathlib import Path

from bot.store import RunRecord, RunSummary


def print_runs(runs: list[RunSummary], db_path: Path) -> None:
    if not runs:
        print(f"No runs yet in {db_path}.")
        return
    print(f"{'RUN':<9} {'STARTED':<17} {'STATUS':<12} {'TOKENS':>8} {'COST':>8}  TASK")
    for run in runs:
        task = run.task.replace("\n", " ")
        cost = f"${run.cost_usd:.4f}"
        print(f"{run.id:<9} {_when(run.created_at):<17} {run.status:<12} {run.usage.total_tokens:>8,} "
              f"{cost:>8}  {task[:60] + ('…' if len(task) > 60 else '')}")


def print_run(record: RunRecord) -> None:
    run = record.summary
    print(f"Run {run.id} ({run.platform}, conversation {run.thread_key})")
    print(f"Task: {run.task}")
    print(f"Status: {run.status}" + (f" — {run.reason}" if run.reason else ""))
    print(f"Started {_when(run.created_at)}" + (f", finished {_when(run.finished_at)}" if run.finished_at else ""))
    print(f"Tokens: {run.usage.prompt_tokens:,} in / {run.usage.completion_tokens:,} out, cost ${run.cost_usd:.4f}")
    for turn in record.turns:
        print(f"\n── {turn.agent} (round {turn.round}, {turn.model}, {turn.finished_at - turn.started_at:.1f}s, "
              f"{turn.usage.total_tokens:,} tokens)")
        print(turn.text.rstrip())
    for kind, body in record.notes:
        data = json.loads(body)
        if kind == "test_report":
            print(f"\n[tests, round {data['round']}] {data['status']}: passed {data['passed']}, failed {data['failed']}")
        else:
            print(f"\n[{kind}] {data.get('text', '')}")
    if record.files or record.tests:
        print("\nFiles: " + ", ".join([*record.files, *record.tests]))
    if run.checkin:
        print(f"Checked in: {run.checkin.location}")


def _when(timestamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(timestamp))
