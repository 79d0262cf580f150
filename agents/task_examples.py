"""Tests the task already holds: the examples in the docstrings of the Python files the user gave
(``>>> add(2, 3)`` then ``5``). They say what the code must answer in the user's own words, so they are the
first check a run has that no model wrote: they run with every test run, as the user's tests do, and the team
never edits them.

The examples are taken from the files as the user gave them and written into the test file, so code that
drops or rewrites its docstrings still has to give the same answers.
"""

from __future__ import annotations

import ast

from agents.python_files import parsed
from agents.types import FileSet

PREFIX = "test_task_examples_"


def example_tests(files: FileSet) -> FileSet:
    """A pytest file for each Python file whose docstrings hold examples (none for the others)."""
    tests: dict[str, str] = {}
    for path, code in files.items():
        if not path.endswith(".py") or path.rsplit("/", 1)[-1].startswith("test"):
            continue
        examples = _examples(code)
        if examples:
            module = path.removesuffix(".py").replace("/", ".")
            tests[f"{PREFIX}{module.replace('.', '_')}.py"] = _test_file(module, path, examples)
    return FileSet(tests)


def without_examples(tests: FileSet) -> FileSet:
    """``tests`` without the files made from the task's examples (whose examples the code itself shows)."""
    return tests.without(path for path in tests if path.startswith(PREFIX))


def _examples(code: str) -> dict[str, str]:
    """Each function's (and class's) docstring that holds an example, by name."""
    try:
        tree = parsed(code)
    except (SyntaxError, ValueError):
        return {}
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            doc = ast.get_docstring(node)
            if doc and ">>>" in doc:
                found[node.name] = doc
    return found


def _test_file(module: str, path: str, examples: dict[str, str]) -> str:
    lines = "".join(f"    {name!r}: {doc!r},\n" for name, doc in examples.items())
    return (
        f'"""The examples in {path}\'s docstrings, as the task gave them: the code must give the same answers."""\n'
        "import doctest\n\n"
        f"import {module} as module\n\n"
        f"EXAMPLES = {{\n{lines}}}\n\n\n"
        "def test_the_examples_the_task_gives():\n"
        "    report = []\n"
        "    parser = doctest.DocTestParser()\n"
        "    for name, text in EXAMPLES.items():\n"
        f"        test = parser.get_doctest(text, dict(vars(module)), name, {path!r}, 0)\n"
        "        doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE).run(test, out=report.append)\n"
        "    if report:  # doctest's own account of each failed example: what was run, expected and got\n"
        '        raise AssertionError("".join(report))\n'
    )
