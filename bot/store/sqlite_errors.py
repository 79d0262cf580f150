"""What SQLite's failures mean for a person: its result codes (a full disk, a read-only file, a damaged file,
a lock) turned into ``StoreError`` sentences that name the database and the remedy."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

from bot.safety.local_files import kind_of
from bot.store.errors import StoreError

_PROBLEMS = {  # SQLite's primary result codes -> (what happened, what to do)
    sqlite3.SQLITE_FULL: ("the disk is full", "free some space"),
    sqlite3.SQLITE_READONLY: ("the database is read-only", "make it and its folder writable, or set storage.path"
                              " to a writable place"),
    sqlite3.SQLITE_CORRUPT: ("the database file is damaged", "move it aside (a new one is made at the next start)"
                             " or restore a backup"),
    sqlite3.SQLITE_NOTADB: ("the file is not an SQLite database", "point storage.path at the bot's database,"
                            " or at a new file"),
    sqlite3.SQLITE_IOERR: ("the disk reported an error", "check the disk and its free space"),
    sqlite3.SQLITE_BUSY: ("another program holds the database locked", "try again, or stop the other program"),
    sqlite3.SQLITE_LOCKED: ("another program holds the database locked", "try again, or stop the other program"),
    sqlite3.SQLITE_CANTOPEN: ("the database file cannot be opened", "check that its folder exists and is writable"),
    sqlite3.SQLITE_PERM: ("permission was denied", "check the permissions of the file and its folder"),
}


def store_error(doing: str, path: Path, error: BaseException) -> StoreError:
    """``doing`` is what failed, as in "could not {doing} {path}": "save the run to", "read"."""
    what, fix = _problem(path, error)
    kept = "; what was saved before is kept" if doing.startswith("save") else ""
    return StoreError(f"could not {doing} {path}: {what}; {fix}{kept}")


FileIdentity = tuple[int, int]  # a file's device and inode


def file_identity(path: Path) -> FileIdentity | None:
    """The device and inode of the file at ``path`` (None when it cannot be seen: nothing to compare)."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def lost_file(path: Path, identity: FileIdentity) -> str:
    """What became of the open database file, when ``path`` no longer leads to it; empty while it does."""
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return "the database file was deleted or moved away while the bot had it open"
    except OSError as error:
        return f"the database file can no longer be reached ({(error.strerror or str(error)).lower()})"
    if (found.st_dev, found.st_ino) != identity:
        return "the database file was replaced by another file while the bot had it open"
    return ""


def file_lost_error(doing: str, path: Path, what: str) -> StoreError:
    """Nothing more is recorded once the file is gone: a run ends with this rather than look recorded."""
    return StoreError(f"could not {doing} {path}: {what}, so nothing more is recorded there; restart the bot to "
                      "use the file now at that path (a new one is made if none is)")


def _problem(path: Path, error: BaseException) -> tuple[str, str]:
    if kind := _not_a_file(path):  # SQLite reads a device as locked, a named pipe as a disk error
        fix_in = " in it" if kind == "a folder" else ""
        return f"it is {kind}, not a database file", f"set storage.path to a file{fix_in}, such as codegen.sqlite3"
    if isinstance(error, OSError):
        return (error.strerror or str(error)).lower(), "check the path and its permissions"
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None and (code & 0xFF) in _PROBLEMS:
        what, fix = _PROBLEMS[code & 0xFF]
        if code & 0xFF in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN) and not _writable(path.parent):
            return f"its folder {path.parent} is read-only", "make the folder writable, or set storage.path elsewhere"
        return what, fix
    return str(error), "see the log for details"


def _not_a_file(path: Path) -> str:
    """What ``path`` is when it is there and not a regular file ("a folder", "a named pipe", "a device"); else ''."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return ""
    return "" if stat.S_ISREG(mode) else kind_of(mode)


def _writable(folder: Path) -> bool:
    return os.access(folder, os.W_OK | os.X_OK)
