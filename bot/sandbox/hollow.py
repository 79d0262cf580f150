"""Team-written Python tests that would pass without testing, found before they run.

The runner's structured report and its configuration are the sandbox's own (see languages.py), but a
``conftest.py``, a test module or the code they import still runs inside pytest and could rewrite what it
reports. So no Python file of the team's may:

- hook into collection, running or reporting, or name pytest's report (``pytest_runtest_makereport``,
  ``collect_ignore``, ``pytest_collection_modifyitems``, ``pytest_plugins``, ``hookimpl``, the plugin
  manager...); fixtures, ``pytest_configure`` (markers) and ``pytest_generate_tests`` stay allowed;

and no test file or ``conftest.py`` of the team's may:

- patch the test machinery (``unittest.TestCase.assertEqual = ...``, ``setattr(pytest, ...)``, ``_pytest``)
  or pytest's parsed options (``config.option.keyword = ...`` in ``pytest_configure``: ``-k`` at run time),
  or end the session early (``pytest.exit``, ``request.session.shouldstop = ...``);
- swallow its own failures: a test whose ``assert`` sits in a ``try`` that catches ``AssertionError``
  (or ``Exception``, ``BaseException``, everything) without raising again.

The user's own test files are never checked: they are the user's to write. This reads text, so a name built at
run time passes it: the sandbox's pytest plugin (``agents.language.python_guard``) judges the hooks pytest really
registered while the team's tests run.
"""

from __future__ import annotations

import ast
import functools
import itertools
import posixpath
import re
from collections.abc import Iterable, Mapping

from agents.language import BUILT_IN
from agents.python_files import KEPT_TREE_CHARS, parsed

_HOOKS = re.compile(
    r"\b(pytest_(?:runtest_\w+|collection\w*|collect_file|ignore_collect|pycollect_\w+|pyfunc_call|make_collect_report"
    r"|report_\w+|terminal_summary|sessionstart|sessionfinish|unconfigure|deselected|itemcollected|exception_interact"
    r"|internalerror|keyboard_interrupt|assertion_pass|assertrepr_compare|load_initial_conftests|cmdline_\w+)"
    r"|collect_ignore(?:_glob)?|pytest_plugins|hookimpl|hookwrapper|pluginmanager|_pytest|junitxml|junit\.xml)\b")
_MACHINERY = frozenset({"unittest", "pytest", "_pytest", "doctest"})
_CONFIGS = frozenset({"config", "pytestconfig", "_config"})  # pytest's Config, as hooks and fixtures name it
_STOPS = frozenset({"shouldstop", "shouldfail"})
_OPTIONS = frozenset({"option", "known_args_namespace", "args", "inicfg", "_inicache", "invocation_params"})
_SWALLOWED = frozenset({"AssertionError", "Exception", "BaseException"})


def hollow_tests(files: Mapping[str, str], user: Iterable[str]) -> str:
    """Why the team's Python tests would pass without testing (one sentence naming the file), or ''."""
    mine = set(user)
    for path, text in files.items():
        if path in mine or not path.endswith(".py"):
            continue
        if why := (_kept_verdict(path, text) if len(text) <= KEPT_TREE_CHARS else _verdict(path, text)):
            return why
    return ""


def _verdict(path: str, text: str) -> str:
    """Why this one file of the team's would let its tests pass without testing, or ''."""
    if match := _HOOKS.search(text):  # in any file: a local package the setup installs is one too
        return (f"{path} uses {match.group(1)}, which changes which tests pytest runs or how it reports them; "
                "write plain test functions (fixtures are fine)")
    if not (BUILT_IN.looks_like_test(path) or posixpath.basename(path) == "conftest.py"):
        return ""
    try:
        tree = parsed(text)
    except (SyntaxError, ValueError):
        return ""  # pytest reports it; a file that does not parse passes nothing
    if patched := _patched_machinery(tree):
        return f"{path} patches the test machinery ({patched}); test the code, not the runner"
    if name := _swallowing_test(tree):
        return (f"{path}: {name} catches its own assertion's failure, so it cannot fail; "
                "let the AssertionError propagate (use pytest.raises for expected exceptions)")
    return ""


# A run's files come back unchanged to most of its test runs (the tests while the code is fixed, the code while
# the tests are): each file is judged once while it stays the same.
_kept_verdict = functools.lru_cache(maxsize=32)(_verdict)


def _patched_machinery(tree: ast.AST) -> str:
    """What the module assigns to or ``setattr``s on unittest or pytest (however imported), or ''."""
    names = set(_MACHINERY)
    exits = set()  # ``from pytest import exit as leave``
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            module = getattr(node, "module", None) or ""
            for alias in node.names:
                if module.split(".")[0] in _MACHINERY or alias.name.split(".")[0] in _MACHINERY:
                    names.add((alias.asname or alias.name).split(".")[0])
                if module in ("pytest", "_pytest.outcomes") and alias.name == "exit":
                    exits.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AugAssign | ast.AnnAssign) else []
        for target in targets:
            if isinstance(target, ast.Attribute) and (_root(target) in names or _options(target)):
                return ast.unparse(target) + " = ..."
        if isinstance(node, ast.Call) and ((_called(node) == "exit" and _root(node.func) in names - {"unittest"})
                                           or (isinstance(node.func, ast.Name) and node.func.id in exits)):
            return f"{ast.unparse(node.func)}(...) ends the test session early"
        if isinstance(node, ast.Call) and _called(node) in ("setattr", "delattr") and node.args:
            first = node.args[0]
            if _root(first) in names or _options(first) or (
                    isinstance(first, ast.Constant) and isinstance(first.value, str)
                    and first.value.split(".")[0] in _MACHINERY):
                return f"{_called(node)}({ast.unparse(first)}, ...)"
    return ""


def _chain(node: ast.AST) -> list[str]:
    """``request.config.option.keyword`` -> ["request", "config", "option", "keyword"]."""
    names: list[str] = []
    while isinstance(node, ast.Attribute):
        names.insert(0, node.attr)
        node = node.value
    return [node.id, *names] if isinstance(node, ast.Name) else names


def _root(node: ast.AST) -> str:
    chain = _chain(node)
    return chain[0] if chain and isinstance(node, ast.Attribute | ast.Name) else ""


def _options(node: ast.AST) -> bool:
    """Whether ``node`` reaches pytest's parsed options (``config.option.keyword``: ``-k`` set at run time) or
    its session's stop switches (``request.session.shouldstop``: the tests after it never run)."""
    chain = _chain(node)
    return any((a in _CONFIGS and b in _OPTIONS) or (a == "session" and b in _STOPS)
               for a, b in itertools.pairwise(chain))


def _called(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _swallowing_test(tree: ast.AST) -> str:
    """The name of a test function with an ``assert`` inside a ``try`` that swallows its failure, or ''."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Try) and _asserts(inner.body) and any(map(_swallows, inner.handlers)):
                    return node.name
    return ""


def _asserts(body: list[ast.stmt]) -> bool:
    return any(isinstance(node, ast.Assert) for statement in body for node in ast.walk(statement))


def _swallows(handler: ast.ExceptHandler) -> bool:
    """Catches an assertion's failure and does not raise again."""
    caught = handler.type
    names = caught.elts if isinstance(caught, ast.Tuple) else [caught] if caught is not None else []
    catches = caught is None or any(isinstance(n, ast.Name) and n.id in _SWALLOWED for n in names)
    raises = any(isinstance(node, ast.Raise) or _fails(node) for s in handler.body for node in ast.walk(s))
    return catches and not raises


def _fails(node: ast.AST) -> bool:
    """``pytest.fail(...)`` in a handler still fails the test."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "fail")
