"""Go: the user's ``_test.go`` files, with no test file of the team's beside them, judged from ``go test -json``.

The team's test files are absent from this pass, so no ``TestMain`` of theirs can skip or stop the
user's tests; ``GOWORK=off`` keeps a ``go.work`` out, ``-count=1`` keeps cached results out, and the
environment (``GOFLAGS`` included) is the sandbox's own. Each user test function is found by name in
the runner's events; a skip counts only when the user's file is where it was called.

In every pass (the team's too) each package with tests gets the sandbox's own ``TestMain``
(``MAIN_FILE``): a second one, written by the team, does not compile, and the events count only for a
package whose test binary said, through that ``TestMain``, that ``m.Run()`` ran and returned; a package go test
calls "ok" without that line (its binary exited 0 in an ``init``) is no pass. Go 1.19's
``test2json`` reads "--- PASS" lines printed by anything as results; a binary that printed them and exited
(from a ``TestMain`` or an ``init``) never reaches the sandbox's line.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from bot.sandbox.authority import Authority, FileResult, Verdict, judge, quoted

MAIN_FILE = "zz_codegen_sandbox_main_test.go"
MARK_ENV = "CODEGEN_SANDBOX_RAN"
_MAIN = """package {package}

import (
\t"fmt"
\t"os"
\t"testing"
)

// Written by the sandbox: the tests ran through m.Run(), and this is what it returned.
func TestMain(m *testing.M) {{
\tcode := m.Run()
\tfmt.Printf("\\n@@codegen-ran %s %d\\n", os.Getenv("{env}"), code)
\tos.Exit(code)
}}
"""
_PACKAGE = re.compile(r"^package\s+(\w+)", re.M)
_TEST_MAIN = re.compile(r"^func\s+TestMain\s*\(", re.M)
_TEST_FUNC = re.compile(r"^func\s+(Test\w*)\s*\(\s*\w+\s+\*testing\.T\s*\)", re.M)
_LOCATION = re.compile(r"^\s+([\w./-]+\.go):\d+:", re.M)
_PACKAGE_END = re.compile(r"^(ok|FAIL|\?) {0,3}\t(\S+)")
_MODULE = re.compile(r"^module\s+(\S+)", re.M)
_REPLACE = re.compile(r"^\s*replace\s+(?:\(\s*\n(?P<block>.*?)^\s*\)|(?P<one>[^\s(]+))", re.M | re.S)
_IMPORT = re.compile(r'^\s*import\s+(?:\((?P<block>.*?)\)|(?:[\w.]+\s+)?"(?P<one>[^"]+)")', re.M | re.S)
_QUOTED = re.compile(r'"([^"]+)"')


class GoTest(Authority):
    def refusal(self, files: Mapping[str, str], user: Sequence[str]) -> str:
        """A ``replace`` in a go.mod the team wrote, of a module a test imports: the test would check the team's
        copy of it (an assertion package whose checks never fail) instead of the module. A module under the
        project's own module path (a multi-module layout's ``example.com/calc/util => ./util``) is its code."""
        if "go.mod" not in files or "go.mod" in user:
            return ""
        own = _module(files)  # a module of the project's own path (example.com/calc/util) is its own code
        replaced = {m for m in _replaced(files["go.mod"]) if m != own and not m.startswith(own + "/")}
        for path in sorted(p for p in files if p.endswith("_test.go")):
            for imported in _imports(files[path]):
                if module := next((m for m in replaced if imported == m or imported.startswith(m + "/")), None):
                    return (f"go.mod replaces {module}, which {path} imports, with other code: the test would check "
                            "that code instead of the module; remove the replace directive")
        return ""

    def team_refusal(self, files: Mapping[str, str]) -> str:
        for path in sorted(files):
            if path.endswith("_test.go") and _TEST_MAIN.search(files[path]):
                return (f"{path} declares TestMain; the sandbox runs every package's tests through a TestMain of "
                        "its own (so no TestMain can report tests it never ran): move that setup into the tests")
        return ""

    def pass_files(self, files: Mapping[str, str], user: Sequence[str]) -> dict[str, str]:
        present = super().pass_files(files, user)
        return {**present, **main_files({p: files[p] for p in user})}

    def team_files(self, files: Mapping[str, str]) -> dict[str, str]:
        return main_files(files)

    def team_env(self, token: str) -> dict[str, str]:
        return {MARK_ENV: token}

    def team_problem(self, stdout: str, stderr: str, token: str, files: Mapping[str, str]) -> str:
        del stderr
        return unfinished(stdout, token, _own_main_packages(files))

    def command(self, user: Sequence[str], files: Mapping[str, str], workdir: str, token: str) -> str:
        packages = sorted({"./" + (posixpath.dirname(path) or ".") for path in user})
        return ("[ -f go.mod ] || go mod init sandbox >/dev/null 2>&1; "
                f"{MARK_ENV}={token} GOWORK=off go test -count=1 -json {quoted(packages)}")

    def verdict(self, user: Sequence[str], files: Mapping[str, str], stdout: str, report: str,
                token: str, workdir: str) -> Verdict:
        results = {path: FileResult() for path in user}
        owner = {name: path for path in user for name in _TEST_FUNC.findall(files.get(path, ""))}
        output: dict[str, list[str]] = {}
        failed_packages: set[str] = set()
        for event in _events(stdout):
            name, action = str(event.get("Test", "")), event.get("Action")
            if not name:
                if action == "fail":
                    failed_packages.add(str(event.get("Package", "?")))
                continue
            top = name.split("/", 1)[0]
            if action == "output":
                output.setdefault(top, []).append(str(event.get("Output", "")))
            if top != name or top not in owner or action not in ("pass", "fail", "skip"):
                continue
            path = owner[top]
            _count(results[path], str(action), posixpath.basename(path), "".join(output.get(top, [])))
        extra = []
        if failed_packages and not any(r.failed for r in results.values()):
            extra.append(f"go test failed for {', '.join(sorted(failed_packages))} (see the output)")
        if (problem := unfinished(stdout, token)) and not any(_TEST_MAIN.search(files.get(p, "")) for p in user):
            extra.append(problem)  # (a user file's own TestMain reports as it sees fit)
        if not extra:  # the tests that reported passed, but a test go never ran checked nothing
            extra = [f"{path}: {name} never ran{UNRUN_HINT}" for path, name in unrun(files, stdout, user)
                     if not results[path].failed]
        return judge(results, extra)

    def display(self, stdout: str) -> str:
        """The text ``go test -v`` would have printed, rebuilt from the events' output."""
        lines = []
        for line in stdout.splitlines(keepends=True):
            event = _event(line)
            if event is None:
                if not line.startswith("@@codegen-ran "):  # (go test -v's text: the sandbox's line is not theirs)
                    lines.append(line)
            elif event.get("Action") == "output" and not str(event.get("Output", "")).startswith("@@codegen-ran "):
                lines.append(str(event.get("Output", "")))
        return "".join(lines)


def main_files(files: Mapping[str, str]) -> dict[str, str]:
    """The sandbox's ``TestMain`` for each folder holding a ``_test.go`` file, in that file's package (none
    where a test file of the folder has its own: the user's, which is theirs to keep)."""
    found: dict[str, str] = {}
    own = {posixpath.dirname(p) for p, text in files.items() if p.endswith("_test.go") and _TEST_MAIN.search(text)}
    for path in sorted(files):
        if posixpath.dirname(path) in own:
            continue
        if path.endswith("_test.go") and (package := _PACKAGE.search(files[path])):
            found.setdefault(posixpath.join(posixpath.dirname(path), MAIN_FILE),
                             _MAIN.format(package=package.group(1), env=MARK_ENV))
    return found


def unfinished(stdout: str, token: str, own_main: Collection[str] = ()) -> str:
    """Why a package's results do not count: a package go test reported as tested (a test's result, or the
    package's own "ok"), but whose test binary never said (``MAIN_FILE``) that ``m.Run()`` ran the tests and
    returned. A binary that exits with 0 in an ``init`` runs no test and reports nothing but "ok". Read from
    ``go test -json``'s events, else from ``go test -v``'s text (a repository's command), where each package's
    output ends with its "ok" line. ``own_main`` names the packages with a ``TestMain`` of their own (a
    repository's), which report as they see fit."""
    line = f"@@codegen-ran {token} "
    events = _events(stdout)
    reported: set[str] = set()
    finished: set[str] = set()
    for event in events:
        package, action = str(event.get("Package", "?")), event.get("Action")
        if action == "pass" or (action in ("fail", "skip") and event.get("Test")):
            reported.add(package)
        elif action == "output" and str(event.get("Output", "")).startswith(line):
            finished.add(package)
    if not events:
        reported, finished = _text_packages(stdout, line)
    missing = sorted(reported - finished - set(own_main))
    if not missing:
        return ""
    return (f"the test binary of {', '.join(missing)} ended without its tests being run by the testing package "
            "(a TestMain or init that exits, or prints results of its own): its results do not count")


# Why go test leaves a declared test out, said once after the tests it left out.
UNRUN_HINT = (": a build constraint (//go:build) or a file name ending in an OS or architecture (_windows_test.go) "
              "leaves a file out of the build, and go runs a test only when no lowercase letter follows Test in its "
              "name; write tests that every build runs")


def unrun(files: Mapping[str, str], stdout: str, paths: Collection[str] | None = None) -> list[tuple[str, str]]:
    """Each top-level ``func TestX(t *testing.T)`` of the ``_test.go`` files among ``files`` (those of ``paths``,
    when given) that ``go test -json`` reported no result for (no pass, fail or skip), as (path, name): go never
    built its file, or never ran it."""
    reported = {(str(event.get("Package", "")), str(event["Test"])) for event in _events(stdout)
                if event.get("Action") in ("pass", "fail", "skip") and event.get("Test")}
    root = _module(files)
    missing = []
    for path in sorted(files if paths is None else paths):
        if not path.endswith("_test.go") or path not in files or _ignored_by_go(path):
            continue
        package = posixpath.join(root, posixpath.dirname(path)).rstrip("/")
        missing += [(path, name) for name in _TEST_FUNC.findall(files[path]) if (package, name) not in reported]
    return missing


def _ignored_by_go(path: str) -> bool:
    """A file in a folder go leaves out on purpose (testdata, _name, .name): Go sources kept as test inputs."""
    return any(part == "testdata" or part.startswith(("_", ".")) for part in path.split("/")[:-1])


def _module(files: Mapping[str, str]) -> str:
    """The work dir's module path: go.mod's, else the one the sandbox's ``go mod init`` makes."""
    module = _MODULE.search(files.get("go.mod", ""))
    return module.group(1).strip('"') if module else "sandbox"


def _text_packages(stdout: str, line: str) -> tuple[set[str], set[str]]:
    """``go test -v``'s packages that passed ("ok  \tPKG"), and those of them whose output held ``line``: go test
    prints each package's output whole, ending with that package's "ok", "FAIL" or "?" line."""
    passed: set[str] = set()
    finished: set[str] = set()
    ran = False
    for text in stdout.splitlines():
        if text.startswith(line):
            ran = True
        elif ended := _PACKAGE_END.match(text):
            if ended.group(1) == "ok":
                passed.add(ended.group(2))
                if ran:
                    finished.add(ended.group(2))
            ran = False
    return passed, finished


def _replaced(go_mod: str) -> set[str]:
    """The module paths a go.mod's ``replace`` directives redirect (one line each, or a block)."""
    found = set()
    for match in _REPLACE.finditer(go_mod):
        lines = match.group("block").splitlines() if match.group("block") is not None else [match.group("one")]
        found |= {line.split()[0].strip('"') for line in lines if line.strip() and not line.strip().startswith("//")}
    return found


def _imports(source: str) -> set[str]:
    """The import paths of a Go file (single imports and import blocks)."""
    found = set()
    for match in _IMPORT.finditer(source):
        found |= set(_QUOTED.findall(match.group("block"))) if match.group("block") is not None else {match.group("one")}
    return found


def _own_main_packages(files: Mapping[str, str]) -> set[str]:
    """The import paths of the folders whose test files hold a ``TestMain`` of their own (so no ``MAIN_FILE``)."""
    root = _module(files)
    folders = {posixpath.dirname(p) for p, text in files.items()
               if p.endswith("_test.go") and posixpath.basename(p) != MAIN_FILE and _TEST_MAIN.search(text)}
    return {posixpath.join(root, folder) if folder else root for folder in folders}


def _count(result: FileResult, action: str, filename: str, output: str) -> None:
    result.ran = True
    if action == "pass":
        result.passed += 1
    elif action == "fail":
        result.failed += 1
    else:
        places = _LOCATION.findall(output)
        if not any(posixpath.basename(place) == filename for place in places):
            result.foreign_skips.append(", ".join(places) or "no location given")


def _events(stdout: str) -> list[dict[str, Any]]:
    return [event for line in stdout.splitlines() if (event := _event(line)) is not None]


def _event(line: str) -> dict[str, Any] | None:
    if not line.startswith("{"):
        return None
    try:
        event = json.loads(line)
    except ValueError:
        return None
    return event if isinstance(event, dict) else None
