"""Tests the team wrote that cannot judge what the code does, found by reading them (Python).

A test that neither asserts nor calls anything (``return 42``, ``pass``, a ``print``) can never fail, and a
set of tests none of which checks a result (an ``assert``, ``pytest.raises``, ``self.assertEqual``, a helper
of the file that asserts) passes whatever the code returns. Such tests passing proves nothing, so the run
does not count them as a pass: they go back to the Tester. A test that only calls the code (it must not
raise) beside tests that check results is fine.

The other way round, a test that still holds an example's placeholders (``assert f(...) == ...``, as a small model
copies the form it was shown) fails whatever the code does: changing the code cannot help, so it goes back to the
Tester too (``placeholder_tests``). The user's own tests are never judged: they are theirs.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Mapping

from agents.language import Languages
from agents.python_files import parsed


def checkless_tests(files: Mapping[str, str], languages: Languages) -> str:
    """Why the team's Python tests cannot fail for what the code does (naming the file and test), or ''."""
    return _checkless(_test_trees(files, languages))


def placeholder_tests(files: Mapping[str, str], languages: Languages) -> str:
    """Why the team's Python tests cannot pass for any code: an assert that compares with ``...`` or calls with it
    (an example's placeholders, not values), naming the file and test; or ''."""
    for path, tree in _test_trees(files, languages).items():
        for test in _test_functions(tree):
            if any(isinstance(n, ast.Assert) and _placeholder_in(n.test) for n in ast.walk(test)):
                return (f"{path}: {test.name} compares with or passes `...`, an example's placeholder, so it fails "
                        "whatever the code does; write real arguments and the result the task expects")
    return ""


def _test_trees(files: Mapping[str, str], languages: Languages) -> dict[str, ast.Module]:
    """The syntax trees of the Python test files among ``files`` (one that does not parse: the runner reports it)."""
    trees = {}
    for path, text in files.items():
        if path.endswith(".py") and languages.looks_like_test(path):
            try:
                trees[path] = parsed(text)
            except (SyntaxError, ValueError):
                continue
    return trees


def _placeholder_in(check: ast.expr) -> bool:
    """``...`` as an operand of a comparison or an argument of a call in ``check`` (``x[...]`` is an index, not one)."""
    def is_dots(node: ast.expr) -> bool:
        return isinstance(node, ast.Constant) and node.value is Ellipsis

    for node in ast.walk(check):
        if isinstance(node, ast.Compare) and any(is_dots(n) for n in (node.left, *node.comparators)):
            return True
        if isinstance(node, ast.Call) and any(is_dots(a) for a in node.args):
            return True
    return False


_BUILTINS = frozenset(dir(builtins))
_CHECK_CALLS = re.compile(r"^(?:assert|expect|fail|raises|warns|deprecated_call|check|verify)", re.I)


def _checkless(trees: Mapping[str, ast.Module]) -> str:
    tests = [(path, node) for path, tree in trees.items() for node in _test_functions(tree)]
    for path, test in tests:
        if not any(isinstance(n, ast.Assert) or (isinstance(n, ast.Call) and _called(n) not in _BUILTINS)
                   for n in ast.walk(test)):
            return (f"{path}: {test.name} neither checks nor calls anything, so it cannot fail; "
                    "call the code and assert what it returns")
    helpers = {path: _checking_helpers(tree) for path, tree in trees.items()}  # once per file
    if tests and not any(_checks(test, helpers[path]) for path, test in tests):
        return (f"{', '.join(sorted({path for path, _ in tests}))}: no test checks a result, so they pass "
                "whatever the code does; assert what it returns (or use pytest.raises for errors)")
    return ""


def _test_functions(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Module-level ``test*`` functions and ``test*`` methods of ``Test*`` classes, as pytest collects them."""
    found: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
            found.append(node)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            found += [n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                      and n.name.startswith("test")]
    return found


def _checking_helpers(tree: ast.Module) -> set[str]:
    """The names of the module's functions (and methods) that check something themselves."""
    return {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and not node.name.startswith("test") and _checks(node, set())}


def _checks(function: ast.AST, helpers: set[str]) -> bool:
    return any(isinstance(n, ast.Assert) or (isinstance(n, ast.Call) and (
        _CHECK_CALLS.match(_called(n)) or _called(n) in helpers)) for n in ast.walk(function))


def _called(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
