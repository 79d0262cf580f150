"""node's test runner reports every test it ran by name ("# Subtest: name"). A test file whose process ended
before its tests all reported (``process.exit(0)`` in the code while an async test waits, from a timer or a
callback) shows only those that finished, and node sums up what it saw: "1 passed, 0 failed". So every test a
test file names with a plain string (``test('sub', ...)``, ``it("sub")``, ``describe('calc')``) must have
reported; a name the source builds (a template with ``${}``, a variable, an escape) is not known here and is not
asked for.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

# A call naming a test with a plain literal, then its options or function: test('x', ...), it.skip("x", ...),
# describe(`x`, ...), t.test('x', ...). A name alone is no test to wait for (it checks nothing), and is what a
# regular expression's test('42') looks like.
_DECLARED = re.compile(r"\b(?:test|it|describe|suite)(?:\.(?:skip|todo|only))?\s*\(\s*"
                       r"(?:'([^'\\\n]*)'|\"([^\"\\\n]*)\"|`([^`\\$]*)`)\s*,")
_LINE_COMMENT = re.compile(r"^\s*//.*$", re.M)
_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_REPORTED = re.compile(r"^\s*# Subtest: (.*)$", re.M)
# A line break or a tab in a name (a template literal over two lines) is reported escaped, each node version its own
# way: such a name is not asked for.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


# A file that skips or leaves tests to do (describe.skip, { skip: true }, test.todo) asks for none: node reports
# no test inside a skipped suite, and such a file is judged by its skips (``bot.sandbox.skips``).
_SKIPS = re.compile(r"\b(?:skip|todo)\b")


def declared(source: str) -> set[str]:
    """The names a test file gives its tests as plain literals, outside comments (a test commented out is none)."""
    code = _LINE_COMMENT.sub("", _BLOCK_COMMENT.sub("", source))
    if _SKIPS.search(code):
        return set()
    names = {next(part for part in match.groups() if part is not None).strip() for match in _DECLARED.finditer(code)}
    return {name for name in names if not _CONTROL.search(name)}


def reported(output: str) -> set[str]:
    """The names node's TAP reporter gave a result, unescaped as it escapes them (``\\#``, ``\\\\``)."""
    return {re.sub(r"\\([\\#])", r"\1", name).strip() for name in _REPORTED.findall(output)}


def unreported(files: Mapping[str, str], output: str) -> list[tuple[str, str]]:
    """Each (path, name) of the test ``files`` whose plainly named test never reported in ``output``."""
    seen = reported(output)
    return [(path, name) for path in sorted(files) for name in sorted(declared(files[path]) - seen)]


def sentence(missing: list[tuple[str, str]]) -> str:
    shown = ", ".join(f"{name!r} ({path})" for path, name in missing[:5])
    return (f"node never reported {shown}: the test process ended before those tests finished (process.exit in "
            "the code or a test, while a test still waited), so they checked nothing; let the tests end by "
            "themselves")
