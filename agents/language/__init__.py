"""Languages, each described once (``Language``) and read by every layer through one table (``Languages``).

    description   Language (naming, tests, failures) and TestRun (the sandbox's image and commands)
    registry      Languages: which language a file is, whether it is a test, what a task names
    code          what a piece of code defines, in any language
    python, node, go, rust, java, native, bash   the built-in languages, one module each

A language added under ``[sandbox.languages.NAME]`` in config.toml is laid over ``BUILT_IN``
(``bot.sandbox.languages.registry``) and read the same way as a built-in one.
"""

from __future__ import annotations

from agents.language.bash import BASH
from agents.language.description import Language, TestRun
from agents.language.go import GO
from agents.language.java import JAVA
from agents.language.native import CPP, C
from agents.language.node import JAVASCRIPT, TYPESCRIPT
from agents.language.python import PYTHON
from agents.language.registry import Languages
from agents.language.rust import RUST

BUILT_IN = Languages((PYTHON, JAVASCRIPT, TYPESCRIPT, GO, RUST, JAVA, C, CPP, BASH))
DEFAULT = "python"  # what the Planner is told to choose when the task names no language

__all__ = ["BUILT_IN", "DEFAULT", "Language", "Languages", "TestRun"]
