"""Diffs: code blocks a model wrote as a diff, read back into whole files; and the changes between two
versions of the files, written as diffs for a model that saw the earlier version.

Models asked for whole files still answer with a unified diff (```` ```diff ````, ``--- a/x`` and
``+++ b/x`` headers, ``@@`` hunks) or with every line prefixed by ``+``. A diff that only adds lines is the
new file itself when there is no file yet, or when it says it replaces the whole file (``--- /dev/null``, a
header whose old side spans the file, or added lines that define again a name the file defines at its top
level); otherwise its lines are inserted into the file, however its header counts them (``@@ -9 +9,4 @@`` as
well as ``@@ -9,0 +10,4 @@``), so an added function never replaces the file. A diff that changes an existing
file is applied hunk by hunk, by finding each hunk's old lines, whole, in the file after the hunk before it
(line numbers in ``@@`` headers are often wrong, so they only choose between several places, and place lines
added with no context).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass

from agents.language.code import defined_names

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


@dataclass(frozen=True)
class _Hunk:
    start: int | None  # the old side's first line as the ``@@`` header gives it (None: no numbers)
    length: int | None  # and its number of lines (``@@ -6,0 +7,3 @@``: none, the lines go after line 6); None
    # when the header gives none (``@@ -6 +6,3 @@``, which small models write for lines added after line 6 too)
    lines: list[tuple[str, str]]  # each line's mark (" ", "-" or "+") and text

    @property
    def old(self) -> list[str]:
        """The lines it expects: context and removed."""
        return [text for mark, text in self.lines if mark != "+"]

    def new(self, matched: list[str]) -> list[str]:
        """The lines it leaves where it matched ``matched``: the file's own context lines, and the added ones."""
        kept, where = [], iter(matched)
        for mark, text in self.lines:
            if mark == "+":
                kept.append(text)
            elif mark == " ":
                kept.append(next(where))
            else:
                next(where)
        return kept


def apply(diff: Diff, current: str | None) -> str:
    """The whole file the diff describes: its lines when it marks none as added or removed (a whole file under
    diff headers, as small models write when asked for a diff), its added lines when it only adds and there is no
    file or it replaces the file whole (``_replaces_whole``), else ``current`` patched hunk by hunk. Each hunk must
    match whole lines of the file (trailing whitespace aside), after the hunk before it; of several places, the one
    nearest its header's line; a hunk with no old lines goes after the line its header names."""
    lines = [line for line in diff.body.splitlines() if not line.startswith(("--- ", "+++ ", "diff ", "index ", "Index: "))]
    if not any(_HUNK.match(line) or line.startswith(("+", "-")) for line in lines):  # a whole file under diff headers
        if not "".join(lines).strip():
            raise DiffError("it holds no change; send the whole file")
        return "\n".join(lines).strip("\n") + "\n"
    hunks = _hunks(lines)
    added_only = all(line.startswith("+") or not line.strip() for line in lines if not _HUNK.match(line))
    added = "\n".join(line[1:] for line in lines if line.startswith("+")) + "\n"
    if added_only and (current is None or _replaces_whole(diff, hunks, added, current)):
        return added
    if current is None:
        raise DiffError("it changes a file the team does not have; send the whole file")
    eol = "\r\n" if "\r\n" in current else "\n"
    text = current.splitlines()
    cursor, shift = 0, 0  # where the previous hunk ended; how far earlier hunks moved the lines after them
    for hunk in hunks:
        if not hunk.old:  # lines added with no context: after the line the header names (the top without one)
            at = min(len(text), max(cursor, (hunk.start or 0) + shift))
        else:
            at = _place(text, hunk, cursor, shift)
        size = len(hunk.old)
        new = hunk.new(text[at:at + size])
        text[at:at + size] = new
        cursor, shift = at + len(new), shift + len(new) - size
    return eol.join(text) + eol


def _replaces_whole(diff: Diff, hunks: list[_Hunk], added: str, current: str) -> bool:
    """Whether a diff that only adds lines means the whole file rather than lines to insert into ``current``: it
    comes from ``/dev/null``, or its one hunk's header spans the whole file on its old side (``@@ -1,6 +1,2 @@``
    for a file of six lines), or its lines define again a name the file defines at its top level (inserted, the
    file's own older definition would come after the new one, and win)."""
    if re.search(r"^--- /dev/null\s*$", diff.body, re.M):
        return True
    size = len(current.splitlines())
    first = hunks[0] if len(hunks) == 1 else None
    if first and first.start in (0, 1) and first.length is not None and size and first.length >= size:
        return True
    return bool(_top_level_names(added) & _top_level_names(current))


def _top_level_names(code: str) -> set[str]:
    """The names defined on the code's unindented lines (a module's functions and classes, not their methods)."""
    return defined_names("\n".join(line for line in code.splitlines() if line[:1] not in (" ", "\t")))


def _place(text: list[str], hunk: _Hunk, cursor: int, shift: int) -> int:
    """Where the hunk's old lines stand in ``text`` at or after ``cursor``, nearest the header's line."""
    want = [line.rstrip() for line in hunk.old]
    size = len(want)
    places = [i for i in range(cursor, len(text) - size + 1)
              if text[i].rstrip() == want[0] and [line.rstrip() for line in text[i:i + size]] == want]
    if not places:
        raise DiffError("its lines do not match the current file; send the whole file")
    expected = (hunk.start - 1 + shift) if hunk.start else cursor
    return min(places, key=lambda i: abs(i - expected))


_NUMBERS = re.compile(r"^@@ -(\d+)(?:,(\d+))?")


def _hunks(lines: list[str]) -> list[_Hunk]:
    """The diff's hunks in order; a line before any ``@@`` starts one with no numbers."""
    parts: list[tuple[int | None, int | None, list[str]]] = []
    for line in lines:
        if _HUNK.match(line):
            numbers = _NUMBERS.match(line)
            start, length = (numbers.group(1), numbers.group(2)) if numbers else (None, None)
            parts.append((int(start) if start else None, int(length) if length else None, []))
            continue
        if not parts:
            parts.append((None, None, []))
        if line.startswith("\\"):  # "\ No newline at end of file"
            continue
        parts[-1][2].append(line)
    hunks = []
    for start, length, body in parts:
        while body and body[-1] == "":  # an empty line after a hunk (between hunks, at the end) is no line of the file
            body.pop()
        if body:  # a line with no mark is context whose leading space was lost (a blank line, mostly)
            hunks.append(_Hunk(start, length, [(line[0], line[1:]) if line.startswith((" ", "-", "+")) else (" ", line)
                                               for line in body]))
    return hunks


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
