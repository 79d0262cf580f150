"""Which language a piece of work is in, by name or by its files' extensions."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

ALIASES = {
    "py": "python", "python3": "python", "js": "javascript", "node": "javascript", "nodejs": "javascript",
    "ts": "typescript", "golang": "go", "rs": "rust", "c++": "cpp", "cxx": "cpp", "cc": "cpp",
    "sh": "bash", "shell": "bash", "kotlin": "kotlin", "jvm": "java",
}

EXTENSIONS = {
    ".py": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".ts": "typescript",
    ".go": "go", ".rs": "rust", ".java": "java", ".c": "c", ".h": "c", ".cpp": "cpp", ".cc": "cpp",
    ".hpp": "cpp", ".cxx": "cpp", ".sh": "bash", ".bash": "bash",
}


DEFAULT = "python"  # what the Planner is told to choose when the task names no language


def known(name: str, task: str = "") -> bool:
    """Whether a language name is one the team knows, or one the task itself names (a configured one)."""
    language = normalise(name)
    return language in set(EXTENSIONS.values()) or (bool(language) and language in task.lower())


def normalise(name: str) -> str:
    key = name.strip().lower()
    return ALIASES.get(key, key)


def detect(paths: Iterable[str], hint: str = "") -> str:
    """The hint when given, else the language most of the files are written in ('' if none)."""
    if hint.strip():
        return normalise(hint)
    counts = Counter(
        EXTENSIONS[ext] for path in paths for ext in [_extension(path)] if ext in EXTENSIONS
    )
    return counts.most_common(1)[0][0] if counts else ""


def _extension(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name[name.rfind("."):].lower() if "." in name else ""


TEST_PREFIXES = ("test_",)
TEST_SUFFIXES = ("_test", ".test", ".spec", "_spec")  # of the name before its extension


def looks_like_test(path: str) -> bool:
    """Whether a file follows a common test-file convention: test_x.py, x_test.go, x.test.js, x.spec.ts,
    FooTest.java, or anything under a tests/ folder. ``contest.py`` or ``latest_prices.py`` are not tests."""
    lowered = path.lower()
    if lowered.startswith(("tests/", "test/")) or "/tests/" in lowered or "/test/" in lowered:
        return True
    name = path.rsplit("/", 1)[-1]
    stem = name[: name.rfind(".")] if "." in name else name
    if stem.lower().startswith(TEST_PREFIXES) or stem.lower().endswith(TEST_SUFFIXES):
        return True
    return name.endswith((".java", ".kt")) and stem.endswith(("Test", "Tests"))


_NAMED = [  # how a task names a language, most specific first ("TypeScript" before "Script", "C++" before "C")
    ("typescript", r"typescript|\bts\b"), ("javascript", r"javascript|node\.?js|\bjs\b"), ("python", r"python"),
    ("rust", r"\brust\b"), ("go", r"\bgolang\b|\bin go\b|\bgo (?:function|program|package|module)"),
    ("java", r"\bjava\b"), ("cpp", r"c\+\+|\bcpp\b"), ("c", r"\bin c\b|\bc (?:function|program)"),
    ("bash", r"\bbash\b|shell script"),
]


def named_in(text: str) -> str:
    """The language a task's words name ("a Go function", "in TypeScript"), '' when none."""
    lowered = text.lower()
    found = [(match.start(), name) for name, pattern in _NAMED if (match := re.search(pattern, lowered))]
    return min(found)[1] if found else ""
