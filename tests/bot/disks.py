"""Real storage faults for the store's tests: a disk that fills up, a read-only folder, a damaged file.

Where this process may mount (root, as in CI), the disk is a small tmpfs and a read-only folder is a
read-only mount: the kernel says ENOSPC and EROFS as it would for a real disk. Elsewhere the disk is
SQLite's ``max_page_count`` (SQLite reports SQLITE_FULL the same way) and the folder is chmod 555.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

from bot.store.sqlite import SQLiteStore


def _mount(*args: str) -> bool:
    return os.geteuid() == 0 and subprocess.run(["mount", *args], capture_output=True).returncode == 0


def _unmount(folder: Path) -> None:
    subprocess.run(["umount", "-l", str(folder)], capture_output=True)


class SmallDisk:
    """A folder on a disk that ``fill`` makes full and ``free`` empties again."""

    def __init__(self, folder: Path, mounted: bool) -> None:
        self.folder, self.mounted = folder, mounted
        self._filler = folder / "filler"

    async def fill(self, store: SQLiteStore) -> None:
        if self.mounted:
            with self._filler.open("ab") as file:
                with contextlib.suppress(OSError):
                    while True:
                        file.write(b"\0" * 65536)
                        file.flush()
            return
        # No mount here: the database may not grow past the pages it has (SQLite says SQLITE_FULL).
        await store._db.execute("PRAGMA max_page_count = 1")

    async def free(self, store: SQLiteStore | None = None) -> None:
        if self.mounted:
            self._filler.unlink(missing_ok=True)
        elif store is not None:
            await store._db.execute("PRAGMA max_page_count = 1073741823")


@contextlib.contextmanager
def small_disk(tmp_path: Path, size: str = "2m") -> Iterator[SmallDisk]:
    folder = tmp_path / "disk"
    folder.mkdir()
    mounted = _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder))
    try:
        yield SmallDisk(folder, mounted)
    finally:
        if mounted:
            _unmount(folder)


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """``folder`` (and what is in it) cannot be written while inside the block."""
    mounted = _mount("--bind", "-o", "ro", str(folder), str(folder))
    if mounted:
        _mount("-o", "remount,bind,ro", str(folder))  # older mounts ignore ro on the first bind
    else:
        folder.chmod(0o555)
    try:
        probe = folder / ".probe"
        try:
            probe.write_text("")
            probe.unlink()
            raise AssertionError(f"{folder} is still writable")
        except OSError as error:
            assert error.errno in (errno.EROFS, errno.EACCES)
        yield
    finally:
        if mounted:
            _unmount(folder)
        else:
            folder.chmod(0o755)


def damage(path: Path, *, header: bool = False) -> None:
    """Overwrite pages of a real database file: its header, or pages holding the runs' rows."""
    with sqlite3.connect(path) as db:  # fold the WAL into the file first, so the damage is what gets read
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page = 4096
    with path.open("r+b") as file:
        if header:
            file.write(b"this is not a database at all, sorry" * 3)
            return
        size = path.stat().st_size
        for number in range(1, size // page):
            file.seek(number * page + 8)
            file.write(os.urandom(page - 16))
