"""Which built-in language runs the user's tests how. A language the config adds or replaces has none:
it runs as configured, and the README says the guarantee covers the built-in languages."""

from __future__ import annotations

from bot.config.sections import SandboxConfig
from bot.sandbox.authority import Authority
from bot.sandbox.authority.go import GoTest
from bot.sandbox.authority.java import JavaTest
from bot.sandbox.authority.python import Pytest
from bot.sandbox.authority.rust import CargoTest
from bot.sandbox.authority.tap import BashTap, NativeTap, NodeTap

AUTHORITIES: dict[str, Authority] = {
    "python": Pytest(),
    "javascript": NodeTap(typescript=False),
    "typescript": NodeTap(typescript=True),
    "go": GoTest(),
    "rust": CargoTest(),
    "java": JavaTest(),
    "c": NativeTap("cc -std=c11 -Wall -O0", (".c",), ("main.c",)),
    "cpp": NativeTap("c++ -std=c++17 -Wall -O0", (".cpp", ".cc"), ("main.cpp", "main.cc")),
    "bash": BashTap(),
}


def authority_for(language: str, config: SandboxConfig) -> Authority | None:
    if language in config.languages:
        return None
    return AUTHORITIES.get(language)
