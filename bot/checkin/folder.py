"""``FolderPublisher``: the fallback for the terminal, the files and README.md written to a local folder.

Saving is best-effort per file: a file that cannot be written (a name the file system refuses, a file
where its folder should be, a full disk) is named with the reason, and the others are still written.

Inside the folder nothing is followed: every folder on the way to a file is opened relative to the
one before it with ``O_NOFOLLOW``, so an existing link (``out/x -> out/.git``, ``out/x -> ~``) stops
the write instead of carrying it elsewhere, and a file is written to a fresh temporary name and then
renamed over the old one, so an existing link, hard link or pipe of that name is replaced, never
written through. A file someone else put there is never replaced (``bot.checkin.folder_record``). The
folder itself may not be, or be inside, a folder that tools on the user's machine act on (``.git`` and the others
``agents.paths`` names).
"""

from __future__ import annotations

import asyncio
import errno
import os
import secrets
import stat
import tempfile
from pathlib import Path, PurePosixPath

from agents.errors import CheckInError
from agents.paths import host_control_name
from agents.types import CheckInResult, Publication
from bot.checkin import folder_record
from bot.checkin.files import README_NAME, Skipped, folder_layout
from bot.checkin.readme import compose_readme

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class FolderPublisher:
    """Writes into ``root`` (created when missing); a later run replaces its own files there, never others."""

    def __init__(self, root: str | Path) -> None:
        self._root = Path(root).expanduser()

    async def publish(self, publication: Publication) -> CheckInResult:
        files, skipped = folder_layout(publication.files)
        readme = compose_readme(publication, skipped=skipped)
        # Disk writes block; a slow or network disk must not stall other runs.
        root, refused = await asyncio.to_thread(self._write_all, {**files, PurePosixPath(README_NAME): readme})
        return CheckInResult(location=str(root), kind="folder", note=_note([*skipped, *refused]))

    def _write_all(self, files: dict[PurePosixPath, str]) -> tuple[Path, list[Skipped]]:
        problem = folder_problem(self._root)
        if problem:
            raise CheckInError(f"Could not write the files to {self._root}: {problem}")
        try:
            self._root.mkdir(parents=True, exist_ok=True)
            root = self._root.resolve()
            root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as error:
            raise CheckInError(f"Could not write the files to {self._root}: {error.strerror or error}") from None
        try:
            record = folder_record.load(root_fd)
            refused = [s for path, content in files.items() if (s := _write(root_fd, path, content, record))]
            try:
                _replace(root_fd, folder_record.RECORD_NAME, folder_record.dump(record))
            except OSError:
                pass  # without it, a later run keeps these files as if someone else's: safe, and said then
            return root, refused
        finally:
            os.close(root_fd)


def folder_problem(path: Path) -> str | None:
    """Why files could never be saved in ``path`` (a file in the way, no permission, a control folder),
    or ``None``. Checked before a run starts and again before writing."""
    resolved = path.expanduser().resolve()
    inside = next((part for part in resolved.parts if host_control_name(part)), None)
    if inside:
        return f"it is inside {inside!r}, a folder tools on this machine act on; choose another folder"
    existing = next(p for p in (resolved, *resolved.parents) if p.exists())
    if not existing.is_dir():
        return f"{existing} is a file, not a folder"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"{existing} cannot be written"
    try:  # what permissions do not tell: root may write anywhere, yet not in /proc, /sys or a full file system
        os.rmdir(tempfile.mkdtemp(prefix=".codegen-probe-", dir=existing))
    except OSError as error:
        return f"{existing} cannot be written: no folder can be made in it ({(error.strerror or str(error)).lower()})"
    return None


def _write(root_fd: int, path: PurePosixPath, content: str, record: dict[str, str]) -> Skipped | None:
    """Writes one file below the folder open as ``root_fd``, following no link, and notes it in ``record``; the
    reason when it cannot."""
    if str(path) == folder_record.RECORD_NAME:
        return Skipped(str(path), "the folder's record of the files codegen-chat wrote has that name")
    try:
        # surrogateescape writes back the exact bytes of a file that was read as binary.
        data = content.encode("utf-8", errors="surrogateescape")
    except UnicodeEncodeError:
        return Skipped(str(path), "not text that can be saved (invalid characters)")
    *folders, name = path.parts
    folder_fd = os.dup(root_fd)
    try:
        for depth, part in enumerate(folders):
            inner = _enter(folder_fd, part, "/".join(folders[: depth + 1]))
            os.close(folder_fd)
            folder_fd = inner
        _replace(folder_fd, name, data, str(path), record)
    except _Refused as refused:
        return Skipped(str(path), str(refused))
    except OSError as error:
        return Skipped(str(path), _reason(error))
    finally:
        os.close(folder_fd)
    record[str(path)] = folder_record.digest(data)
    return None


class _Refused(Exception):
    """One file cannot be written; ``str()`` says why, for the README and the summary."""


def _enter(parent_fd: int, part: str, shown: str) -> int:
    """The folder ``part`` inside ``parent_fd`` (made when missing), opened without following a link."""
    try:
        try:
            os.mkdir(part, 0o755, dir_fd=parent_fd)
        except FileExistsError:
            pass
        return os.open(part, _DIRECTORY, dir_fd=parent_fd)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EEXIST):
            kind = "a link" if _is_link(parent_fd, part) else "a file"
            raise _Refused(f"{shown} is {kind}, not a folder (links are never followed)") from None
        raise


def _replace(folder_fd: int, name: str, data: bytes, path: str = "", record: dict[str, str] | None = None) -> None:
    """``name`` holds ``data`` afterwards; whatever had that name (a link too) was replaced, not written to. With
    ``record``, a file of that name the bot did not write (at ``path``) is kept instead (``_Refused``)."""
    try:
        existing = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
    except FileNotFoundError:
        existing = None
    if existing is not None and stat.S_ISDIR(existing.st_mode):
        raise _Refused("a folder of that name is in the way")
    if existing is not None and record is not None and not folder_record.replaceable(
            folder_fd, name, existing, path, data, record):
        raise _Refused(folder_record.KEPT)
    temporary = f".codegen-{secrets.token_hex(6)}.tmp"
    fd = os.open(temporary, _NEW_FILE, 0o644, dir_fd=folder_fd)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        os.rename(temporary, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
    except BaseException:
        try:
            os.unlink(temporary, dir_fd=folder_fd)
        except OSError:
            pass
        raise


def _is_link(parent_fd: int, part: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(part, dir_fd=parent_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


_REASONS = {
    errno.ENAMETOOLONG: "the name is too long for this file system",
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EROFS: "the folder is read-only",
    errno.EISDIR: "a folder of that name is in the way",
}


def _reason(error: OSError) -> str:
    return _REASONS.get(error.errno or 0, (error.strerror or str(error)).lower())


def _note(skipped: list[Skipped]) -> str:
    if not skipped:
        return ""
    listed = "; ".join(f"{s.path} ({s.reason})" for s in skipped)
    return f"not written: {listed}"
