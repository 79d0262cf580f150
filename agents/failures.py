"""What failed in a test run, told in few characters: the failing output as a model is shown it.

A model fixing code needs each distinct failure's assertion and where it happened, and how many more
failed the same way; it does not need the eighth copy of one assertion, nor tracebacks repeating the
test source. So the output is cut by failures, not by characters from one end:

- pytest's failure sections (``____ test_name ____``): the first failure in full, its assertion lines
  (``E ...``) first so a cut keeps them; then one line for each other failing test (its name and its
  first assertion line) while the budget lasts; then how many more failed, by name, with their cases;
- other runners' output, when it is too long: from the first line that reports a failure, then the end
  (where the counts are), with how much was left out between them.

``failing_tests`` names the tests that failed, so triage can be shown those tests' source only.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass

from agents.language.reports import FAILED_NAMES
from agents.python_files import parsed
from agents.types import TestReport

_SECTION = re.compile(r"^_{3,} (?P<name>.+?) _{3,}$", re.M)
_BANNER = re.compile(r"^={3,}.*={3,}$|^={3,}$", re.M)  # pytest's "=== short test summary info ===" and the like
_FAILED_LINE = re.compile(r"^(?:FAILED|ERROR) (?:[^\s:]+::)?(?P<name>\S+(?:\[[^\]]*\])?)", re.M)
_FIRST_FAILURE = re.compile(r"FAIL|not ok|panicked|Error|error|failed|Traceback|✖", re.M)
FIRST_SHARE = 0.6  # the first failure, shown in full, takes at most this share of the budget
LINE_CHARS = 160  # a one-line failure is cut to this many characters


@dataclass(frozen=True)
class _Failure:
    name: str
    lines: tuple[str, ...]  # the section's lines, assertion lines first

    @property
    def test(self) -> str:
        """The test function, without a parametrized case's ``[...]``."""
        return self.name.split("[", 1)[0]

    def one_line(self) -> str:
        said = next((line[1:].strip() for line in self.lines if line.startswith("E")), "")
        line = f"{self.name}: {said}" if said else self.name
        return line if len(line) <= LINE_CHARS else line[:LINE_CHARS - 3] + "..."


def digest(report: TestReport, limit: int) -> str:
    """The report's output in about ``limit`` characters, cut by failures (see the module docstring)."""
    text = report.stdout + (("\n" + report.stderr) if report.stderr else "")
    failures = _pytest_failures(text)
    if failures:
        return _told(failures, limit)
    return _cut_around_failures(text, limit)


def failing_tests(report: TestReport) -> list[str]:
    """The names of the tests that failed, as the runner printed them, in order, without repeats."""
    text = report.stdout + "\n" + report.stderr
    names = [f.name for f in _pytest_failures(text)] or [m.group("name") for m in _FAILED_LINE.finditer(text)]
    if not names:
        names = [m.group("name").strip() for pattern in FAILED_NAMES for m in pattern.finditer(text)]
    return list(dict.fromkeys(names))


def failing_source(tests: Mapping[str, str], names: list[str], theirs: Mapping[str, str] | None = None) -> dict[str, str] | None:
    """Only the failing tests' source, per Python test file of ``tests`` (decorators included, lines as they
    are); tests defined in ``theirs`` (the user's) are not looked for. None when some failing test cannot be
    found that way (another language, a name no function carries): the whole files are shown then."""
    wanted = {re.split(r"::|\.|\[", name, maxsplit=1)[0] for name in names}
    for content in (theirs or {}).values():
        wanted -= {name for name, _ in _definitions(content, wanted) or []}
    if not wanted or not tests or not all(path.endswith(".py") for path in tests):
        return None
    found: dict[str, str] = {}
    seen: set[str] = set()
    for path, content in tests.items():
        pieces = _definitions(content, wanted)
        if pieces is None:
            return None
        if pieces:
            found[path] = "\n\n".join(source for _, source in pieces) + "\n"
            seen.update(name for name, _ in pieces)
    return found if seen == wanted else None


def _definitions(content: str, wanted: set[str]) -> list[tuple[str, str]] | None:
    try:
        tree = parsed(content)
    except SyntaxError:
        return None
    lines = content.splitlines(keepends=True)
    pieces = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name in wanted:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            pieces.append((node.name, "".join(lines[first - 1:node.end_lineno]).rstrip("\n")))
    return pieces


def _pytest_failures(text: str) -> list[_Failure]:
    headers = list(_SECTION.finditer(text))
    failures = []
    for i, header in enumerate(headers):
        end = headers[i + 1].start() if i + 1 < len(headers) else len(text)
        banner = _BANNER.search(text, header.end(), end)
        body = text[header.end():banner.start() if banner else end].strip("\n").splitlines()
        said = [line for line in body if line.startswith("E")]
        failures.append(_Failure(header.group("name"), tuple(said + [line for line in body if not line.startswith("E")])))
    return failures


def _told(failures: list[_Failure], limit: int) -> str:
    """The first failure in full; then one line for each other failing test while they fit (another case of a
    test already shown tells little more); then the names of the rest, with how many cases each."""
    shown = [_block(failures[0], max(int(limit * FIRST_SHARE), 1))]
    used = len(shown[0])
    told = {failures[0].test}
    untold: list[_Failure] = []
    for failure in failures[1:]:
        line = failure.one_line()
        if failure.test in told or used + len(line) + 1 > limit - _names_room(limit):
            untold.append(failure)
            continue
        shown.append(line)
        told.add(failure.test)
        used += len(line) + 1
    if untold:
        shown.append(_more(untold, limit - used - 1))
    return "\n".join(shown)


def _block(failure: _Failure, room: int) -> str:
    """One failure in full: its name, then its lines while they fit ``room`` (the first always)."""
    kept = [f"{failure.name}:"]
    size = len(kept[0])
    for line in failure.lines:
        if len(kept) > 1 and size + len(line) + 1 > room:
            kept.append("    [...]")
            break
        kept.append(line)
        size += len(line) + 1
    return "\n".join(kept)


def _names_room(limit: int) -> int:
    return max(limit // 4, 60)


def _more(untold: list[_Failure], room: int) -> str:
    """"N more failed: name (k cases), ..." within ``room`` characters, the tests that do not fit counted."""
    cases: dict[str, int] = {}
    for failure in untold:
        cases[failure.test] = cases.get(failure.test, 0) + 1
    text = f"{len(untold)} more failed:"
    for i, (test, count) in enumerate(cases.items()):
        part = f" {test}" + (f" ({count} cases)" if count > 1 else "") + ("," if i < len(cases) - 1 else "")
        left = len(cases) - i
        rest = f" and {left} more test" + ("s" if left > 1 else "")
        if len(text) + len(part) + (len(rest) if left > 1 else 0) > room:
            return text.rstrip(",") + rest
        text += part
    return text


def _cut_around_failures(text: str, limit: int) -> str:
    """Output of a runner without failure sections: whole when short, else from the first failure on, and its end."""
    if len(text) <= limit:
        return text
    first = _FIRST_FAILURE.search(text)
    start = text.rfind("\n", 0, first.start()) + 1 if first else 0
    tail = limit // 3
    head = text[start:start + limit - tail]
    end = text[-tail:]
    left_out = len(text) - start - len(head) - len(end)
    if left_out <= 0:
        return text[start:]
    return f"{head}\n[... {left_out:,} characters of output not shown ...]\n{end}"
