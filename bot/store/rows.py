"""How a stored row reads back as the store's records and a run's events: one decoding for every backend
(SQLite's rows and PostgreSQL's are both read by column name), so both give back exactly the same values."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any, Protocol

from agents.events import (
    CheckedIn,
    Decided,
    Event,
    Notice,
    Planned,
    ReadmeWritten,
    Reviewed,
    RunFinished,
    RunStarted,
    TestReported,
    TurnFinished,
    TurnMeaning,
    WorkSaved,
)
from agents.replies import Action
from agents.types import (
    Attachment,
    CheckInResult,
    FileSet,
    PriorWork,
    RunStatus,
    TestReport,
    TestStatus,
    ThreadContext,
    ThreadMessage,
    Usage,
)
from bot.store.records import Interrupted, RunRecord, RunSummary, TurnRecord


class Row(Protocol):
    """A row read by column name: ``sqlite3.Row`` or a psycopg ``dict_row``."""

    def __getitem__(self, key: str, /) -> Any: ...


def thread_json(thread: ThreadContext | None) -> str:
    return json.dumps(asdict(thread)) if thread is not None else ""


def thread(text: str) -> ThreadContext:
    data = json.loads(text)
    return ThreadContext(messages=tuple(ThreadMessage(**m) for m in data["messages"]),
                         files=tuple(Attachment(**f) for f in data["files"]), summary=data["summary"],
                         notes=tuple(data["notes"]))


def report_dict(report: TestReport) -> dict[str, Any]:
    """A test report as it is stored: without ``ran`` (the runner's list of every test, for judging only)."""
    data = asdict(report)
    data.pop("ran", None)
    return data


def _report_of(data: dict[str, Any]) -> TestReport:
    data.pop("ran", None)
    return TestReport(**{**data, "status": TestStatus(data["status"]),
                         "already_failing": tuple(data.get("already_failing", ()))})


def report(text: str | None) -> TestReport | None:
    return _report_of(json.loads(text)) if text else None


def summary(row: Row) -> RunSummary:
    checkin = json.loads(row["checkin"]) if row["checkin"] else None
    return RunSummary(
        id=row["id"], task=row["task"], status=row["status"], reason=row["reason"], created_at=row["created_at"],
        finished_at=row["finished_at"], usage=usage(row, priced=False),
        cost_usd=row["cost_usd"], platform=row["platform"], thread_key=row["thread_key"],
        checkin=CheckInResult(**checkin) if checkin else None, user_id=row["user_id"],
        attachments=tuple(json.loads(row["attachments"])), repository=row["repository"], branch=row["branch"],
        pr_url=row["pr_url"], head_commit=row["head_commit"],
        context=thread(row["thread"]).summary if row["thread"] else "",
        owner=row["owner"] or "",
    )


def usage(row: Row, priced: bool = True) -> Usage:
    """A row's tokens (and cost, when ``priced``: some records keep the cost beside the usage instead)."""
    return Usage(row["prompt_tokens"], row["completion_tokens"], row["cost_usd"] if priced else 0.0,
                 bool(row["usage_estimated"]))


def turn_event(run_id: str, row: Row) -> TurnFinished:
    return TurnFinished(
        run_id, agent=row["agent"], round=row["round"], text=row["text"], files=FileSet(json.loads(row["files"])),
        usage=usage(row),
        duration_s=row["finished_at"] - row["started_at"], model=row["model"], meaning=meaning(row["meaning"]),
        cut_short=bool(row["cut_short"]),
    )


_MEANINGS: dict[str, type[TurnMeaning]] = {"planned": Planned, "reviewed": Reviewed, "decided": Decided,
                                           "readme": ReadmeWritten}


def meaning_json(meaning: TurnMeaning | None) -> str:
    """What a turn decided, as its row keeps it ('' for none)."""
    if meaning is None:
        return ""
    kind = next(name for name, kind in _MEANINGS.items() if isinstance(meaning, kind))
    return json.dumps({"kind": kind, **asdict(meaning)})


def meaning(text: str) -> TurnMeaning | None:
    """A turn's decision read back. A row recorded before turns kept it ('') has none: it is shown as written."""
    if not text:
        return None
    data = json.loads(text)
    kind = _MEANINGS[data.pop("kind")]
    if kind is Decided:
        data["action"] = Action(data["action"])
    return kind(**data)


def note_event(run_id: str, kind: str, body: str) -> Event | None:
    data = json.loads(body)
    if kind == "notice":
        return Notice(run_id, data.get("text", ""))
    if kind == "test_report":
        round_, language = data.pop("round"), data.pop("language")
        report = _report_of(data)
        return TestReported(run_id, round=round_, language=language, report=report)
    return None


def turn(row: Row) -> TurnRecord:
    return TurnRecord(
        agent=row["agent"], round=row["round"], text=row["text"], files=FileSet(json.loads(row["files"])),
        started_at=row["started_at"], finished_at=row["finished_at"], model=row["model"],
        usage=usage(row, priced=False),
    )


def prior_work(runs: Sequence[Row]) -> PriorWork | None:
    """What earlier runs of a conversation left (``runs`` in the order they were asked for), for a follow-up:
    their tasks, and the files of the latest run that had any."""
    if not runs:
        return None
    with_files = [r for r in runs if json.loads(r["files"])]
    last = with_files[-1] if with_files else runs[-1]
    user_tests = FileSet(json.loads(last["user_tests"]))
    read = [thread(r["thread"]) for r in runs if r["thread"]]
    return PriorWork(
        tasks=tuple(r["task"] for r in runs), plan=last["plan"], files=FileSet(json.loads(last["files"])),
        tests=FileSet(json.loads(last["tests"])).without(user_tests), user_tests=user_tests,
        language=last["language"], thread=next((t for t in read if t), None), **repository_of(runs),
    )


def repository_of(runs: Sequence[Row]) -> dict[str, str]:
    """The repository and branch the conversation's latest repository run worked on (pushed or not)."""
    last = next((r for r in reversed(runs) if r["repository"]), None)
    return {"repository": last["repository"], "branch": last["branch"] if last["head_commit"] else ""} if last else {}


def run_record(row: Row, turns: Sequence[Row], notes: Sequence[Row]) -> RunRecord:
    """A run (its row joined with its conversation's platform and thread_key), its turns and notes in order."""
    return RunRecord(
        summary=summary(row), turns=[turn(t) for t in turns], notes=[(n["kind"], n["body"]) for n in notes],
        files=FileSet(json.loads(row["files"])), tests=FileSet(json.loads(row["tests"])),
        report=report(row["report"]), plan=row["plan"], language=row["language"],
        user_tests=FileSet(json.loads(row["user_tests"])), thread=thread(row["thread"]) if row["thread"] else None,
    )


def timeline(record: RunRecord, earlier_runs: int, turns: Sequence[Row], notes: Sequence[Row]) -> list[Event]:
    """A stored run's events in the order they happened: its start, finished turns, test reports, notices
    and, once it has ended, where it was checked in and its ``RunFinished``."""
    run = record.summary
    timed: list[tuple[float, Event]] = [(t["finished_at"], turn_event(run.id, t)) for t in turns]
    timed += [(n["at"], event) for n in notes if (event := note_event(run.id, n["kind"], n["body"])) is not None]
    timed.sort(key=lambda pair: pair[0])  # stable: a turn and a note recorded in the same instant keep their order
    events: list[Event] = [RunStarted(run.id, task=run.task, follow_up=earlier_runs, context=run.context)]
    events += [event for _, event in timed]
    if run.status != RunStatus.RUNNING:
        if run.checkin:
            events.append(CheckedIn(run.id, result=run.checkin))
        usage = Usage(run.usage.prompt_tokens, run.usage.completion_tokens, run.cost_usd, run.usage.estimated)
        events.append(RunFinished(
            run.id, status=RunStatus(run.status), reason=run.reason, files=record.files, tests=record.tests,
            user_tests=record.user_tests, report=record.report, usage=usage, checkin=run.checkin,
            language=record.language, plan=record.plan,
        ))
    return events


def interrupted(row: Row) -> Interrupted:
    return Interrupted(row["id"], row["thread_key"], row["user_id"], row["task"], row["status_message"], usage(row))


def finish_values(event: RunFinished) -> tuple[Any, ...]:
    """What a final event sets: status, reason, then files, tests, user tests, report, check-in (None: keep what
    earlier events recorded, a bare final event carries none), plan and language ('': keep)."""
    def json_or_none(files: FileSet) -> str | None:
        return json.dumps(files.as_dict()) if files else None

    return (event.status, event.reason, json_or_none(event.files), json_or_none(event.tests),
            json_or_none(event.user_tests), json.dumps(report_dict(event.report)) if event.report else None,
            json.dumps(asdict(event.checkin)) if event.checkin else None, event.plan, event.language)


def saved_work(event: WorkSaved) -> tuple[str, str, str]:
    return (json.dumps(event.files.as_dict()), json.dumps(event.tests.as_dict()),
            json.dumps(event.user_tests.as_dict()))


def report_note(event: TestReported) -> dict[str, Any]:
    return {"round": event.round, "language": event.language, **report_dict(event.report)}


def checked_in_repository(event: CheckedIn) -> tuple[str, str, str, str] | None:
    """What a check-in into a repository sets on its run: repository, branch, head commit, pull request URL."""
    result = event.result
    if not result.repository:
        return None
    return result.repository, result.branch, result.head, result.location if result.kind == "pull_request" else ""
