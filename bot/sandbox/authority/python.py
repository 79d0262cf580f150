"""Python: the user's test files through a pytest nothing in the work dir or the dependencies configures.

- ``python3 -I``: no ``PYTHON*`` variable, no user site, and neither the work dir nor ``/tmp/deps`` on
  ``sys.path`` while pytest starts, so no ``pytest.py``, ``_pytest/`` or ``sitecustomize.py`` there
  is imported in its place;
- ``-c`` an ini file written outside the work dir, so no ``pytest.ini``, ``pyproject.toml``,
  ``setup.cfg`` or ``tox.ini`` (``addopts = -k ...``) is read; it puts the work dir and the
  dependencies on ``sys.path`` for the tests only;
- ``--noconftest``: no ``conftest.py`` (hooks, ``collect_ignore``, fixtures) anywhere;
- ``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1`` and no ``PYTEST_ADDOPTS``/``PYTEST_PLUGINS``: no plugin installed
  by the dependency setup is loaded through its entry point;
- the user's files named explicitly, and counted from pytest's JUnit XML report, sealed by the sandbox
  (``judge``) as pytest closes it; pytest's process ends right after (``os._exit``), so no ``atexit``
  handler or thread of the code runs after the report.
"""

from __future__ import annotations

import shlex
import xml.etree.ElementTree as ElementTree
from collections.abc import Mapping, Sequence

from agents.language.python import DEPS, PYTEST_THEN_EXIT
from bot.sandbox.authority import REPORT_DIR, Authority, FileResult, Verdict, judge, quoted
from bot.sandbox.judge import JUDGE_DIR
from bot.sandbox.junit import outcome, stopped, testcases, without_note


class Pytest(Authority):
    report_path = f"{JUDGE_DIR}/user-report.xml"

    def command(self, user: Sequence[str], files: Mapping[str, str], workdir: str, token: str) -> str:
        ini = f"[pytest]\njunit_family = xunit1\npythonpath = {workdir} {DEPS}\n"
        return (
            f"rm -rf {REPORT_DIR} && mkdir -p {REPORT_DIR} && printf '%s' {shlex.quote(ini)} > {REPORT_DIR}/pytest.ini && "
            "env -u PYTEST_ADDOPTS -u PYTEST_PLUGINS PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 "
            f"python3 -I -c {shlex.quote(PYTEST_THEN_EXIT)} -c {REPORT_DIR}/pytest.ini --rootdir={workdir} --noconftest "
            f"-p no:cacheprovider -q -rfEs --tb=short --color=no --junitxml={self.report_path} "
            f"{quoted(user, workdir.rstrip('/') + '/')}"
        )

    def verdict(self, user: Sequence[str], files: Mapping[str, str], stdout: str, report: str,
                token: str, workdir: str) -> Verdict:
        results = {path: FileResult() for path in user}
        try:
            cases = testcases(report)
        except ValueError as error:
            return judge(results, [f"pytest wrote no readable report of the user's tests ({error})"])
        extra: list[str] = []
        if any(stopped(case) for case in cases):
            extra.append("pytest was stopped in the middle of a test (pytest.exit or the like), so the tests "
                         "after it never ran")
        for case in cases:
            path = case.get("file", "")
            result = results.get(path)
            if result is None:  # a collection error has no file; anything else failing is a failure too
                if outcome(case)[0] in ("failure", "error"):
                    extra.append(f"pytest reported: {_message(case)}")
                continue
            _count(result, case, workdir.rstrip("/") + "/" + path, "xfail" in files.get(path, ""))
        return judge(results, extra)

    def display(self, stdout: str) -> str:
        return without_note(stdout)



def _count(result: FileResult, case: ElementTree.Element, location: str, file_uses_xfail: bool) -> None:
    result.ran = True
    kind, element = outcome(case)
    if kind == "passed":
        result.passed += 1
    elif kind in ("failure", "error"):
        result.failed += 1
    elif element is not None and element.get("type") == "pytest.xfail":
        # The XML does not say where an xfail came from: only a file that asks for it may have one.
        if not file_uses_xfail:
            result.foreign_skips.append(f"xfail of {case.get('name')}, which the file does not ask for")
    else:
        # A skip's text starts with where it was raised: "/work/test_calc.py:12: reason".
        where = (element.text or "") if element is not None else ""
        if not where.startswith(location + ":"):
            result.foreign_skips.append(where.rsplit(": ", 1)[0] if where else f"skip of {case.get('name')}")


def _message(case: ElementTree.Element) -> str:
    _, element = outcome(case)
    text = (element.get("message") if element is not None else None) or case.get("name") or ""
    return text[:300]
