"""Diffs: code blocks a model wrote as a diff, read back into whole files; and the changes between two
versions of the files, written as diffs for a model that saw the earlier version.

Models asked for whole files still answer with a unified diff (```` ```diff ````, ``--- a/x`` and
``+++ b/x`` headers, ``@@`` hunks) or with every line prefixed by ``+``. A diff that only adds lines is
the new file itself; one that changes an existing file is applied hunk by hunk, by finding each hunk's
old lines in the file (line numbers in ``@@`` headers are often wrong, so they are not trusted).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass

_TARGET = re.compile(r"^\+\+\+ (?:[ab]/)?(?P<path>[^\t\n]+?)(?:\t.*)?$", re.M)
_HUNK = re.compile(r"^@@ [^@]* @@.*$", re.M)


class DiffError(ValueError):
    """A diff that cannot be turned into a whole file; ``str()`` says why."""


@dataclass(frozen=True)
class Diff:
    path: str  # "" when the diff names no file
    body: str


def as_diff(language: str, body: str) -> Diff | None:
    """The block as a diff, or None when it is plain code."""
    lines = [line for line in body.splitlines() if line.strip()]
    if not lines:
        return None
    target = _TARGET.search(body)
    headed = bool(target) and body.lstrip().startswith(("--- ", "diff ", "Index: ", "+++ "))
    prefixed = sum(line.startswith("+") for line in lines) * 2 >= len(lines) and all(
        line[:1] in "+- @\\" for line in lines)
    if not (headed or language in {"diff", "patch"} or (prefixed and _HUNK.search(body)) or _all_added(lines)):
        return None
    return Diff(target.group("path").strip() if target else "", body)


def apply(diff: Diff, current: str | None) -> str:
    """The whole file the diff describes: its added lines when it only adds, else ``current`` patched."""
    lines = [line for line in diff.body.splitlines() if not line.startswith(("--- ", "+++ ", "diff ", "index ", "Index: "))]
    hunks = [line for line in lines if not _HUNK.match(line)]
    if all(line.startswith("+") or not line.strip() for line in hunks):
        return "\n".join(line[1:] for line in hunks if line.startswith("+")) + "\n"
    if current is None:
        raise DiffError("it changes a file the team does not have; send the whole file")
    text = "\n" + (current if current.endswith("\n") else current + "\n")  # framed: a hunk matches whole lines only
    for hunk in _hunks(lines):
        old = "\n".join(line[1:] for line in hunk if line[:1] in (" ", "-") or line == "")
        new = "\n".join(line[1:] for line in hunk if line[:1] in (" ", "+") or line == "")
        if not old:  # lines added with no context: at the top, as ``@@ -0,0`` says
            text = f"\n{new}{text}"
            continue
        if f"\n{old}\n" not in text:  # a line that only contains the hunk's line is another line
            raise DiffError("its lines do not match the current file; send the whole file")
        text = text.replace(f"\n{old}\n", f"\n{new}\n" if new else "\n", 1)
    return text[1:]


def _hunks(lines: list[str]) -> list[list[str]]:
    hunks: list[list[str]] = []
    for line in lines:
        if _HUNK.match(line) or not hunks:
            hunks.append([])
            if _HUNK.match(line):
                continue
        if line.startswith("\\"):  # "\ No newline at end of file"
            continue
        hunks[-1].append(line)
    for hunk in hunks:  # an empty line after a hunk (between hunks, at the end) is no line of the file
        while hunk and hunk[-1] == "":
            hunk.pop()
    return [h for h in hunks if h]


def _all_added(lines: list[str]) -> bool:
    """Every line begins with "+" (and not "++", which is code in C-like languages)."""
    return len(lines) >= 2 and all(line.startswith("+") and not line.startswith("++") for line in lines)


def changes(before: Mapping[str, str], after: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """What changed from ``before`` to ``after``, per changed file: ``("diff", a unified diff with three lines of
    context)``, or ``("file", the whole new file)`` where a diff would not be shorter, or ``("removed", "")``."""
    changed: dict[str, tuple[str, str]] = {}
    for path, new in after.items():
        old = before.get(path)
        if old == new:
            continue
        diff = "" if old is None else "\n".join(difflib.unified_diff(
            old.splitlines(), new.splitlines(), f"a/{path}", f"b/{path}", lineterm="")) + "\n"
        changed[path] = ("diff", diff) if old is not None and len(diff) < len(new) else ("file", new)
    for path in before:
        if path not in after:
            changed[path] = ("removed", "")
    return changed
