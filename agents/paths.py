"""The one rule for a file path that came from outside (a model's reply, a user's attachment, a folder).

A path the team may write is relative, stays inside the project, and names nothing that a tool on the
user's machine would execute just by looking at the folder. Every place that turns such a path into a
file (the sandbox's archive, the output folder, a Gist, a chat attachment) goes through
``project_path``, so they all refuse the same things:

- absolute paths, drive letters, ``..`` that climbs out, empty names;
- control characters (a name is printed in terminals and chat) and overlong names (255 bytes a part,
  ``MAX_PATH_CHARS`` in all, ``MAX_DEPTH`` folders);
- host control names, in any part of the path, compared the way case-insensitive file systems do
  (case folded; trailing dots and spaces, and characters those systems ignore, dropped):
  version-control folders (``.git`` and its 8.3 short name ``git~1``, ``.hg``, ``.svn``, ``.bzr``,
  ``_darcs``, ``.jj``), which run hooks and configured commands on ``git status`` and the like;
  editor folders that run tasks when a folder is opened (``.vscode``, ``.idea``); and files that run
  commands when a shell enters the folder or a package manager starts there (``.envrc``, ``.npmrc``,
  ``.yarnrc``, ``.yarnrc.yml``, ``.pnpmfile.cjs``).
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Iterable

MAX_PART_BYTES = 255  # NAME_MAX on Linux and macOS
MAX_PATH_CHARS = 1024
MAX_DEPTH = 32

CONTROL_FOLDERS = frozenset({".git", "git~1", ".hg", ".svn", ".bzr", "_darcs", ".jj", ".vscode", ".idea"})
CONTROL_FILES = frozenset({".envrc", ".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs"})
CONTROL_NAMES = CONTROL_FOLDERS | CONTROL_FILES

_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_DRIVE = re.compile(r"^[A-Za-z]:")


class UnsafePath(ValueError):
    """A path the team may not write; ``str()`` says why, for a person or a model."""


def project_path(raw: str) -> str:
    """``raw`` as a normalised relative path (``./a//b/../c.py`` -> ``a/c.py``), or ``UnsafePath``."""
    text = raw.strip().strip("`'\"").replace("\\", "/")
    if _CONTROL_CHARS.search(text):
        raise UnsafePath(f"file path {_shown(raw)} holds control characters")
    if not text or text.startswith("/") or _DRIVE.match(text):
        raise UnsafePath(f"file path {_shown(raw)} must be relative and stay inside the project")
    cleaned = posixpath.normpath(text)
    if cleaned in ("", ".", "..") or cleaned.startswith("../"):
        raise UnsafePath(f"file path {_shown(raw)} must be relative and stay inside the project")
    parts = cleaned.split("/")
    if len(cleaned) > MAX_PATH_CHARS or len(parts) > MAX_DEPTH:
        raise UnsafePath(f"file path {_shown(raw)} is too long ({len(cleaned):,} characters, {len(parts)} levels)")
    for part in parts:
        if len(part.encode("utf-8", errors="surrogatepass")) > MAX_PART_BYTES:
            raise UnsafePath(f"file name {_shown(part)} is longer than {MAX_PART_BYTES} bytes")
        if host_control_name(part):
            raise UnsafePath(f"file path {_shown(raw)} names {part!r}, which tools on the user's machine act on; "
                             "choose another name")
    return cleaned


def host_control_name(part: str) -> bool:
    """Whether one path part is, on some file system, one of ``CONTROL_NAMES``."""
    return _as_file_systems_see_it(part) in CONTROL_NAMES


def clash(paths: Iterable[str]) -> str | None:
    """Why these (normalised) paths cannot all be files at once, or None: a file that is also a folder
    (``pkg`` and ``pkg/mod.py``), or two names only case differs in (one file on macOS and Windows)."""
    seen: dict[str, str] = {}
    files = list(paths)
    folders = {posixpath.dirname(p) for p in files}
    folders |= {"/".join(p.split("/")[:i]) for p in files for i in range(1, p.count("/"))}
    for path in files:
        if path in folders:
            return f"{path!r} is both a file and a folder"
        key = path.casefold()
        if key in seen and seen[key] != path:
            return f"{seen[key]!r} and {path!r} differ only in case"
        seen[key] = path
    return None


def _as_file_systems_see_it(part: str) -> str:
    # NTFS drops trailing dots and spaces; HFS+ ignores zero-width and other default-ignorable characters.
    kept = "".join(ch for ch in unicodedata.normalize("NFC", part) if not _ignorable(ch))
    return kept.rstrip(". ").casefold()


def _ignorable(ch: str) -> bool:
    return unicodedata.category(ch) == "Cf" or "\ufe00" <= ch <= "\ufe0f"


def _shown(text: str) -> str:
    """A path as it may appear in a message: control characters made visible, length capped."""
    visible = _CONTROL_CHARS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    return repr(visible if len(visible) <= 80 else visible[:77] + "...")
