"""What ``FolderPublisher`` wrote in a folder, kept there, so that it replaces its own files and never a person's.

``--out`` may name a folder that already holds someone's work (their ``main.py``, their project's
``README.md``). A file of that name is replaced only when it is the one the bot wrote there before and nobody
has changed it since (its SHA-256 is in the record, ``.codegen-chat-files.json``), or when replacing it loses
nothing: the same content, or not a file of its own (a link, a pipe, one of several hard links). Any other file
is kept as it was, and the summary names it.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat

RECORD_NAME = ".codegen-chat-files.json"
KEPT = "a file of that name was already there and codegen-chat did not write it: kept as it was"
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
_LIMIT = 8 * 1024 * 1024  # a record larger than this is not one the bot wrote


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def load(root_fd: int) -> dict[str, str]:
    """The record in the folder open as ``root_fd`` (path -> SHA-256); empty when there is none or it is not ours."""
    try:
        fd = os.open(RECORD_NAME, _READ, dir_fd=root_fd)
    except OSError:
        return {}
    with os.fdopen(fd, "rb") as file:
        raw = file.read(_LIMIT + 1)
    try:
        record = json.loads(raw) if len(raw) <= _LIMIT else None
    except ValueError:
        return {}
    if not isinstance(record, dict):
        return {}
    return {k: v for k, v in record.items() if isinstance(k, str) and isinstance(v, str)}


def dump(record: dict[str, str]) -> bytes:
    return (json.dumps(record, indent=1, sort_keys=True) + "\n").encode()


def replaceable(folder_fd: int, name: str, existing: os.stat_result, path: str, data: bytes,
                record: dict[str, str]) -> bool:
    """Whether ``name`` (at ``path`` in the output folder, as ``existing`` stats it) may give way to ``data``."""
    if not stat.S_ISREG(existing.st_mode) or existing.st_nlink > 1:
        return True  # a link, a pipe, or a file that keeps its content under another name
    try:
        fd = os.open(name, _READ, dir_fd=folder_fd)
    except OSError:
        return False
    found = hashlib.sha256()
    with os.fdopen(fd, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            found.update(block)
    return found.hexdigest() in (digest(data), record.get(path))
