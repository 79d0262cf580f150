"""Reading pytest's JUnit XML report: the test cases, and what each one's outcome was."""

from __future__ import annotations

import posixpath
import re
import xml.etree.ElementTree as ElementTree
from collections.abc import Mapping

from bot.sandbox.results import Counts


def testcases(report: str) -> list[ElementTree.Element]:
    """Every ``<testcase>``; ``ValueError`` saying why when the report is missing or unreadable."""
    if not report.strip():
        raise ValueError("it is missing")
    if "<!DOCTYPE" in report or "<!ENTITY" in report:
        raise ValueError("it declares entities")
    try:
        root = ElementTree.fromstring(report)
    except ElementTree.ParseError as error:
        raise ValueError(str(error)) from None
    return list(root.iter("testcase"))


def outcome(case: ElementTree.Element) -> tuple[str, ElementTree.Element | None]:
    """"failure", "error", "skipped" (xfail included: its type says pytest.xfail) or "passed"."""
    for kind in ("failure", "error", "skipped"):
        found = case.find(kind)
        if found is not None:
            return kind, found
    return "passed", None


def counts(report: str) -> Counts:
    """Passed and failed (errors included) test cases; skips and xfails are neither. Raises ``ValueError``,
    also when the run was stopped before every test reported."""
    cases = testcases(report)
    if any(stopped(case) for case in cases):
        raise ValueError("pytest was stopped in the middle of a test, by pytest.exit or the like, "
                         "so the tests after it never ran")
    kinds = [outcome(case)[0] for case in cases]
    return Counts(kinds.count("passed"), kinds.count("failure") + kinds.count("error"))


def names(report: str) -> tuple[str, ...]:
    """Every test case the report lists, as ``classname::name``; ``ValueError`` as ``testcases``."""
    return tuple(f"{case.get('classname', '')}::{case.get('name')}" for case in testcases(report) if case.get("name"))


# A test function or class at the top of a module: what pytest would collect from a file it was given.
_TOP_LEVEL_TEST = re.compile(r"^(?:async\s+)?def test\w*\s*\(|^class Test\w*", re.M)


def unreported(files: Mapping[str, str], report: str) -> list[str]:
    """The Python files among ``files`` holding test functions that no test case of the report comes from: pytest
    never collected them (``calc_spec.py``, ``tests/calc.py``: pytest only collects test_*.py and *_test.py). A
    case's classname is its module's dotted path ("tests.test_calc", then ".TestCalc" for a class)."""
    try:
        modules = {case.get("classname", "") for case in testcases(report)}
    except ValueError:
        return []  # no readable report is no pass already
    missing = []
    for path, text in sorted(files.items()):
        if not path.endswith(".py") or posixpath.basename(path) == "conftest.py" or not _TOP_LEVEL_TEST.search(text):
            continue
        module = path[:-3].replace("/", ".")
        if not any(name == module or name.startswith(module + ".") for name in modules):
            missing.append(path)
    return missing


def stopped(case: ElementTree.Element) -> bool:
    """A test case with no name: the one running when the session was stopped (``pytest.exit``) is written
    so, with no outcome, and must not read as a pass."""
    return not case.get("name") and outcome(case)[0] == "passed"


_XML_NOTE = re.compile(r"^-+ generated xml file: .* -+\n", re.M)


def without_note(stdout: str) -> str:
    """pytest's output without its line saying where the report went (the sandbox's business)."""
    return _XML_NOTE.sub("", stdout)
