"""What a piece of code defines, read the same way in every language: the names language modules and
file naming both look at."""

from __future__ import annotations

import re

_DEFINITION = re.compile(
    r"^\s*(?:export\s+|pub(?:\([\w:]+\))?\s+|public\s+|static\s+|async\s+|final\s+|abstract\s+)*"
    r"(?:def|class|func|fn|function|struct|enum|trait|interface|type|impl)\s+(?:\([^)]*\)\s*)?(?P<name>[A-Za-z_]\w*)",
    re.M,
)
_C_FUNCTION = re.compile(r"^[A-Za-z_][\w \t\*]*?\b(?P<name>[A-Za-z_]\w*)\s*\([^;{]*\)\s*\{", re.M)


def defined_names(code: str) -> set[str]:
    """Names a piece of code defines (functions, classes, types), in any of the supported languages."""
    names = {m.group("name") for m in _DEFINITION.finditer(code)}
    names |= {m.group("name") for m in _C_FUNCTION.finditer(code) if m.group("name") not in {"if", "for", "while", "switch"}}
    return names


def mostly_test_definitions(code: str, marker: re.Pattern[str] | None) -> bool:
    """Code carrying a test ``marker`` whose definitions are mostly tests (or that defines nothing)."""
    if marker is None or not marker.search(code):
        return False
    names = defined_names(code)
    tests = [n for n in names if n.lower().startswith("test") or n.endswith(("Test", "Tests"))]
    return not names or len(tests) * 2 >= len(names)
