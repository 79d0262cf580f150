"""A role's prompt made smaller, for a model whose context it did not fit (or that answered nothing).

What goes, in order: test output is told in fewer characters (``agents.failures``), long texts (a
rambling plan, a long review) to their start, then files, the ones written longest ago first: each
becomes one line saying how long it is and that it is unchanged. The task is never cut: it is the
user's. The files written last stay whole as long as anything else can go.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields, replace
from typing import Any, TypeVar

from agents.prompt_contexts import PromptContext

C = TypeVar("C", bound=PromptContext)

SHORT_OUTPUT = 200  # characters of failing output a trimmed prompt shows (the first failure and the count)
LONG_TEXT = 1500  # a text longer than this is cut to SHORT_TEXT
SHORT_TEXT = 1000
KEPT_WHOLE = ("task", "language", "status")
FILE_GROUPS = ("files", "tests")


def trimmed(context: C, written: Mapping[str, int], budget_chars: int) -> C:
    """``context`` (a role's prompt context) shrunk towards ``budget_chars`` of prompt.

    ``written`` orders files by when they were last written (higher is more recent; missing is oldest)."""
    names = {f.name for f in fields(context)}
    smaller = _trimmed({name: getattr(context, name) for name in names}, written, budget_chars)
    return replace(context, **{name: value for name, value in smaller.items() if name in names})


def _trimmed(context: Mapping[str, Any], written: Mapping[str, int], budget_chars: int) -> dict[str, Any]:
    smaller: dict[str, Any] = {**context, "limit": SHORT_OUTPUT}
    for key, value in context.items():
        if isinstance(value, str) and key not in KEPT_WHOLE and len(value) > LONG_TEXT:
            smaller[key] = value[:SHORT_TEXT].rstrip() + "\n[... cut to fit the model's context ...]"
    groups = {key: dict(smaller[key]) for key in FILE_GROUPS if isinstance(smaller.get(key), Mapping)}
    others = sum(len(v) for k, v in smaller.items() if isinstance(v, str)) + SHORT_OUTPUT
    room = budget_chars - others
    oldest_first = sorted(((written.get(path, -1), key, path) for key, files in groups.items() for path in files),
                          key=lambda item: item[0])
    for _, key, path in oldest_first:
        if sum(len(c) for files in groups.values() for c in files.values()) <= room:
            break
        groups[key][path] = _not_shown(groups[key][path])
    smaller.update(groups)
    return smaller


def _not_shown(content: str) -> str:
    lines = content.count("\n") + (0 if content.endswith("\n") else 1)
    return f"[{lines} lines, unchanged; not shown to fit the model's context: leave it out of a reply]"
