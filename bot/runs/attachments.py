"""Turns files a user gives with a task into text attachments, refusing what the team cannot read."""

from __future__ import annotations

from agents.errors import UserInputError
from agents.replies import ReplyFormatError, safe_path
from agents.types import Attachment


def check_size(name: str, size: int, max_bytes: int) -> None:
    """``UserInputError`` when a file's stated size is over the bound: said before it is downloaded."""
    if size > max_bytes:
        raise UserInputError(f"{name} is {size:,} bytes; attachments are limited to {max_bytes:,} bytes.")


def to_attachment(name: str, data: bytes, max_bytes: int, folders: bool = False) -> Attachment:
    """A text attachment, or ``UserInputError`` saying why the file is refused. ``folders``: ``name`` is a path in a
    repository (a linked file), kept whole; else the file is named by its own name alone."""
    try:
        path = safe_path(name.rsplit("/", 1)[-1] if "/" in name and not folders else name)
    except ReplyFormatError:
        raise UserInputError(f"{name}: not a usable file name.") from None
    if len(data) > max_bytes:
        raise UserInputError(f"{name} is too large: attachments are limited to {max_bytes:,} bytes.")
    if b"\x00" in data:
        raise UserInputError(f"{name} looks like a binary file; only text files can be attached.")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UserInputError(f"{name} is not UTF-8 text; only text files can be attached.") from None
    return Attachment(name=path, content=text)
