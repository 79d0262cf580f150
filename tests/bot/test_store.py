"""The store's contract, run against both backends (a real SQLite file and a throwaway PostgreSQL server): what
runs record, what survives a restart, follow-up context. The faults of a file (a full disk, a damaged or deleted
file, a read-only folder) are SQLite's own and tested on it alone; PostgreSQL's are in test_store_postgres.py."""

import asyncio
import contextlib
import os
import re
import sqlite3
import subprocess
import sys
import threading

import pytest

from agents.events import (
    CheckedIn,
    Decided,
    Notice,
    Planned,
    ReadmeWritten,
    Reviewed,
    RunFinished,
    RunStarted,
    TestReported,
    TurnFinished,
)
from agents.replies import Action
from agents.types import CheckInResult, FileSet, RunStatus, TestReport, TestStatus, Usage
from bot.safety.redact import masked_url
from bot.store.errors import StoreError
from bot.store.postgres import PostgresStore
from bot.store.sqlite import SCHEMA, SQLiteStore
from tests.bot.disks import damage, read_only, small_disk
from tests.postgres_support import fresh_database


@pytest.fixture(params=["sqlite", "postgresql"])
async def reopen(request, tmp_path):
    """Opens the test's store (each call a new connection to the same database), on the backend of the param."""
    if request.param == "sqlite":
        path = tmp_path / "db.sqlite3"
        yield lambda: SQLiteStore.open(path)
    else:
        url = await fresh_database(request.getfixturevalue("postgres_cluster"))
        yield lambda: PostgresStore.open(url, masked_url(url))


@pytest.fixture
async def store(reopen):
    store = await reopen()
    yield store
    await store.close()


@pytest.fixture
async def sqlite_store(tmp_path):
    store = await SQLiteStore.open(tmp_path / "db.sqlite3")
    yield store
    await store.close()


async def start_run(store, run_id="r1", thread="t1", task="write a parser"):
    conversation = await store.conversation("terminal", thread)
    await store.create_run(run_id, conversation, task, "ann", ["main.py"])
    return conversation


async def test_a_run_records_turns_reports_check_in_and_final_status(reopen):
    store = await reopen()
    await start_run(store)
    await store.record(TurnFinished("r1", agent="planner", round=0, text="the plan", usage=Usage(1000, 500, 0.002),
                                    duration_s=1.5, model="gpt-4o-mini"))  # priced as the events carry it
    await store.record(TurnFinished("r1", agent="programmer", round=1, text="code", files=FileSet({"a.py": "x\n"}),
                                    usage=Usage(2000, 1000, 0.004), model="gpt-4o-mini"))
    report = TestReport(TestStatus.PASSED, 0, 0.4, 3, 0, "3 passed")
    await store.record(TestReported("r1", round=1, language="python", report=report))
    await store.record(CheckedIn("r1", result=CheckInResult("https://gist.example/abc", "gist")))
    await store.record(Notice("r1", "Queued: waiting for a free slot."))
    await store.record(RunFinished("r1", status=RunStatus.PASSED, reason="tests passed", files=FileSet({"a.py": "x\n"}),
                                   tests=FileSet({"test_a.py": "t\n"}), report=report, plan="the plan", language="python"))
    await store.close()

    store = await reopen()  # a fresh connection reads what the first wrote
    record = await store.run("r1")
    assert [t.agent for t in record.turns] == ["planner", "programmer"]
    assert record.turns[1].files["a.py"] == "x\n" and record.turns[0].usage == Usage(1000, 500)
    summary = record.summary
    assert summary.status == "passed" and summary.usage == Usage(3000, 1500)
    assert abs(summary.cost_usd - 0.006) < 1e-12
    assert summary.checkin.location == "https://gist.example/abc"
    assert record.report.passed == 3 and record.plan == "the plan" and list(record.tests) == ["test_a.py"]
    assert [kind for kind, _ in record.notes] == ["test_report", "notice"]
    assert (await store.runs())[0].id == "r1"
    await store.close()


async def test_wal_mode_is_on(sqlite_store):
    async with sqlite_store._db.execute("PRAGMA journal_mode") as cursor:
        assert (await cursor.fetchone())[0] == "wal"


async def test_follow_up_gets_earlier_tasks_and_the_latest_files(store):
    conversation = await start_run(store, "r1", task="first")
    await store.record(RunFinished("r1", status=RunStatus.PASSED, reason="", files=FileSet({"a.py": "v1\n"}),
                                   plan="p1", language="python"))
    await start_run(store, "r2", task="second")
    await store.record(RunFinished("r2", status=RunStatus.ERROR, reason="model down"))  # no files: skipped
    await start_run(store, "r3", task="third")
    prior = await store.prior_work(conversation, "r3")
    assert prior.tasks == ("first", "second") and prior.files["a.py"] == "v1\n" and prior.language == "python"
    assert await store.prior_work(await store.conversation("terminal", "other"), "rX") is None


async def test_conversations_are_keyed_by_platform_and_thread(store):
    a = await store.conversation("slack", "C1/123.4")
    assert await store.conversation("slack", "C1/123.4") == a
    assert await store.conversation("discord", "C1/123.4") != a


async def test_gist_index_remembers_per_conversation(store):
    assert await store.gist_for("slack:C1/1") is None
    await store.remember("slack:C1/1", "abc123")
    assert await store.gist_for("slack:C1/1") == "abc123" and await store.gist_for("slack:C1/2") is None


async def test_redelivered_events_are_seen_once(store):
    assert await store.first_sighting("slack:Ev123") is True
    assert await store.first_sighting("slack:Ev123") is False


async def test_runs_of_a_killed_process_are_marked_interrupted_at_start(tmp_path):
    db = tmp_path / "db.sqlite3"
    script = f"""
import asyncio, os, signal
from agents.events import TurnFinished
from bot.store.sqlite import SQLiteStore
async def main():
    store = await SQLiteStore.open(__import__('pathlib').Path({str(db)!r}))
    conversation = await store.conversation("terminal", "t1")
    await store.create_run("r1", conversation, "task", "ann", [])
    await store.record(TurnFinished("r1", agent="planner", round=0, text="a plan worth keeping"))
    os.kill(os.getpid(), signal.SIGKILL)
asyncio.run(main())
"""
    result = subprocess.run([sys.executable, "-c", script], cwd=os.getcwd(), capture_output=True)
    assert result.returncode == -9
    store = await SQLiteStore.open(db)
    assert (await store.run("r1")).summary.status == "running"
    assert await store.mark_interrupted() == 1
    record = await store.run("r1")
    assert record.summary.status == "interrupted" and "stopped while this run was under way" in record.summary.reason
    assert record.turns[0].text == "a plan worth keeping"
    await store.close()


async def test_a_live_process_keeps_its_runs(store):
    await start_run(store)
    assert await store.mark_interrupted() == 0
    assert (await store.run("r1")).summary.status == "running"


async def test_a_queued_run_does_not_see_later_requests_as_done(store):
    conversation = await start_run(store, "r1", task="first")
    await start_run(store, "r2", task="second")
    await start_run(store, "r3", task="queued after the second")
    prior = await store.prior_work(conversation, "r2")
    assert prior.tasks == ("first",)


async def test_the_users_tests_stay_apart_in_follow_ups(store):
    conversation = await start_run(store, "r1")
    await store.record(RunFinished("r1", status=RunStatus.PASSED, reason="", files=FileSet({"a.py": "x\n"}),
                                   tests=FileSet({"test_gen.py": "g\n", "test_user.py": "u\n"}),
                                   user_tests=FileSet({"test_user.py": "u\n"})))
    await start_run(store, "r2")
    prior = await store.prior_work(conversation, "r2")
    assert list(prior.tests) == ["test_gen.py"] and prior.user_tests.as_dict() == {"test_user.py": "u\n"}


async def test_a_bare_final_event_keeps_what_was_recorded_before(store):
    await start_run(store)
    report = TestReport(TestStatus.FAILED, 1, 0.4, 1, 1, "1 failed")
    await store.record(TestReported("r1", round=1, language="python", report=report))
    await store.record(RunFinished("r1", status=RunStatus.STOPPED, reason="stopped on request"))
    record = await store.run("r1")
    assert record.summary.status == "stopped" and record.report == report


@pytest.mark.parametrize("meaning", [Planned("", "steps"), Reviewed(False, "- a bug\n- another"),
                                     Decided(Action.REPLAN, "no way"), ReadmeWritten("# t\n"), None])
async def test_what_a_turn_decided_comes_back_as_it_was_recorded(store, meaning):
    await start_run(store)
    await store.record(TurnFinished("r1", agent="optimizer", round=1, text="VERDICT: whatever", meaning=meaning))
    turn = next(e for e in await store.timeline("r1") if isinstance(e, TurnFinished))
    assert turn.meaning == meaning and turn.text == "VERDICT: whatever"


async def test_a_turn_recorded_before_turns_kept_their_meaning_reads_back_with_none(tmp_path):
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as db:
        db.executescript(SCHEMA)
        db.execute("INSERT INTO conversations (platform, thread_key, created_at) VALUES ('t', 'k', 0)")
        db.execute("INSERT INTO runs (id, conversation_id, task, status, created_at) VALUES ('r1', 1, 'x', 'failed', 0)")
        db.execute("INSERT INTO turns (run_id, agent, round, text, started_at, finished_at) "
                   "VALUES ('r1', 'optimizer', 1, 'VERDICT: APPROVE', 0, 1)")
    store = await SQLiteStore.open(path)
    turn = next(e for e in await store.timeline("r1") if isinstance(e, TurnFinished))
    assert (turn.text, turn.meaning) == ("VERDICT: APPROVE", None)  # shown as written, never read again
    await store.close()


async def test_an_older_database_gets_new_columns_at_open(tmp_path):
    import sqlite3

    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as db:
        db.executescript(SCHEMA.replace("    user_tests TEXT NOT NULL DEFAULT '{}',\n", ""))
    store = await SQLiteStore.open(path)
    conversation = await start_run(store)
    await store.record(RunFinished("r1", status=RunStatus.PASSED, reason="", user_tests=FileSet({"t.py": "x\n"})))
    await start_run(store, "r2")
    assert (await store.prior_work(conversation, "r2")).user_tests.as_dict() == {"t.py": "x\n"}
    await store.close()


async def test_an_unusable_storage_path_says_what_to_do(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(StoreError, match=r"could not create the folder of the database .*: .*file is a file, not a "
                                         r"folder; set storage.path to a place the bot may write"):
        await SQLiteStore.open(tmp_path / "file" / "sub" / "db.sqlite3")
    (tmp_path / "garbage.sqlite3").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match=r"could not open .*garbage.sqlite3: the file is not an SQLite database; point"):
        await SQLiteStore.open(tmp_path / "garbage.sqlite3")
    (tmp_path / "folder.sqlite3").mkdir()
    with pytest.raises(StoreError, match=r"could not open .*folder.sqlite3: it is a folder, not a database file; set"):
        await SQLiteStore.open(tmp_path / "folder.sqlite3")


def test_a_store_that_fails_to_open_leaves_no_thread_behind(tmp_path):
    """A short-lived command (``history``) closes its event loop right after the store refuses to open; a connection
    thread still running then reports to the closed loop, and the person sees its traceback on stderr."""
    (tmp_path / "folder.sqlite3").mkdir()
    before = set(threading.enumerate())

    async def open_and_fail() -> None:
        with pytest.raises(StoreError, match="it is a folder"):
            await SQLiteStore.open(tmp_path / "folder.sqlite3")
        assert [t.name for t in set(threading.enumerate()) - before
                if not t.name.startswith("asyncio_")] == []  # the loop's own workers end with it

    for _ in range(20):  # the thread's end raced the loop's; once is no proof
        asyncio.run(open_and_fail())


async def test_old_event_keys_are_forgotten_at_open(tmp_path):
    store = await SQLiteStore.open(tmp_path / "db.sqlite3")
    assert await store.first_sighting("slack:old")
    await store._db.execute("UPDATE seen_events SET at = at - 2 * 86400")
    await store._db.commit()
    await store.close()
    store = await SQLiteStore.open(tmp_path / "db.sqlite3")
    assert await store.first_sighting("slack:old")  # pruned, so seen afresh
    await store.close()


async def test_text_holding_a_lone_surrogate_is_stored_not_refused(store):
    """A model's JSON can carry "\\udc9b"; SQLite cannot hold it as UTF-8, so it is kept as U+FFFD."""
    await start_run(store, task="task \udc9b")
    await store.record(TurnFinished("r1", agent="planner", round=0, text="plan \ud800 end", model="m\udfff"))
    assert await store.run("r1\udc9b") is None  # a lookup with one is no error either
    record = await store.run("r1")
    assert record.summary.task == "task \ufffd" and record.turns[0].text == "plan \ufffd end"


async def test_a_stored_run_s_events_come_back_in_the_order_they_happened(store):
    await start_run(store)
    report = TestReport(TestStatus.FAILED, 1, 0.4, 1, 1, "1 failed")
    recorded = [
        Notice("r1", "Queued: waiting for a free slot."),
        TurnFinished("r1", agent="planner", round=0, text="the plan", usage=Usage(10, 5, 0.001), model="m",
                     meaning=Planned("go", "the plan")),
        TurnFinished("r1", agent="tester", round=1, text="tests", files=FileSet({"test_a.py": "t\n"})),
        TestReported("r1", round=1, language="python", report=report),
        TurnFinished("r1", agent="manager", round=1, text="DECISION: fix_code", meaning=Decided(Action.FIX_CODE, "")),
    ]
    for event in recorded:
        await store.record(event)
    under_way = await store.timeline("r1")
    assert [type(e).__name__ for e in under_way] == ["RunStarted", *(type(e).__name__ for e in recorded)]
    assert under_way[0] == RunStarted("r1", task="write a parser", follow_up=0)
    finished = RunFinished("r1", status=RunStatus.FAILED, reason="budget", files=FileSet({"a.py": "x\n"}),
                           tests=FileSet({"test_a.py": "t\n", "test_mine.py": "m\n"}),
                           user_tests=FileSet({"test_mine.py": "m\n"}), report=report)
    await store.record(CheckedIn("r1", result=CheckInResult("https://gist.example/abc", "gist")))
    await store.record(finished)
    timeline = (await store.timeline("r1"))[1:]
    assert timeline[0] == recorded[0]  # the notice first, as it happened
    assert [(e.agent, e.round, e.text, e.meaning) for e in timeline if isinstance(e, TurnFinished)] == [
        ("planner", 0, "the plan", Planned("go", "the plan")), ("tester", 1, "tests", None),
        ("manager", 1, "DECISION: fix_code", Decided(Action.FIX_CODE, ""))]
    assert timeline[1].usage == Usage(10, 5, 0.001) and timeline[2].files == {"test_a.py": "t\n"}
    assert timeline[3] == recorded[3]
    assert timeline[-2] == CheckedIn("r1", result=CheckInResult("https://gist.example/abc", "gist"))
    end = timeline[-1]
    assert isinstance(end, RunFinished) and end.status == RunStatus.FAILED and end.report == report
    assert end.usage == Usage(10, 5, 0.001) and dict(end.user_tests) == {"test_mine.py": "m\n"}
    assert await store.timeline("nope") == []


async def test_a_person_s_conversations_on_a_platform_latest_first(store):
    for run_id, thread, user, task in [("r1", "t1", "ann", "first"), ("r2", "t2", "bob", "bob's"),
                                       ("r3", "t3", "ann", "second"), ("r4", "t1", "ann", "follow-up")]:
        conversation = await store.conversation("web", thread)
        await store.create_run(run_id, conversation, task, user, [])
    await store.record(RunFinished("r4", status=RunStatus.PASSED, reason=""))
    listed = await store.conversations("web", "ann")
    assert [(c.thread_key, c.title, c.status, c.runs) for c in listed] == [("t1", "first", "passed", 2),
                                                                           ("t3", "second", "running", 1)]
    assert await store.conversations("slack", "ann") == []
    runs = await store.conversation_runs("web", "t1")
    assert [(r.id, r.user_id, r.task) for r in runs] == [("r1", "ann", "first"), ("r4", "ann", "follow-up")]
    assert (await store.timeline("r4"))[0] == RunStarted("r4", task="follow-up", follow_up=1)  # named as a follow-up


# -- faults: a full disk, a failing write, a damaged file, a read-only folder -----------------------

async def turn_tokens(store, run_id):
    record = await store.run(run_id)
    return sum(t.usage.prompt_tokens for t in record.turns), record.summary.usage.prompt_tokens


async def test_a_full_disk_fails_the_write_whole_and_the_store_works_again_once_there_is_room(tmp_path):
    with small_disk(tmp_path) as disk:
        store = await SQLiteStore.open(disk.folder / "db.sqlite3")
        await start_run(store)
        await store.record(TurnFinished("r1", agent="planner", round=0, text="plan", usage=Usage(10, 5)))
        await disk.fill(store)
        with pytest.raises(StoreError, match=r"could not save the run to .*db.sqlite3: the disk is full; free some "
                                             r"space; what was saved before is kept"):
            await store.record(TurnFinished("r1", agent="programmer", round=1, text="x" * 200_000, usage=Usage(7, 3)))
        await disk.free(store)
        assert await turn_tokens(store, "r1") == (10, 10)  # the failed turn left nothing half-written
        await store.record(TurnFinished("r1", agent="programmer", round=1, text="code", usage=Usage(7, 3)))
        assert await turn_tokens(store, "r1") == (17, 17)
        await store.close()


async def refuse_token_updates_of_r2(store):
    """A trigger in the database that fails the update of run r2's token totals, as a failing disk might."""
    if isinstance(store, SQLiteStore):
        await store._db.execute("CREATE TRIGGER refuse BEFORE UPDATE OF prompt_tokens ON runs WHEN NEW.id = 'r2'"
                                " BEGIN SELECT RAISE(ABORT, 'refused'); END")
        await store._db.commit()
        return
    async with store._pool.connection() as db:
        await db.execute("CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS"
                         " $$ BEGIN RAISE EXCEPTION 'refused'; END $$")
        await db.execute("CREATE TRIGGER refuse BEFORE UPDATE OF prompt_tokens ON runs FOR EACH ROW"
                         " WHEN (NEW.id = 'r2') EXECUTE FUNCTION refuse()")


async def test_a_write_that_fails_half_way_leaves_nothing_behind(store):
    """The turn's row goes in, then the run's totals cannot be updated: the turn must go too."""
    await start_run(store, "r1", thread="t1")
    await start_run(store, "r2", thread="t2")
    await refuse_token_updates_of_r2(store)
    outcomes = await asyncio.gather(
        store.record(TurnFinished("r1", agent="planner", round=0, text="kept", usage=Usage(4, 1))),
        store.record(TurnFinished("r2", agent="planner", round=0, text="lost", usage=Usage(9, 1))),
        store.record(Notice("r1", "also kept")),
        return_exceptions=True,
    )
    assert outcomes[0] is None and isinstance(outcomes[1], StoreError) and outcomes[2] is None
    assert await turn_tokens(store, "r2") == (0, 0) and (await store.run("r2")).turns == []
    assert await turn_tokens(store, "r1") == (4, 4) and len((await store.run("r1")).notes) == 1


@pytest.mark.parametrize("header", [False, True], ids=["damaged pages", "damaged header"])
async def test_a_damaged_database_is_a_store_error_not_a_traceback(tmp_path, header):
    path = tmp_path / "db.sqlite3"
    store = await SQLiteStore.open(path)
    for i in range(40):
        await start_run(store, f"r{i}", thread=f"t{i}", task="a task worth a page " * 50)
        await store.record(TurnFinished(f"r{i}", agent="planner", round=0, text="plan " * 400))
    await store.close()
    damage(path, header=header)
    with pytest.raises(StoreError) as caught:
        store = await SQLiteStore.open(path)
        try:
            await store.mark_interrupted()
            await store.runs(100)
            for i in range(40):
                await store.run(f"r{i}")
        finally:
            await store.close()
    message = str(caught.value)
    assert "damaged" in message or "not an SQLite database" in message, message
    assert str(path) in message and "\n" not in message


async def test_a_read_only_folder_says_what_to_do(tmp_path):
    folder = tmp_path / "store"
    store = await SQLiteStore.open(folder / "db.sqlite3")
    await start_run(store)
    await store.close()
    with read_only(folder):
        with pytest.raises(StoreError, match=r"could not open .*db.sqlite3: its folder .*store is read-only; make the "
                                             r"folder writable, or set storage.path elsewhere"):
            store = await SQLiteStore.open(folder / "db.sqlite3")
            await store.close()
    with read_only(tmp_path):
        with pytest.raises(StoreError, match="read-only"):
            await SQLiteStore.open(tmp_path / "new" / "db.sqlite3")


async def test_token_counts_a_server_did_not_report_stay_marked_as_estimates_when_read_back(reopen):
    store = await reopen()
    await start_run(store)
    await start_run(store, "r2")
    await store.record(TurnFinished("r1", agent="planner", round=0, text="plan", usage=Usage(100, 50)))
    await store.record(TurnFinished("r1", agent="programmer", round=1, text="code", usage=Usage(400, 90, estimated=True)))
    await store.record(TurnFinished("r2", agent="planner", round=0, text="plan", usage=Usage(100, 50)))
    await store.record(TurnFinished("r2", agent="programmer", round=1, text="", usage=Usage(0, 0, estimated=True)))
    await store.close()

    store = await reopen()
    first, second = await store.run("r1"), await store.run("r2")
    assert first.summary.usage == Usage(500, 140, estimated=True)  # one estimate makes the sum one
    assert [t.usage.estimated for t in first.turns] == [False, True]
    assert "(estimated)" in first.summary.usage.tokens_text()
    assert not second.summary.usage.estimated  # an estimate of nothing changes no count
    timeline = await store.timeline("r1")
    assert [e.usage.estimated for e in timeline if isinstance(e, TurnFinished)] == [False, True]
    await store.close()


def _delete(db):
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{db}{suffix}")


def _move(db):
    os.rename(db, db.with_name("elsewhere.sqlite3"))


def _replace(db):
    other = db.with_name("other.sqlite3")
    sqlite3.connect(other).close()
    os.replace(other, db)


@pytest.mark.parametrize("lose", [_delete, _move, _replace], ids=["deleted", "moved", "replaced"])
async def test_a_database_file_gone_from_its_path_fails_the_next_write_and_the_check(tmp_path, lose):
    db = tmp_path / "db.sqlite3"
    store = await SQLiteStore.open(db)
    conversation = await store.conversation("terminal", "t1")
    await store.create_run("r1", conversation, "a task", "ann", [])
    lose(db)
    with pytest.raises(StoreError, match=rf"could not save the run to {re.escape(str(db))}: the database file was "
                                         r"(deleted or moved away|replaced by another file) while the bot had it open, "
                                         "so nothing more is recorded there"):
        await store.record(RunFinished("r1", status=RunStatus.PASSED, reason="tests passed"))
    with pytest.raises(StoreError, match="nothing more is recorded"):
        await store.check()
    with pytest.raises(StoreError, match="nothing more is recorded"):  # what /readyz asks
        await store.check_writable(1.0)
    assert lose is not _delete or not db.exists()  # the probe made no new file in its place
    await store.close()


async def test_a_run_s_repository_branch_and_pull_request_come_back_and_carry_into_follow_ups(store):
    conversation = await start_run(store)
    await store.set_repository("r1", "acme/billing", "codegen/r1")
    await store.record(CheckedIn("r1", result=CheckInResult("https://github.example/acme/billing/pull/7", "pull_request",
                                                            repository="acme/billing", branch="codegen/r1", head="abc123")))
    await store.record(RunFinished("r1", status=RunStatus.PASSED, reason="", files=FileSet({"a.py": "x\n"})))
    summary = (await store.run("r1")).summary
    assert (summary.repository, summary.branch, summary.pr_url, summary.head_commit) == (
        "acme/billing", "codegen/r1", "https://github.example/acme/billing/pull/7", "abc123")
    await start_run(store, "r2")
    prior = await store.prior_work(conversation, "r2")
    assert (prior.repository, prior.branch) == ("acme/billing", "codegen/r1")
