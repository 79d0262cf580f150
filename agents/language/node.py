"""JavaScript and TypeScript: ``node --test`` with its TAP reporter."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from agents.language.description import Language, TestRun
from agents.language.sandbox_env import BASE_ENV, OFFLINE_PREFIX

_MARKER = re.compile(r"\b(?:describe|it|test)\s*\(\s*['\"`]|node:test|require\(['\"](?:assert|node:assert)", re.M)
_PATTERNS = ("*.test.{ext}", "*_test.{ext}", "test_*.{ext}", "*.spec.{ext}", "*_spec.{ext}")
# JavaScript's module extensions: a test file may be any of them (``sub.test.mjs``), as the language says.
_JS = ("js", "mjs", "cjs")


def _test_files(*extensions: str) -> tuple[str, ...]:
    """The test-file patterns for these extensions: what the language declares and what its command finds."""
    return tuple(pattern.format(ext=ext) for ext in extensions for pattern in _PATTERNS)


def _found(*extensions: str) -> str:
    """The shell finding every test file ``_test_files`` names, outside node_modules."""
    names = " -o ".join(f"-name '{pattern}'" for pattern in _test_files(*extensions))
    return f"$(find . -path ./node_modules -prune -o \\( {names} \\) -print | sort)"


# No lifecycle script runs (the package's own or a dependency's): the setup installs, it runs nothing.
_SETUP = "if command -v npm >/dev/null; then npm install --no-audit --no-fund --ignore-scripts; " \
    "else echo 'npm is not in this image: dependencies not installed' >&2; fi"
# TypeScript: compiled by tsc when the image has it (the offline one does), else node >= 22.6 strips
# the types itself (the official node image; imports then name the .ts file). Without @types/node,
# tsc cannot type `node:*` imports; those notes are dropped, the code still compiles.
_TS_TEST = (
    "if command -v tsc >/dev/null; then "
    "tsc --outDir /tmp/ts-out --rootDir . --module commonjs --target es2020 --skipLibCheck "
    "$(find . -path ./node_modules -prune -o -name '*.ts' -print) | grep -v \"Cannot find module 'node:\" >&2; "
    "cd /tmp/ts-out && exec node --test --test-reporter=tap "
    f"{_found(*_JS)}; fi; "
    f"exec node --experimental-strip-types --test --test-reporter=tap {_found('ts')}"
)
_LOADING = (
    # "# /work/calc.test.js:2" above a SyntaxError, or the module that required a missing one.
    re.compile(r"^#? ?(?:/work/)?(?P<path>[\w./-]+\.[cm]?[jt]s):\d+\n(?:#.*\n){0,3}#?\s*SyntaxError", re.M),
    re.compile(r"Cannot find module .*\n#?\s*Require stack:\n#?\s*- (?:/work/)?(?P<path>[\w./-]+)", re.M),
)


def _is_test_code(code: str) -> bool:
    """Tests are calls (``test("...", ...)``), not definitions: the marker alone decides."""
    return bool(_MARKER.search(code))


def _skeleton(module: str, code: str, names: Sequence[str]) -> str:
    stem = posixpath.splitext(posixpath.basename(module))[0]
    return ("const test = require('node:test');\nconst assert = require('node:assert');\n"
            f"const {{ {', '.join(names)} }} = require('./{stem}');\n\n" + "\n\n".join(
                f"test('{n}', () => {{\n  assert.strictEqual({n}(...), ...);\n}});" for n in names))


def _run(test_command: str, env: dict[str, str]) -> TestRun:
    return TestRun(image="node:22-slim", offline_image=f"{OFFLINE_PREFIX}/node:bookworm",
                   offline_packages=("nodejs", "node-typescript"), env=env, setup_when=("package.json",),
                   setup_command=_SETUP, test_command=test_command, report_format="tap")


JAVASCRIPT = Language(
    name="javascript", title="JavaScript", extensions=(".js", ".mjs", ".cjs"), test_files=_test_files(*_JS),
    usual_file="index.js", aliases=("js", "node", "nodejs"), named_by=r"javascript|node\.?js|\bjs\b",
    how_tests_are_found="node --test runs files named *.test.js (or test_*.js) that call test() from node:test",
    tests_beside_code=True, test_marker=_MARKER, is_test_code=_is_test_code, skeleton=_skeleton, error_at=_LOADING,
    run=_run(f"node --test --test-reporter=tap {_found(*_JS)}", dict(BASE_ENV)),
)

TYPESCRIPT = Language(
    name="typescript", title="TypeScript", extensions=(".ts",), test_files=_test_files("ts"),
    usual_file="index.ts", aliases=("ts",), named_by=r"typescript|\bts\b",
    how_tests_are_found="node --test runs files named *.test.ts that call test() from node:test",
    tests_beside_code=True, test_marker=_MARKER, is_test_code=_is_test_code,
    # and tsc's "calc.test.ts(3,5): error TS2304: ..."
    error_at=(*_LOADING, re.compile(r"^(?:\./)?(?P<path>[\w./-]+\.tsx?)\(\d+,\d+\): error TS", re.M)),
    run=_run(_TS_TEST, {**BASE_ENV, "NODE_PATH": "/work/node_modules"}),  # compiled tests run from /tmp/ts-out
)
