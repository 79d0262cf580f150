"""``codegen-chat history``: runs and transcripts as a person reads them in a terminal.

What the store holds came from models and people, so every line is masked and made inert on its way out."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import TextIO

from bot.safety.inert import inert
from bot.safety.redact import Redactor
from bot.store.records import RunRecord, RunSummary


class _Printer:
    def __init__(self, out: TextIO | None, redact: Redactor | None) -> None:
        self._out = out or sys.stdout
        self._redact = redact or Redactor(())

    def __call__(self, text: str = "") -> None:
        self._out.write(inert(self._redact(text)) + "\n")


def print_runs(runs: list[RunSummary], where: Path | str, out: TextIO | None = None, redact: Redactor | None = None) -> None:
    show = _Printer(out, redact)
    if not runs:
        show(f"No runs yet in {where}.")
        return
    show(f"{'RUN':<9} {'STARTED':<17} {'STATUS':<12} {'TOKENS':>8} {'COST':>8}  TASK")
    for run in runs:
        task = run.task.replace("\n", " ")
        cost = f"${run.cost_usd:.4f}"
        show(f"{run.id:<9} {_when(run.created_at):<17} {run.status:<12} {run.usage.total_tokens:>8,} "
             f"{cost:>8}  {task[:60] + ('…' if len(task) > 60 else '')}")
        if run.repository:
            show(f"{'':<9} {_repository_line(run)}")


def _repository_line(run: RunSummary) -> str:
    """Where a repository run went: the repository, its branch, the pull request and the head commit."""
    parts = [f"Repository: {run.repository}", f"branch {run.branch}" if run.branch else ""]
    parts += [f"pull request {run.pr_url}" if run.pr_url else "", f"head {run.head_commit[:12]}" if run.head_commit else ""]
    return ", ".join(p for p in parts if p)


def print_run(record: RunRecord, out: TextIO | None = None, redact: Redactor | None = None) -> None:
    show = _Printer(out, redact)
    run = record.summary
    show(f"Run {run.id} ({run.platform}, conversation {run.thread_key})")
    show(f"Task: {run.task}")
    show(f"Status: {run.status}" + (f" — {run.reason}" if run.reason else ""))
    show(f"Started {_when(run.created_at)}" + (f", finished {_when(run.finished_at)}" if run.finished_at else ""))
    show(f"Tokens: {run.usage.tokens_text()}, cost ${run.cost_usd:.4f}")
    if run.repository:
        show(_repository_line(run))
    if record.thread:  # what the team was given of the chat thread the request was made in
        show(f"\n── the thread ({record.thread.summary})")
        show(record.thread.transcript())
        if record.thread.files:
            show("Files from the thread: " + ", ".join(a.name for a in record.thread.files))
    for turn in record.turns:
        show(f"\n── {turn.agent} (round {turn.round}, {turn.model}, {turn.finished_at - turn.started_at:.1f}s, "
             f"{turn.usage.total_tokens:,} tokens)")
        show(turn.text.rstrip())
    for kind, body in record.notes:
        data = json.loads(body)
        if kind == "test_report":
            show(f"\n[tests, round {data['round']}] {data['status']}: passed {data['passed']}, failed {data['failed']}")
        else:
            show(f"\n[{kind}] {data.get('text', '')}")
    if record.files or record.tests:
        show("\nFiles: " + ", ".join([*record.files, *record.tests]))
    if run.checkin:
        show(f"Checked in: {run.checkin.location}")


def _when(timestamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(timestamp))
