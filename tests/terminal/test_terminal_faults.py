"""The terminal when storage fails: a full disk mid-run, a damaged database, a read-only folder, an
``--out`` that cannot be a folder. Each ends with one line and a clean exit, never a traceback or a hang,
and never with a pass the store could not record."""

import asyncio
import contextlib
import io
import os
import sys

import pytest

from adapters.terminal import TerminalRun, run_in_terminal
from bot.checkin import FolderPublisher
from bot.model.client import OpenAIChatModel
from bot.runs.service import Service
from bot.store.sqlite import SQLiteStore
from tests.bot.disks import damage, read_only, small_disk
from tests.conftest import with_changes
from tests.fakes.team_script import ScriptedSandbox
from tests.terminal.test_terminal import ROOT, cli, script_team, write_config


class FillingSandbox(ScriptedSandbox):
    """Runs the tests, and the disk fills up while they run (after Plan, Code, Review and the Tester's turn)."""

    def __init__(self, disk, store):
        super().__init__()
        self.disk, self.store = disk, store

    async def run(self, job):
        await self.disk.fill(self.store)
        return await super().run(job)


async def test_a_disk_filling_up_mid_run_ends_it_with_an_error_not_a_pass(model_server, config, secrets, tmp_path):
    script_team(model_server)
    with small_disk(tmp_path) as disk:
        db = disk.folder / "db.sqlite3"
        store = await SQLiteStore.open(db)
        config = with_changes(config, storage={"path": str(db)})
        service = Service(config, store, OpenAIChatModel(config, secrets), FillingSandbox(disk, store))
        out = io.StringIO()
        status = await run_in_terminal(service, TerminalRun("find all intf keys", [], str(tmp_path / "out"), None),
                                       FolderPublisher, 10_000, "session-1", out=out)
        text = out.getvalue()
        assert status == 3
        assert f"ERROR — could not save the run to {db}: the disk is full; free some space" in text
        assert "PASSED" not in text and text.count("could not save the run") == 1
        assert not model_server.calls("checkin")  # the run ended there: nothing published as if recorded
        await disk.free(store)
        await store.close()
        store = await SQLiteStore.open(db)  # what was saved reads back whole: every turn in the run's totals
        record = (await store.runs())[0]
        full = await store.run(record.id)
        assert [t.agent for t in full.turns][:2] == ["planner", "programmer"]
        assert sum(t.usage.prompt_tokens for t in full.turns) == full.summary.usage.prompt_tokens
        assert full.summary.status in ("running", "error")  # "running" becomes "interrupted" at the next start
        await store.close()


def corrupt_config(tmp_path, base_url, *, header=False, extra=""):
    config = write_config(tmp_path, base_url, extra)
    db = tmp_path / "db.sqlite3"

    async def fill():
        store = await SQLiteStore.open(db)
        for i in range(40):
            conversation = await store.conversation("terminal", f"t{i}")
            await store.create_run(f"r{i}", conversation, "a task worth a page " * 50, "ann", [])
        await store.close()

    return config, db, fill


@pytest.mark.parametrize("header", [False, True], ids=["damaged pages", "damaged header"])
async def test_every_command_on_a_damaged_database_ends_with_one_line(model_server, tmp_path, header):
    config, db, fill = corrupt_config(tmp_path, model_server.base_url, extra="[slack]\nenabled = true\n")
    await fill()
    damage(db, header=header)
    for args in (["history"], ["history", "r3"], ["run", "task"], ["serve"]):
        code, out, err = await cli(tmp_path, *args, config=config)  # a hang fails here, at cli()'s timeout
        assert code == (3 if args[0] == "run" else 1) and "Traceback" not in err + out, (args, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and str(db) in lines[0], (args, err)
        assert "damaged" in lines[0] or "not an SQLite database" in lines[0], (args, err)
    code, out, err = await cli(tmp_path, "doctor", config=config)
    assert code == 1 and "[FAIL] store: could not" in out and "fix: " in out and "Traceback" not in err
    assert model_server.requests == [] or all(r.path.endswith("/models") for r in model_server.requests)


async def test_a_read_only_store_folder_says_what_to_do(model_server, tmp_path):
    config = write_config(tmp_path, model_server.base_url)
    store = await SQLiteStore.open(tmp_path / "db.sqlite3")
    await store.close()
    with read_only(tmp_path):
        for args in (["history"], ["run", "task"]):
            code, out, err = await cli(tmp_path, *args, config=config)
            assert code == (3 if args[0] == "run" else 1) and "Traceback" not in err, err
            assert f"its folder {tmp_path} is read-only; make the folder writable, or set storage.path elsewhere" in err


async def test_an_out_that_cannot_be_a_folder_is_refused_before_the_run(model_server, tmp_path):
    config = write_config(tmp_path, model_server.base_url)
    (tmp_path / "taken").write_text("a file")
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    for out_dir, words in (("taken", f"--out taken: {tmp_path / 'taken'} is a file, not a folder; name another"),
                           ("taken/sub", f"--out taken/sub: {tmp_path / 'taken'} is a file, not a folder"),
                           ("repo/.git/hooks", "--out repo/.git/hooks: it is inside '.git', a folder tools on this "
                                               "machine act on; choose another folder"),
                           # a folder nobody can make, whatever the permissions say (root included)
                           ("/proc/codegen-out", "--out /proc/codegen-out: /proc cannot be written: no folder can be made")):
        code, _, err = await cli(tmp_path, "run", "task", "--out", out_dir, config=config)
        assert code == 2 and words in err and "Traceback" not in err, err
    assert model_server.requests == []


async def test_a_store_that_fails_when_the_run_is_recorded_is_one_line(model_server, tmp_path):
    """The run cannot even be created: the command says so and exits, the model is never called."""
    config = write_config(tmp_path, model_server.base_url)
    store = await SQLiteStore.open(tmp_path / "db.sqlite3")
    await store._db.execute("CREATE TRIGGER no_runs BEFORE INSERT ON runs BEGIN SELECT RAISE(ABORT, 'no'); END")
    await store._db.commit()
    await store.close()
    code, out, err = await cli(tmp_path, "run", "task", config=config)
    assert code == 3 and "could not save the run to" in err and "Traceback" not in err
    assert model_server.requests == []


def test_the_process_exits_when_the_store_fails_at_start(tmp_path):
    """aiosqlite's thread kept the process alive after a failed start; run to the end, not to a timeout."""
    db = tmp_path / "db.sqlite3"
    db.write_bytes(b"garbage" * 1000)
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\npath = "{db}"\n')
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PYTHONPATH": str(ROOT), "CODEGEN_CONFIG": str(config)}

    async def history():
        proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "codegen_chat.cli", "history", env=env,
                                                    stderr=asyncio.subprocess.PIPE)
        _, err = await proc.communicate()
        return proc.returncode, err.decode()

    code, err = asyncio.run(asyncio.wait_for(history(), 60))
    assert code == 1 and "not an SQLite database" in err


class OutDirTakenSandbox(ScriptedSandbox):
    """While the tests run, something puts a file where the output folder was to be made."""

    def __init__(self, out_dir):
        super().__init__()
        self.out_dir = out_dir

    async def run(self, job):
        self.out_dir.write_text("in the way\n")
        return await super().run(job)


async def test_the_summary_prints_even_when_no_file_could_be_saved(model_server, config, secrets, store, tmp_path):
    script_team(model_server)
    out_dir = tmp_path / "out"
    service = Service(config, store, OpenAIChatModel(config, secrets), OutDirTakenSandbox(out_dir))
    out = io.StringIO()
    status = await run_in_terminal(service, TerminalRun("find all intf keys", [], str(out_dir), None),
                                   FolderPublisher, 10_000, "session-1", out=out)
    text = out.getvalue()
    assert status == 0 and "PASSED — " in text  # the run itself passed; saving is reported, not fatal
    assert f"Files: {out_dir} (Could not write the files to {out_dir}: {out_dir} is a file, not a folder)" in text
    assert "Tokens: " in text


class DeletingSandbox(ScriptedSandbox):
    """While the tests run, another program deletes the database and its -wal and -shm files."""

    def __init__(self, db):
        super().__init__()
        self.db = db

    async def run(self, job):
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{self.db}{suffix}")
        return await super().run(job)


async def test_a_database_deleted_mid_run_ends_it_with_an_error_and_the_files_still_in_out(
        model_server, config, secrets, tmp_path):
    script_team(model_server)
    db, out_dir = tmp_path / "db.sqlite3", tmp_path / "out"
    store = await SQLiteStore.open(db)
    service = Service(config, store, OpenAIChatModel(config, secrets), DeletingSandbox(db))
    out = io.StringIO()
    status = await run_in_terminal(service, TerminalRun("find all intf keys", [], str(out_dir), None),
                                   FolderPublisher, 10_000, "session-1", out=out)
    text = out.getvalue()
    assert status == 3 and "PASSED" not in text, text  # 3: a part (the store) failed
    assert f"ERROR — could not save the run to {db}: the database file was deleted or moved away" in text
    assert text.count("could not save the run") == 1
    # what the run produced is kept where the person asked
    assert (out_dir / "intf.py").is_file() and (out_dir / "test_intf.py").is_file()
    await store.close()


@pytest.mark.parametrize("kind", ["a named pipe", "a device"])
async def test_a_store_path_that_is_no_file_is_named_as_what_it_is(model_server, tmp_path, kind):
    """`storage.path = "/dev/null"` read "another program holds the database locked", a named pipe "the disk
    reported an error": neither says what to change."""
    path = "/dev/null" if kind == "a device" else str(tmp_path / "pipe.sqlite3")
    if kind == "a named pipe":
        os.mkfifo(path)
    config = tmp_path / "store.toml"
    config.write_text(f'[llm]\nbase_url = "{model_server.base_url}"\n[storage]\npath = "{path}"\n')
    for args in (["history"], ["run", "task"]):
        code, _, err = await cli(tmp_path, *args, config=config)
        assert code == (3 if args[0] == "run" else 1), err
        assert err == (f"codegen-chat: could not open {path}: it is {kind}, not a database file; set storage.path to "
                       "a file, such as codegen.sqlite3\n"), err
