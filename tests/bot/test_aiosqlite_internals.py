"""The parts of aiosqlite that are not its public API and that the SQLite store uses (``bot.store.sqlite``):
``Connection._execute`` runs a function in the connection's thread and ``Connection._conn`` is the ``sqlite3``
connection there (the batched writes of ``_write_at_once``); ``Connection._thread`` is that thread, waited for
after a failed open. aiosqlite offers no public way to run one function (a batch of savepoints and one commit) in
that thread, nor to wait for it after a failed connect; pyproject.toml bounds the version to those that have
these, and this test says which is gone when a new version drops one."""

import inspect
import sqlite3
import threading

import aiosqlite

WHY = ("bot.store.sqlite runs each batch of writes through it; find the new way into the connection's thread, "
       "or keep aiosqlite below this version in pyproject.toml")


def test_aiosqlite_still_has_the_connection_internals_the_store_uses():
    version = aiosqlite.__version__
    assert inspect.iscoroutinefunction(getattr(aiosqlite.Connection, "_execute", None)), (
        f"aiosqlite {version} has no coroutine Connection._execute: {WHY}")
    assert isinstance(getattr(aiosqlite.Connection, "_conn", None), property), (
        f"aiosqlite {version} has no Connection._conn property: {WHY}")
    assert isinstance(getattr(aiosqlite.connect(":memory:"), "_thread", None), threading.Thread), (
        f"aiosqlite {version} has no Connection._thread: {WHY}")


async def test_execute_runs_the_function_in_the_connections_thread_on_its_sqlite3_connection(tmp_path):
    async with aiosqlite.connect(tmp_path / "store.sqlite3") as db:
        def where() -> tuple[int, bool]:
            return threading.get_ident(), isinstance(db._conn, sqlite3.Connection) and db._conn.total_changes == 0

        thread, connection_there = await db._execute(where)
    assert thread != threading.get_ident() and connection_there, f"aiosqlite {aiosqlite.__version__}: {WHY}"
