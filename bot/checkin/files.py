"""Which of a run's files can be checked in, and under which names.

A Gist is one flat folder of text files: no slashes in names, no empty files, and very large files are
truncated by the API. Rather than fail a check-in over one odd file, each file that cannot go in is left
out with a reason a person can read, and nested paths get flat, readable names (``src/app.py`` becomes
``src__app.py``) with the mapping written into the README.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from agents.paths import UnsafePath, project_path

FLAT_SEPARATOR = "__"
README_NAME = "README.md"

_UNSAFE_CHARS = re.compile(r'[<>:"|?*]')  # fine on Linux, refused by Windows


@dataclass(frozen=True)
class Skipped:
    path: str
    reason: str


@dataclass(frozen=True)
class Layout:
    """The files to publish by published name, plus what was renamed or left out and why."""

    files: dict[str, str] = field(default_factory=dict)
    renamed: dict[str, str] = field(default_factory=dict)  # published name -> original path
    skipped: tuple[Skipped, ...] = ()


def safe_parts(path: str) -> tuple[str, ...] | None:
    """The path's segments by the rule every writer shares (``agents.paths``), or ``None`` when it is
    refused; characters Windows forbids in names become ``_`` (people download Gists)."""
    return None if refusal(path) else _parts(path)


def refusal(path: str) -> str | None:
    """Why ``path`` cannot be written, or ``None`` when it can."""
    try:
        project_path(path)
    except UnsafePath as error:
        return str(error)
    return None


def _parts(path: str) -> tuple[str, ...]:
    return tuple(_UNSAFE_CHARS.sub("_", p) for p in project_path(path).split("/"))


def unfit_reason(content: str, max_bytes: int) -> str | None:
    """Why a file's content cannot be published as text, or ``None`` when it can."""
    if not content.strip():
        return "empty: a Gist cannot hold an empty file; create it yourself with no content"
    if "\x00" in content:
        return "binary content: a Gist holds text only"
    try:
        size = len(content.encode("utf-8"))
    except UnicodeEncodeError:
        return "binary content: not valid UTF-8 text"
    if size > max_bytes:
        return f"too large to publish ({size:,} bytes, the limit is {max_bytes:,})"
    return None


def flat_name(path: str) -> str:
    """The one-level name a nested path gets where folders cannot exist (``src/app.py`` -> ``src__app.py``)."""
    parts = safe_parts(path)
    return FLAT_SEPARATOR.join(parts) if parts else path.replace("/", FLAT_SEPARATOR)


def gist_layout(files: Mapping[str, str], max_bytes: int) -> Layout:
    """Flat, unique, safe names for every publishable file; ``README.md`` is kept free for the README."""
    published: dict[str, str] = {}
    renamed: dict[str, str] = {}
    skipped: list[Skipped] = []
    taken = {README_NAME.lower()}
    for path, content in files.items():
        reason = refusal(path) or unfit_reason(content, max_bytes)
        if reason is not None:
            skipped.append(Skipped(path, reason))
            continue
        name = unique_name(flat_name(path), taken)
        taken.add(name.lower())
        published[name] = content
        if name != path:
            renamed[name] = path
    return Layout(published, renamed, tuple(skipped))


def folder_layout(files: Mapping[str, str]) -> tuple[dict[PurePosixPath, str], tuple[Skipped, ...]]:
    """Files keyed by a safe relative path for a real folder, which keeps nesting and empty files."""
    kept: dict[PurePosixPath, str] = {}
    skipped: list[Skipped] = []
    for path, content in files.items():
        reason = refusal(path)
        if reason is not None:
            skipped.append(Skipped(path, reason))
            continue
        parts = _parts(path)
        if PurePosixPath(*parts) == PurePosixPath(README_NAME):
            kept[PurePosixPath(unique_name(README_NAME, {README_NAME.lower()}))] = content
        else:
            kept[PurePosixPath(*parts)] = content
    return kept, tuple(skipped)


def unique_name(name: str, taken: set[str]) -> str:
    """``name``, or ``stem-2.ext``, ``stem-3.ext``... when taken (compared without case, as on macOS)."""
    if name.lower() not in taken:
        return name
    stem, dot, ext = name.rpartition(".") if "." in name.lstrip(".") else (name, "", "")
    number = 2
    while f"{stem}-{number}{dot}{ext}".lower() in taken:
        number += 1
    return f"{stem}-{number}{dot}{ext}"
