"""Reading a file a person names on the command line: regular files only, sized before they are read.

A name can point at something that is not a file to read: a named pipe (opening it for reading waits for
a writer, forever), a device (``/dev/zero`` never ends; opening some has side effects), a socket, a
folder, or a kernel pseudo-file (``/proc/self/environ`` reports size 0 yet holds the environment, its
secrets included). The file's type is checked before it is opened, the opened descriptor is checked
again (the name may have been swapped in between), and a file whose content is not the size the file
system reports is refused. The calls block, so async callers run ``read_regular_file`` in a thread.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

from agents.errors import UserInputError

_KINDS = {
    stat.S_IFIFO: "a named pipe", stat.S_IFCHR: "a device", stat.S_IFBLK: "a device", stat.S_IFSOCK: "a socket",
}


@dataclass(frozen=True)
class Use:
    """What the file is read as, for the sentences refusing it."""

    plural: str  # "attachments", "config files"
    instead: str  # what to do with a folder

    def refusal(self, problem: str) -> str:
        return f"{problem}; {self.plural} must be regular files."


ATTACHMENT = Use("attachments", "attach the files in it one by one")


def read_regular_file(name: str, max_bytes: int, use: Use = ATTACHMENT) -> bytes:
    """The bytes of the regular file ``name`` (links followed), or ``UserInputError`` saying why not."""
    try:
        _check(name, os.stat(name), max_bytes, use)
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
        try:
            info = os.fstat(fd)
            _check(name, info, max_bytes, use)
            data = _read(fd, info.st_size + 1)
        finally:
            os.close(fd)
    except OSError as error:
        raise UserInputError(f"Cannot read {name}: {error.strerror or error}.") from None
    if len(data) != info.st_size:
        raise UserInputError(f"{name} is not an ordinary file (its content is not the size the file system "
                             "reports, as with /proc and /sys entries, or it changed while read); use a copy.")
    return data


def kind_of(mode: int) -> str:
    """What a file of ``mode`` is, for a sentence refusing what is not a regular file: "a named pipe", ..."""
    return "a folder" if stat.S_ISDIR(mode) else _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def _check(name: str, info: os.stat_result, max_bytes: int, use: Use) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise UserInputError(f"{name} is a folder; {use.instead}.")
    if not stat.S_ISREG(info.st_mode):
        raise UserInputError(use.refusal(f"{name} is {kind_of(info.st_mode)}, not a regular file"))
    if info.st_size > max_bytes:
        raise UserInputError(f"{name} is {info.st_size:,} bytes; {use.plural} are limited to {max_bytes:,} bytes.")


def _read(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 16))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
