"""The side panel of a conversation, read from the store: the latest version of each file (tests marked),
the test results of each round, the status, tokens and cost, and where the result is (the Gist, or the
files as a zip). The store has it all before the thread shows it (it is the first of a run's event sinks),
so a page that opens later, or after a restart, sees the same panel.

Everything in it came from models and people: it is masked here, with every character that would reorder how it
reads shown escaped, and the page shows it as text.
"""

from __future__ import annotations

import json
from typing import Any

from agents.excerpts import failure_excerpt
from agents.types import FileSet, TestReport, TestStatus
from bot.chat.renderer import Redact
from bot.chat.words import FAILING_OUTPUT_CHARS
from bot.safety.inert import in_written_order
from bot.store.records import RunRecord

Panel = dict[str, Any]


def build_panel(key: str, records: list[RunRecord], masked: Redact) -> Panel:
    if not records:
        return {}

    def redact(text: str) -> str:  # what the page shows: secrets masked, nothing that reorders how it reads
        return in_written_order(masked(text))

    latest = records[-1]
    with_files = [r for r in records if r.files or r.tests]
    work = with_files[-1] if with_files else None
    gist = next((r.summary.checkin.location for r in reversed(records)
                 if r.summary.checkin and r.summary.checkin.kind in ("gist", "pull_request", "branch")), "")
    return {
        "run": latest.summary.id,
        "status": latest.summary.status,
        "reason": redact(latest.summary.reason),
        "runs": [_run(record, redact) for record in records],
        "usage": {
            "in": sum(r.summary.usage.prompt_tokens for r in records),
            "out": sum(r.summary.usage.completion_tokens for r in records),
            "cost": round(sum(r.summary.cost_usd for r in records), 6),
            "estimated": any(r.summary.usage.estimated for r in records),  # the server reported no counts
        },
        "files": _files(work, redact) if work else [],
        "gist": gist if gist.startswith(("https://", "http://")) else "",
        "zip": f"/api/conversations/{key}/files.zip" if work else "",
    }


def _run(record: RunRecord, redact: Redact) -> Panel:
    run = record.summary
    return {
        "id": run.id, "task": redact(run.task), "status": run.status, "reason": redact(run.reason),
        "in": run.usage.prompt_tokens, "out": run.usage.completion_tokens, "cost": round(run.cost_usd, 6),
        "rounds": [_round(json.loads(body), redact) for kind, body in record.notes if kind == "test_report"],
    }


def _round(body: dict[str, Any], redact: Redact) -> Panel:
    fields = {k: v for k, v in body.items() if k not in ("round", "language")}
    report = TestReport(**{**fields, "status": TestStatus(fields["status"]),
                           "already_failing": tuple(fields.get("already_failing", ()))})
    return {
        "round": body.get("round", 0), "language": body.get("language", ""), "ok": report.ok,
        "summary": report.summary(), "passed": report.passed, "failed": report.failed,
        "output": "" if report.ok else redact(failure_excerpt(report, FAILING_OUTPUT_CHARS)),
    }


def _files(record: RunRecord, redact: Redact) -> list[Panel]:
    """The run's latest files, code first, then tests (the user's marked as theirs)."""
    tests, yours = FileSet(record.tests), set(record.user_tests)
    code = [{"name": redact(name), "content": redact(content), "test": False, "yours": False}
            for name, content in record.files.items() if name not in tests]
    return code + [{"name": redact(name), "content": redact(content), "test": True, "yours": name in yours}
                   for name, content in tests.items()]
