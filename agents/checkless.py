"""Tests the team wrote that cannot judge what the code does, found by reading them (Python; Go, JavaScript,
TypeScript, Java and Rust tests none of which holds a check at all).

A test that neither asserts nor calls anything (``return 42``, ``pass``, a ``print``) can never fail, and a
set of tests none of which checks a result (an ``assert``, ``pytest.raises``, ``self.assertEqual``, a helper
of the file that asserts) passes whatever the code returns. Nor does a set of tests none of which reaches the
code while it checks (``assert add(2, 3) == 5`` with ``add`` defined in the test file, ``assert True``, ``assert
2 + 3 == 5``): the code could return anything. Such tests passing proves nothing, so the run does not count them
as a pass: they go back to the Tester. A test that only calls the code (it must not raise) beside tests that
check results is fine.

A test reaches the code when it names something imported from one of the code's modules (or a name of the file
made from one: a helper, a fixture, a module-level value), imports the code itself, takes a fixture it does not
define (a ``conftest.py`` may give the code), or runs a program (``subprocess``, ``runpy``, ``importlib``).

The other way round, a test that still holds an example's placeholders (``assert f(...) == ...``, as a small model
copies the form it was shown) fails whatever the code does, and so do failing tests none of which reaches the code
(a small model's test file that defines the function it tests): changing the code cannot help, so they go back to
the Tester too (``cannot_pass_tests``). The user's own tests are never judged: they are theirs.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Collection, Iterable, Mapping

from agents.language import Languages
from agents.python_files import parsed


def checkless_tests(files: Mapping[str, str], languages: Languages, code: Collection[str] = ()) -> str:
    """Why the team's Python tests cannot fail for what the code does (naming the file and test), or ''.
    ``code``: the paths of the code under test (the work's files, a repository's whole tree), for which some test
    must reach a Python module of them while it checks a result. Go, JavaScript, TypeScript, Java and Rust tests are
    read for a check only (``_unchecked``)."""
    trees = _test_trees(files, languages)
    return _checkless(trees) or _unreached(trees, _modules(p for p in code if p not in trees)) or _unchecked(
        files, languages)


# Go, JavaScript, TypeScript, Java and Rust, by the test files' extensions: what a test looks like, what a check looks like (a
# failing one fails the test), and what to write instead. A set of test files none of which holds one passes whatever the
# code does (``t.Logf(got)``, ``console.log(sub(5, 3))``). Checks are looked for in every file of the team's tests in
# that language, helpers included (``eq(t, got, want)`` in helpers_test.go, a base class the test class extends).
_TEXT_CHECKS = (
    ((".go",), re.compile(r"^func\s+Test\w*\s*\(", re.M),
     re.compile(r"\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow|Assert|Check|Expect)\s*\(|\bpanic\s*\("
                r"|\b(?:assert|require|is)\.\w+\s*\(|\b(?:Expect|Eventually|Consistently|\u03a9)\s*\("),
     "call t.Errorf or t.Fatalf when a result is wrong"),
    ((".js", ".mjs", ".cjs", ".ts"), re.compile(r"\b(?:test|it)\s*\("),
     re.compile(r"\bassert(?:\.\w+)?\s*\(|\bexpect\s*\(|\bthrow\b|\.should\b|\b(?:strictEqual|deepStrictEqual|equal|"
                r"deepEqual|notStrictEqual|notEqual|ok|throws|rejects|doesNotThrow|match|fail)\s*\("),
     "assert what the code returns (node:assert's assert.strictEqual)"),
    ((".java",), re.compile(r"@Test\b|\bvoid\s+main\s*\("),
     re.compile(r"\bassert\w*\s*\(|\bassert\s|\bfail\s*\(|\bthrow\b|\bSystem\.exit\s*\(\s*[^0\s)]"),
     "assert what the code returns (assertEquals, or assert with -ea in a main())"),
    ((".rs",), re.compile(r"#\[test\]"),
     re.compile(r"\b(?:\w*assert\w*|panic|unreachable|unimplemented|todo)!|\.(?:unwrap|expect)\w*\s*\(|#\[should_panic"
                r"|\bErr\s*\("),  # a #[test] returning Result fails on an Err
     "assert what the code returns (assert_eq!)"),
)


def _unchecked(files: Mapping[str, str], languages: Languages) -> str:
    for extensions, test, check, advice in _TEXT_CHECKS:
        tests = sorted(p for p in files if p.endswith(extensions) and languages.looks_like_test(p)
                       and test.search(files[p]))
        helpers = [p for p in files if p.endswith(extensions)]
        if tests and not any(check.search(files[path]) for path in helpers):
            return f"{', '.join(tests)}: no test checks a result, so they pass whatever the code does; {advice}"
    return ""


def cannot_pass_tests(files: Mapping[str, str], languages: Languages, code: Collection[str] = ()) -> str:
    """Why the team's failing Python tests would fail for any code, naming the file and test; or ''. An assert that
    compares with ``...`` or calls with it (an example's placeholders, not values); or, given the paths of the
    ``code``, tests none of which reaches it while it checks (the function under test copied into the test file):
    changing the code cannot make them pass."""
    trees = _test_trees(files, languages)
    return _placeholders(trees) or _unreached(trees, _modules(p for p in code if p not in trees),
                                              "so they fail whatever the code does")


def _placeholders(trees: Mapping[str, ast.Module]) -> str:
    for path, tree in trees.items():
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


# Names a test may run the code through without importing it by name: a program, a module loaded by its path.
_RUNNERS = frozenset({"subprocess", "runpy", "importlib", "__import__", "import_module", "importorskip", "exec",
                      "eval", "system", "popen", "spawn", "check_output", "check_call", "run", "Popen"})
# pytest's own fixtures: a test taking only these gets nothing of the code from them.
_BUILT_IN_FIXTURES = frozenset({
    "tmp_path", "tmp_path_factory", "tmpdir", "tmpdir_factory", "capsys", "capfd", "capsysbinary", "capfdbinary",
    "caplog", "monkeypatch", "recwarn", "record_property", "record_testsuite_property", "record_xml_attribute",
    "cache", "pytestconfig", "doctest_namespace", "subtests", "self", "cls"})


def _modules(paths: Iterable[str]) -> frozenset[str]:
    """The names an import of the code's Python files may start with or end in: each file's module name and its
    top folder (``src/calc.py``: ``calc``, ``src``), a package's folder (``pkg/__init__.py``: ``pkg``)."""
    names: set[str] = set()
    for path in paths:
        if not path.endswith(".py"):
            continue
        parts = path.removesuffix(".py").split("/")
        names.add(parts[0])
        names.add(parts[-2] if parts[-1] == "__init__" and len(parts) > 1 else parts[-1])
    return frozenset(names)


def _unreached(trees: Mapping[str, ast.Module], modules: frozenset[str],
               so: str = "so they pass whatever the code does") -> str:
    """Why no test both reaches the code and checks a result, or '' (also when there is no Python code to reach)."""
    tests = {path: _test_functions(tree) for path, tree in trees.items()}
    if not modules or not any(tests.values()):
        return ""
    reaching = {path: _reaching_names(tree, modules) for path, tree in trees.items()}
    fixtures = {n.name for tree in trees.values() for n in tree.body
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and not n.name.startswith("test")}
    given = set().union(*(names for names in reaching.values() if names is not None)) & fixtures
    for path, tree in trees.items():
        names, helpers = reaching[path], _checking_helpers(tree)
        for test in tests[path]:
            if _checks(test, helpers) and (names is None or _reaches(_scope_of(tree, test), names)
                                           or _takes_the_code(test, fixtures, given)):
                return ""
    shown = ", ".join(sorted(modules)[:3])
    return (f"{', '.join(sorted(p for p, found in tests.items() if found))}: no test calls the code while it "
            f"checks a result (none uses {shown}), {so}; import the code and "
            "assert what it returns")


def _imported_from_code(node: ast.Import | ast.ImportFrom, modules: frozenset[str]) -> list[str] | None:
    """The names ``node`` binds to the code (None: a star import of it, which may bind any name)."""
    if isinstance(node, ast.ImportFrom):
        source = (node.module or "").split(".")
        if not (node.level or source[0] in modules or source[-1] in modules):
            return [a.asname or a.name for a in node.names if a.name in modules]  # from pkg import calc
        if any(a.name == "*" for a in node.names):
            return None
        return [a.asname or a.name for a in node.names]
    bound = []
    for alias in node.names:
        parts = alias.name.split(".")
        if parts[0] in modules or parts[-1] in modules:
            bound.append(alias.asname or parts[0])
    return bound


def _reaching_names(tree: ast.Module, modules: frozenset[str]) -> set[str] | None:
    """The module's names that stand for the code: imported from it, or made from such names at the top level
    (a value, a helper, a fixture, a class); None when a star import of the code may have bound any name."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            bound = _imported_from_code(node, modules)
            if bound is None:
                return None
            names.update(bound)
    for _ in range(3):  # a value made from a helper made from an import
        for node in tree.body:
            if _uses(node, names):
                names.update(_bound_by(node))
    return names


def _bound_by(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
        node, ast.AnnAssign | ast.AugAssign) else []
    return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]


def _uses(node: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


def _scope_of(tree: ast.Module, test: ast.AST) -> ast.AST:
    """What a test runs with: its class (its setUp, fixtures and attributes) or itself."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and test in node.body:
            return node
    return test


def _reaches(scope: ast.AST, names: set[str]) -> bool:
    """Whether the test (with its class) names the code (an import inside it binds such a name too) or runs a
    program."""
    return _uses(scope, names) or any(
        isinstance(n, ast.Call) and (_called(n) in _RUNNERS or (isinstance(n.func, ast.Attribute) and isinstance(
            n.func.value, ast.Name) and n.func.value.id in _RUNNERS)) for n in ast.walk(scope))


def _takes_the_code(test: ast.FunctionDef | ast.AsyncFunctionDef, fixtures: set[str], given: set[str]) -> bool:
    """Whether the test takes a fixture that may give it the code: one of the team's files made from the code,
    or one they do not define (a conftest.py of the user's may)."""
    declared = {name.strip() for d in test.decorator_list for n in ast.walk(d)
                if isinstance(n, ast.Constant) and isinstance(n.value, str) for name in n.value.split(",")}
    arguments = [a.arg for a in (*test.args.posonlyargs, *test.args.args, *test.args.kwonlyargs)]
    return any(a in given or a not in fixtures for a in arguments
               if a not in _BUILT_IN_FIXTURES and a not in declared)
