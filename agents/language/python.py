"""Python: pytest, counted from its JUnit XML report."""

from __future__ import annotations

import ast
import posixpath
import re
import shlex
from collections.abc import Sequence

from agents.language import python_guard
from agents.language.description import Language, TestRun
from agents.language.sandbox_env import BASE_ENV, OFFLINE_PREFIX
from agents.python_files import parsed

_MARKER = re.compile(r"^\s*(?:async\s+)?def test\w*\s*\(|^\s*class Test\w*|^\s*import (?:pytest|unittest)", re.M)

# Without a network (SANDBOX_NETWORK=0) pip must not look for an index or for build tools to fetch.
_SETUP = (
    "pip install --quiet --no-cache-dir --disable-pip-version-check --break-system-packages "
    '--target /tmp/deps $([ "$SANDBOX_NETWORK" = 1 ] || echo --no-index --no-build-isolation) '
    "-r requirements.txt"
)
# pytest with no ini file of the team's (``-c /dev/null``: no addopts such as ``--co``, ``-k`` or ``-p no:...``
# from pytest.ini, pyproject.toml, setup.cfg or tox.ini), counted from a JUnit XML report outside the work
# dir: a run that ends before pytest writes it (sys.exit or os._exit at import) has not passed. No plugin
# the dependency setup installed is loaded by its entry point (it could rewrite the report).
# ``python3 -I``: neither the work dir nor the dependencies are on ``sys.path`` while pytest starts, so a
# ``pytest.py`` or ``_pytest/`` of the team's is not imported in place of pytest (it could write a report of
# tests that never ran); both are put on the path for the tests only (``pythonpath``). ``-I`` ignores the
# ``PYTHON*`` variables (``-B`` stands for PYTHONDONTWRITEBYTECODE); the processes the tests start still see them.
# The report goes into a folder only the sandbox's own user may write, through a channel it seals as pytest
# closes it (bot.sandbox.judge); pytest's own main runs, then the process ends (os._exit), so no atexit
# handler or thread of the code runs after the report.
REPORT = "/tmp/.judge/junit.xml"
DEPS = "/tmp/deps"  # where the setup step installs requirements.txt
# Before pytest or any file of the work dir is imported, the report's channel is opened (its name is then
# removed by the sandbox: no test, conftest or code can open it by its path and write a report of tests that
# never ran), and pytest writes its report through that open channel.
_PYTEST_THEN_EXIT = """import os, sys, time
args = sys.argv[1:]
where = next((a for a in args if a.startswith('--junitxml=')), '--junitxml=')[len('--junitxml='):]
if where:
    channel = os.open(where, os.O_WRONLY)
    for _ in range(1000):
        if not os.path.exists(where):
            break
        time.sleep(0.01)
    args = ['--junitxml=/dev/fd/%d' % channel if a.startswith('--junitxml=') else a for a in args]
import pytest
{guard}{on_path}code = pytest.main(args{plugins})
sys.stdout.flush()
sys.stderr.flush()
os._exit(int(code))
"""
# The team's tests run with the sandbox's own plugin (``python_guard``): no hook of a conftest.py of theirs, however
# its name is spelled, changes how pytest collects, runs or reports them. A repository's conftest.py is its own.
PYTEST_THEN_EXIT = _PYTEST_THEN_EXIT.format(on_path="", guard=python_guard.SOURCE, plugins=", plugins=[SandboxGuard()]")
# A repository's own tests see the import path ``python3 -m pytest`` gives them (the work dir first, then
# PYTHONPATH, where the setup installs the dependencies), put there once pytest itself is imported: its
# configuration (pythonpath, plugins named with -p) stays the repository's.
REPOSITORY_PYTEST_THEN_EXIT = _PYTEST_THEN_EXIT.format(
    on_path="sys.path[:0] = [os.getcwd(), *filter(None, os.environ.get('PYTHONPATH', '').split(os.pathsep))]\n",
    guard="", plugins="")
_TEST = (f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python3 -I -B -c {shlex.quote(PYTEST_THEN_EXIT)} -c /dev/null --rootdir=. "
         f"-o {shlex.quote(f'pythonpath=/work {DEPS}')} "
         f"-q -rfE --tb=short -p no:cacheprovider --color=no --junitxml={REPORT}")


def _is_test_code(code: str) -> bool:
    """Mostly test functions and classes, counted from the module's own definitions."""
    try:
        tree = parsed(code)
    except (SyntaxError, ValueError):
        return bool(_MARKER.search(code))
    defined = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    tests = [n for n in defined if n.lower().startswith("test")]
    return bool(tests) and len(tests) * 2 >= len(defined)


def _skeleton(module: str, code: str, names: Sequence[str]) -> str:
    package = posixpath.splitext(module)[0].replace("/", ".")
    return f"from {package} import {', '.join(names)}\n\n\n" + "\n\n\n".join(
        f"def test_{n.lower()}():\n    assert {n}(...) == ..." for n in names)


PYTHON = Language(
    name="python", title="Python", extensions=(".py",), test_files=("test_*.py", "*_test.py"),
    usual_file="main.py", aliases=("py", "python3"), named_by=r"python",
    how_tests_are_found="pytest runs functions named test_* in files named test_*.py or *_test.py",
    test_marker=_MARKER, is_test_code=_is_test_code, skeleton=_skeleton,
    error_at=(
        # A syntax error while importing a file, or an import failing in a test module.
        re.compile(r'^E?\s*File "(?:/work/)?(?P<path>[^"]+)", line \d+\n(?:E.*\n){0,3}E\s+'
                   r"(?:SyntaxError|IndentationError|TabError)", re.M),
        re.compile(r"^(?P<path>[\w./-]+\.py):\d+: in <module>\n(?:.*\n){0,3}?E\s+(?:ModuleNotFoundError|ImportError|SyntaxError)",
                   re.M),
    ),
    run=TestRun(
        # The official image has no pytest: `sandbox build` adds it on top.
        image="python:3.12-slim", image_prepare="pip install --no-cache-dir pytest",
        offline_image=f"{OFFLINE_PREFIX}/base:bookworm",
        env={**BASE_ENV, "PYTHONPATH": "/tmp/deps", "PYTHONDONTWRITEBYTECODE": "1"},
        setup_when=("requirements.txt",), setup_command=_SETUP,
        test_command=_TEST, report_format="pytest", report_file=REPORT,
    ),
)
