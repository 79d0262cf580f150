"""A repository's map for the team's prompts: its paths, and per source file its top-level names, within a
fixed number of characters however large the repository is.

Files nearer the top of the tree come first (a reader starts there too), a few of each folder before more of
any one; a file's names are read only while
the map has room, so building it costs no more for 10,000 files than for 500. What does not fit is summed
up per folder in the last lines.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable

_NAMES = {
    ".py": re.compile(r"^(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)", re.M),
    ".js": re.compile(r"^(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:function\*?|class|const|let|var)\s+"
                      r"([A-Za-z_$][\w$]*)", re.M),
    ".go": re.compile(r"^(?:func(?:\s+\([^)]*\))?|type)\s+([A-Za-z_]\w*)", re.M),
    ".rs": re.compile(r"^(?:pub(?:\([^)]*\))?\s+)?(?:fn|struct|enum|trait|mod)\s+([A-Za-z_]\w*)", re.M),
    ".java": re.compile(r"^(?:public\s+|final\s+|abstract\s+)*(?:class|interface|enum|record)\s+([A-Za-z_]\w*)",
                        re.M),
}
for _ext in (".ts", ".tsx", ".jsx", ".mjs", ".cjs"):
    _NAMES[_ext] = _NAMES[".js"]
_NAMES[".kt"] = _NAMES[".java"]
MAX_NAMES_PER_FILE = 12
MAX_READ_CHARS = 200_000  # a file's names are looked for in its first characters only


def top_level_names(path: str, text: str) -> list[str]:
    """The names a source file defines at its top level (functions, classes, types), in order."""
    dot = path.rfind(".")
    pattern = _NAMES.get(path[dot:].lower()) if dot >= 0 else None
    if pattern is None:
        return []
    return list(dict.fromkeys(pattern.findall(text[:MAX_READ_CHARS])))


def ordered(paths: Iterable[str]) -> list[str]:
    """Nearer the top of the tree first; at each depth every folder's first file, then every folder's second,
    and so on, so one crowded folder does not hide the others."""
    rank: dict[str, int] = {}
    seen: Counter[str] = Counter()
    for path in sorted(paths):
        folder = path.rsplit("/", 1)[0] if "/" in path else ""
        rank[path] = seen[folder]
        seen[folder] += 1
    return sorted(rank, key=lambda p: (p.count("/"), rank[p], p))


def map_candidates(paths: Iterable[str], budget_chars: int) -> list[str]:
    """The source files whose names the map could show: as many as its budget has lines for, at most."""
    return [p for p in ordered(paths) if _has_names(p)][: max(1, budget_chars // 20)]


def repository_map(paths: Iterable[str], read: Callable[[str], str | None], budget_chars: int) -> str:
    """The map: one line per file (``path: name, name``) while ``budget_chars`` allows, then per-folder counts."""
    in_order = ordered(paths)
    lines: list[str] = []
    used = 0
    summary_room = min(400, budget_chars // 4)
    shown = 0
    for path in in_order:
        names = top_level_names(path, read(path) or "") if _has_names(path) else []
        line = path + (": " + ", ".join(names[:MAX_NAMES_PER_FILE]) if names else "")
        if used + len(line) + 1 > budget_chars - summary_room:
            break
        lines.append(line)
        used += len(line) + 1
        shown += 1
    rest = in_order[shown:]
    if rest:
        lines.append(_summary(rest, budget_chars - used))
    return "\n".join(lines)


def _has_names(path: str) -> bool:
    dot = path.rfind(".")
    return dot >= 0 and path[dot:].lower() in _NAMES


def _summary(rest: list[str], room: int) -> str:
    folders = Counter(p.split("/", 1)[0] + "/" if "/" in p else "(top level)" for p in rest)
    text = f"... and {len(rest):,} more files: " + ", ".join(f"{name} {count:,}" for name, count in folders.most_common())
    return text if len(text) <= room else text[: max(0, room - 4)].rsplit(",", 1)[0] + ", ..."
