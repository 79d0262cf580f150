"""Reading a folder from the host for ``codegen-chat sandbox run``: regular files only, never through a link.

The folder may hold anything: links to ``/proc/self/environ`` or ``../outside.txt``, a linked folder,
FIFOs, devices, a 1 GB sparse file, a million files, a file swapped for a link while it is read. So:

- folders are opened relative to their parent's descriptor with ``O_NOFOLLOW | O_DIRECTORY``, never by
  path, so a link (or a folder swapped for one after it was listed) is never entered, and no other file
  system (a bind mount of ``/proc``) is crossed;
- files are opened the same way with ``O_NONBLOCK`` (a FIFO cannot block the open), then checked with
  ``fstat`` on the descriptor: a regular file, the very one that was listed, with no other hard link,
  within the bytes left; only then is it read, and never more than its size plus one byte, so a file
  that grows or lies about its size (as ``/proc`` files do) is refused rather than read on;
- the bytes of all files are capped (``[sandbox] max_upload_bytes``), and so are the entries looked at.

Whatever is left out is named with the reason, so a person sees what did not travel.
"""

from __future__ import annotations

import errno
import itertools
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from agents.errors import SandboxError
from agents.paths import MAX_DEPTH, UnsafePath, project_path
from agents.types import FileSet

# Dependencies, caches and build output: rebuilt inside the sandbox, never uploaded.
SKIPPED_FOLDERS = frozenset({".git", "__pycache__", "node_modules", "target", ".venv", ".pytest_cache"})
MAX_ENTRIES = 20_000  # names looked at in all, files and folders: a huge tree is cut, not walked for minutes

_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_FOLDER_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC


@dataclass
class FolderRead:
    """The text files read, and every name left out with why (relative paths)."""

    files: dict[str, str] = field(default_factory=dict)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    size: int = 0
    entries: int = 0
    cut: bool = False  # the entry limit was reached: the rest was not looked at

    def skip(self, path: str, why: str) -> None:
        self.skipped.append((path, why))

    def fileset(self) -> FileSet:
        return FileSet(self.files)


def read_folder(root: Path, max_bytes: int, max_entries: int = MAX_ENTRIES) -> FolderRead:
    """Every regular UTF-8 file under ``root``, by the rules above. Blocking: call it in a worker thread."""
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        raise SandboxError(f"{root} is not a folder: pass the folder that holds the code and its tests") from None
    read = FolderRead()
    try:
        _walk(fd, "", os.fstat(fd).st_dev, read, max_bytes, max_entries)
    finally:
        os.close(fd)
    return read


def _walk(fd: int, prefix: str, device: int, read: FolderRead, max_bytes: int, max_entries: int) -> None:
    try:
        with os.scandir(fd) as listing:
            # Never more names than the limit leaves, so a folder of a million files costs little.
            entries = sorted(itertools.islice(listing, max_entries - read.entries + 1), key=lambda e: e.name)
    except OSError as error:
        read.skip(prefix or "./", f"cannot be listed ({os.strerror(error.errno or 0)})")
        return
    for entry in entries:
        if read.cut:
            return
        if read.entries >= max_entries:
            read.cut = True
            read.skip(prefix or "./", f"the rest of the folder is not read: over {max_entries:,} names")
            return
        read.entries += 1
        path = prefix + entry.name
        try:
            listed = entry.stat(follow_symlinks=False)
        except OSError as error:
            read.skip(path, f"cannot be read ({os.strerror(error.errno or 0)})")
            continue
        if stat.S_ISDIR(listed.st_mode):
            _enter(fd, entry.name, path, device, read, max_bytes, max_entries)
        else:
            _read_file(fd, entry.name, path, listed, read, max_bytes)


def _enter(fd: int, name: str, path: str, device: int, read: FolderRead, max_bytes: int,
           max_entries: int) -> None:
    if name in SKIPPED_FOLDERS:
        read.skip(path + "/", "dependencies, caches and build output are not uploaded")
        return
    if path.count("/") + 1 >= MAX_DEPTH:
        read.skip(path + "/", f"nested deeper than {MAX_DEPTH} levels")
        return
    try:
        child = os.open(name, _FOLDER_FLAGS, dir_fd=fd)
    except OSError as error:
        read.skip(path + "/", _open_failure(error))
        return
    try:
        if os.fstat(child).st_dev != device:
            read.skip(path + "/", "on another file system (a mount point)")
            return
        _walk(child, path + "/", device, read, max_bytes, max_entries)
    finally:
        os.close(child)


def _read_file(fd: int, name: str, path: str, listed: os.stat_result, read: FolderRead, max_bytes: int) -> None:
    if not stat.S_ISREG(listed.st_mode):
        read.skip(path, _not_regular(listed.st_mode))
        return
    try:
        path.encode("utf-8")
        project_path(path)
    except UnicodeEncodeError:
        read.skip(path, "its name is not UTF-8")
        return
    except UnsafePath as error:
        read.skip(path, str(error))
        return
    try:
        file = os.open(name, _OPEN_FLAGS, dir_fd=fd)
    except OSError as error:
        read.skip(path, _open_failure(error))
        return
    try:
        data, why = _read_checked(file, listed, max_bytes - read.size, max_bytes)
    finally:
        os.close(file)
    if data is None:
        read.skip(path, why)
        return
    try:
        read.files[path] = data.decode("utf-8")
    except UnicodeDecodeError:
        read.skip(path, "not UTF-8 text")
        return
    read.size += len(data)


def _read_checked(file: int, listed: os.stat_result, room: int, limit: int) -> tuple[bytes | None, str]:
    """The file's bytes, or None and why not, from checks on the open descriptor itself."""
    opened = os.fstat(file)
    if not stat.S_ISREG(opened.st_mode):
        return None, _not_regular(opened.st_mode)
    if (opened.st_dev, opened.st_ino) != (listed.st_dev, listed.st_ino):
        return None, "changed while the folder was read"
    if opened.st_nlink > 1:
        return None, "has other hard links, so its content may belong outside the folder"
    if opened.st_size > room:
        return None, (f"{opened.st_size:,} bytes, more than is left of the {limit:,}-byte upload limit "
                      "([sandbox] max_upload_bytes)")
    chunks: list[bytes] = []
    wanted = opened.st_size + 1  # one byte more than its size tells a file that grows or lies
    while wanted > 0:
        chunk = os.read(file, min(wanted, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        wanted -= len(chunk)
    data = b"".join(chunks)
    if len(data) != opened.st_size:
        return None, "changed while it was read"
    return data, ""


def _open_failure(error: OSError) -> str:
    if error.errno in (errno.ELOOP, errno.ENOTDIR):  # what O_NOFOLLOW answers for a link
        return "replaced after it was listed, by a link or another kind of file: links are never followed"
    return f"cannot be opened ({os.strerror(error.errno or 0)})"


def _not_regular(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a link: links are never followed"
    if stat.S_ISFIFO(mode):
        kind = "a FIFO"
    elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        kind = "a device"
    elif stat.S_ISSOCK(mode):
        kind = "a socket"
    else:
        kind = "a special file"
    return f"{kind}, not a regular file"


def shown(path: str) -> str:
    """A name as it may be printed: control characters (terminal escapes) made visible."""
    return _CONTROL_CHARS.sub(lambda match: f"\\x{ord(match.group()):02x}", path)
