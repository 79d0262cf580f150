"""``codegen-chat run --json``: a run as JSON lines for a pipeline, one object per line on stdout.

Each finished turn, notice, test report and check-in is one object as it happens (``"type"`` says which);
the last line is the result (``"type": "result"``: status, exit code, where the work went, test counts,
tokens and cost). Streamed text is not written: a turn's whole text comes with its end. Every string is
masked of secrets, and what the bot says itself (reasons, notes, notices) of credentials in any URL. The
objects' shapes are documented in ``docs/run-events.schema.json``; fields are only ever added."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TextIO

from agents.events import CheckedIn, Event, Notice, RunFinished, RunStarted, TestReported, TurnFinished
from agents.types import CheckInResult, RunStatus, TestReport, Usage
from bot.safety.redact import Redactor

SCHEMA_VERSION = 1


class JsonLines:
    """An event sink writing one JSON object per line (flushed at once, so a pipeline sees it live)."""

    def __init__(self, out: TextIO, redact: Redactor | None = None) -> None:
        self._out, self._redact = out, redact or Redactor(())
        self._said = self._redact.with_urls()  # for all but the model's text, which keeps its example URLs
        self.finished: RunFinished | None = None

    async def __call__(self, event: Event) -> None:
        if isinstance(event, RunFinished):
            self.finished = event  # written by ``result``, with what the terminal adds (exit code, saved files)
            return
        line = event_object(event)
        if line is not None:
            self.write(line)

    def write(self, line: dict[str, Any]) -> None:
        redact = self._redact if line.get("type") == "turn" else self._said
        self._out.write(json.dumps(self._masked(line, redact), ensure_ascii=False) + "\n")
        self._out.flush()

    def result(self, finished: RunFinished, exit_code: int, out_dir: Path, saved_note: str = "") -> None:
        self.write(_result(finished, finished.status.value, exit_code, str(out_dir), saved_note))

    def _masked(self, value: Any, redact: Redactor) -> Any:
        if isinstance(value, str):
            return redact(value)
        if isinstance(value, dict):
            return {key: self._masked(item, redact) for key, item in value.items()}
        if isinstance(value, list):
            return [self._masked(item, redact) for item in value]
        return value


def unstarted_result(exit_code: int, message: str, status: str = "refused") -> dict[str, Any]:
    """The result line of a run that never started (refused: bad input or config, a store that cannot open; or
    stopped by Ctrl-C first): the keys of any result line, so a pipeline reads every one the same way, empty."""
    return _result(RunFinished("", status=RunStatus.ERROR, reason=message), status, exit_code)


def _result(finished: RunFinished, status: str, exit_code: int, out_dir: str = "", note: str = "") -> dict[str, Any]:
    return {
        "type": "result", "schema": SCHEMA_VERSION, "run_id": finished.run_id, "status": status,
        "reason": finished.reason,
        "exit_code": exit_code, "out_dir": out_dir, "checkin": _checkin(finished.checkin),
        "tests": _report(finished.report), "files": sorted(finished.files), "test_files": sorted(finished.tests),
        "language": finished.language, "usage": _usage(finished.usage), "note": note,
    }


def event_object(event: Event) -> dict[str, Any] | None:
    if isinstance(event, RunStarted):
        return {"type": "run_started", "run_id": event.run_id, "task": event.task, "follow_up": event.follow_up}
    if isinstance(event, TurnFinished):
        return {"type": "turn", "run_id": event.run_id, "agent": str(event.agent), "round": event.round,
                "text": event.text, "files": sorted(event.files), "model": event.model,
                "duration_s": round(event.duration_s, 3), "usage": _usage(event.usage), "cut_short": event.cut_short}
    if isinstance(event, TestReported):
        return {"type": "test_report", "run_id": event.run_id, "round": event.round, "language": event.language,
                **(_report(event.report) or {})}
    if isinstance(event, CheckedIn):
        return {"type": "check_in", "run_id": event.run_id, **(_checkin(event.result) or {})}
    if isinstance(event, Notice):
        return {"type": "notice", "run_id": event.run_id, "text": event.text}
    return None  # streamed text, waiting notices and turn starts: a pipeline reads the finished turn


def _usage(usage: Usage) -> dict[str, Any]:
    return {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
            "cost_usd": round(usage.cost_usd, 6), "estimated": usage.estimated}


def _report(report: TestReport | None) -> dict[str, Any] | None:
    if report is None:
        return None
    return {"status": report.status.value, "passed": report.passed, "failed": report.failed,
            "exit_code": report.exit_code, "duration_s": round(report.duration_s, 3)}


def _checkin(result: CheckInResult | None) -> dict[str, Any] | None:
    return None if result is None else {"kind": result.kind, "location": result.location, "note": result.note}
