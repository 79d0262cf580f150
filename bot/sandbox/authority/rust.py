"""Rust: ``cargo test`` over the user's test files with no test file of the team's, and no manifest switch
or cargo config of the team's that could turn them off or run them through something else.

Refused before anything runs: a team-written ``Cargo.toml`` that can switch a test target off or build
another file in its place (``test = false``, ``harness = false`` or ``required-features`` on the library,
a binary or a ``[[test]]``; ``autotests = false`` or ``autobins = false``; a target table whose ``path`` is
not where cargo looks for a target of that name, so ``[[test]] name = "calc_test" path = "bench/checks.rs"``
cannot compile the team's file as the user's ``tests/calc_test.rs``), and any team-written file under
``.cargo/`` (its ``runner`` setting would run the test binaries through a program of the team's).

Each user file's target runs in a cargo invocation of its own (``--test NAME`` for a file in
``tests/``, ``--lib`` for the library's modules), and its results are read from the log the test
harness itself writes (``--logfile``), sealed by the sandbox: what the code prints is never read as a
result. Every test function the file declares must be in that log: a binary that exits part way
(``process::exit`` in the code) leaves the rest unreported, which is no pass.

The team's pass (and a repository's) runs plain ``cargo test``, read from what it prints: it is no pass when a
test binary started tests it never summed up (``unfinished``), or a ``tests/`` file the manifest builds was never
run (``unbuilt``).
"""

from __future__ import annotations

import posixpath
import re
import shlex
import tomllib
from collections.abc import Mapping, Sequence
from typing import Any

from bot.sandbox.authority import REPORT_SEPARATOR, Authority, FileResult, Verdict, framed, judge
from bot.sandbox.judge import JUDGE_DIR

_TEST_FUNC = re.compile(r"#\[test\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?fn\s+(\w+)")
_LOG_LINE = re.compile(r"^(ok|failed|ignored) (\S+)$", re.M)
LIB, BINS = "--lib", "--bins"
_RUNNING = re.compile(r"^running (\d+) tests?$")
_SUMMARY = re.compile(r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored; (\d+) measured;")
_RAN = re.compile(r"^\s*Running (?:unittests )?(.+?) \([^()]*\)$", re.M)


class CargoTest(Authority):
    def refusal(self, files: Mapping[str, str], user: Sequence[str]) -> str:
        mine = set(user)
        configs = sorted(p for p in files if ".cargo" in p.split("/")[:-1] and p not in mine)
        if configs:
            return (f"{configs[0]}: cargo configuration written by the team (it can run the tests through "
                    "another program) is not allowed; remove the .cargo folder")
        if "Cargo.toml" in files and "Cargo.toml" not in mine:
            return _manifest_switch(files["Cargo.toml"])
        return ""

    def team_problem(self, stdout: str, stderr: str, token: str, files: Mapping[str, str]) -> str:
        del token
        return unfinished(stdout) or unbuilt(stderr, files)

    def report_paths(self, user: Sequence[str]) -> list[str]:
        return [f"{JUDGE_DIR}/cargo-{index}.log" for index, _ in enumerate(_targets(user))]

    def command(self, user: Sequence[str], files: Mapping[str, str], workdir: str, token: str) -> str:
        runs = []
        for index, (target, _) in enumerate(_targets(user)):
            selector = target if target in (LIB, BINS) else f"--test {shlex.quote(target)}"
            log = f"{JUDGE_DIR}/cargo-{index}.log"
            # One stream: the build's messages before the results.
            runs.append(framed(index, f"cargo test --offline --no-fail-fast {selector} -- --logfile {log} 2>&1", token))
        return "; ".join(runs)

    def verdict(self, user: Sequence[str], files: Mapping[str, str], stdout: str, report: str,
                token: str, workdir: str) -> Verdict:
        results = {path: FileResult() for path in user}
        logs = _split(report)
        extra: list[str] = []
        for index, (_, paths) in enumerate(_targets(user)):
            log = logs.get(index, "")
            for path in paths:
                declared = set(_TEST_FUNC.findall(files.get(path, "")))
                seen = _judge_log(results[path], log, path, declared, "#[ignore" in files.get(path, ""))
                if missing := sorted(declared - seen):
                    extra.append(f"{path}: {', '.join(missing[:3])} never reported a result (the test binary "
                                 "ended before it, or the target was not built)")
        return judge(results, extra)


def unfinished(stdout: str) -> str:
    """Why ``cargo test``'s output shows a test binary that ended before it summed up every test it started: each
    "running N tests" must be followed by a "test result:" line counting N. A binary that exits with 0 part way
    (``std::process::exit(0)`` in code a test calls) leaves no summary, and cargo goes on to the next binary."""
    short, expected = 0, None  # binaries cut short; how many tests the current one started
    for line in [*stdout.splitlines(), "running 0 tests"]:  # (the last line closes the last binary)
        if started := _RUNNING.match(line):
            if expected is not None:  # the binary before this one never summed up
                short += 1
            expected = int(started.group(1))
        elif (summary := _SUMMARY.match(line)) and expected is not None:
            if sum(int(count) for count in summary.groups()) != expected:
                short += 1
            expected = None
    if not short:
        return ""
    return (f"{short} test binar{'y' if short == 1 else 'ies'} ended before reporting every test it started "
            "(std::process::exit in the code or a test, or an abort that exited 0), so the tests after that point "
            "never ran; let the tests return")


def unbuilt(stderr: str, files: Mapping[str, str]) -> str:
    """Why the run left out a test file of ``tests/``: cargo names each test binary it runs ("Running
    tests/calc.rs (...)"), and every integration test file the package's manifest builds must be among them (a
    workspace, a feature or a table that leaves one out; a team's switch is refused before the run). A run whose
    cargo named none (``--quiet``, in a repository's own command) cannot be checked so."""
    ran = set(_RAN.findall(stderr))
    missing = sorted(_integration_tests(files) - ran) if ran else []
    if not missing:
        return ""
    return (f"{', '.join(missing[:3])} {'was' if len(missing) == 1 else 'were'} never built and run by cargo test "
            "(the manifest or the workspace leaves it out), so its tests did not run")


def _integration_tests(files: Mapping[str, str]) -> set[str]:
    """The files of ``tests/`` plain ``cargo test`` builds as test targets of the package at the top: by cargo's
    own rules, less what that manifest itself switches off (the repository's to decide)."""
    try:
        manifest = tomllib.loads(files.get("Cargo.toml", ""))
    except tomllib.TOMLDecodeError:
        return set()
    package = manifest.get("package")
    if not isinstance(package, dict):
        return set()  # a workspace's manifest alone: the members' tests are theirs
    found = {p for p in files if re.fullmatch(r"tests/[^/]+\.rs|tests/[^/]+/main\.rs", p)}
    declared, off = set(), set()
    for kind, _, table in _target_tables(manifest):
        path, homes = _source(kind, table)
        path = path or next((home for home in homes if home in files), homes[0])
        if kind != "test" or table.get("test") is False or "required-features" in table:
            off.add(path)  # another kind of target claims it, or it is no test target by default
        else:
            declared.add(path)
    automatic = found if package.get("autotests", True) is not False else set()
    return ((automatic | declared) & found) - off


def _targets(user: Sequence[str]) -> list[tuple[str, list[str]]]:
    """Each cargo target holding user tests, with its user files: ``tests/NAME.rs`` or ``tests/NAME/main.rs``
    as ``NAME``; the binaries' sources as ``--bins``; anything else (the library's modules) as ``--lib``."""
    targets: dict[str, list[str]] = {}
    for path in user:
        parts = path.split("/")
        if parts[0] == "tests" and len(parts) == 2 and path.endswith(".rs"):
            name = posixpath.splitext(parts[1])[0]
        elif parts[0] == "tests" and len(parts) == 3 and parts[2] == "main.rs":
            name = parts[1]
        elif path == "src/main.rs" or path.startswith("src/bin/"):
            name = BINS
        else:
            name = LIB
        targets.setdefault(name, []).append(path)
    return sorted(targets.items())


def _split(report: str) -> dict[int, str]:
    """The sealed logs by their index (one report alone has no separator)."""
    pattern = re.compile(rf"^{re.escape(REPORT_SEPARATOR)} (\d+)$", re.M)
    marks = list(pattern.finditer(report))
    if not marks:
        return {0: report}
    return {int(m.group(1)): report[m.end():marks[i + 1].start() if i + 1 < len(marks) else len(report)]
            for i, m in enumerate(marks)}


def _judge_log(result: FileResult, log: str, path: str, declared: set[str], file_ignores: bool) -> set[str]:
    """Count the log's lines that belong to ``path``; the names of its tests that reported."""
    module = posixpath.splitext(posixpath.basename(path))[0]
    in_library = not path.startswith("tests/")
    seen = set()
    for outcome, test in _LOG_LINE.findall(log):
        parts = test.split("::")
        if parts[-1] not in declared or (in_library and module not in parts[:-1] and module not in ("lib", "main")):
            continue
        seen.add(parts[-1])
        result.ran = True
        if outcome == "ok":
            result.passed += 1
        elif outcome == "failed":
            result.failed += 1
        elif not file_ignores:
            result.foreign_skips.append(f"{test} ignored, though the file marks nothing #[ignore]")
    return seen


# Where cargo finds each kind of target by its name: a team's table naming another file could build that file
# in place of a test, or take a test file away from the tests (cargo builds a file once, for the table naming it).
_HOMES = {"lib": ("src/lib.rs",), "bin": ("src/main.rs", "src/bin/{name}.rs", "src/bin/{name}/main.rs"),
          "test": ("tests/{name}.rs", "tests/{name}/main.rs"),
          "example": ("examples/{name}.rs", "examples/{name}/main.rs"),
          "bench": ("benches/{name}.rs", "benches/{name}/main.rs")}
_TESTED = ("lib", "bin", "test")  # the kinds plain ``cargo test`` runs tests of (examples and benches it does not)


def _manifest_switch(text: str) -> str:
    """Why a team-written manifest could leave a test target unbuilt or build another file as it, or ''."""
    try:
        manifest = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return ""  # cargo itself will say what is wrong with it
    package: dict[str, Any] = manifest.get("package") or {}
    for key, what in (("autotests", "tests/"), ("autobins", "src/main.rs and src/bin/")):
        if package.get(key) is False:
            return f"Cargo.toml sets {key} = false, so the tests in {what} would not be built; remove it"
    for kind, label, table in _target_tables(manifest):
        if kind in _TESTED:
            for key in ("test", "harness"):
                if table.get(key) is False:
                    return f"Cargo.toml sets {key} = false under {label}, which turns tests off; remove it"
            if "required-features" in table:
                return (f"Cargo.toml sets required-features under {label}, so plain cargo test would not build it; "
                        "remove it")
        if (why := _moved(kind, label, table)):
            return why
    return ""


def _target_tables(manifest: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """Each target table of the manifest as (kind, how a person names it, the table)."""
    found = [("lib", "[lib]", manifest["lib"])] if isinstance(manifest.get("lib"), dict) else []
    for kind in ("bin", "test", "example", "bench"):
        tables = manifest.get(kind)
        for table in tables if isinstance(tables, list) else []:
            if isinstance(table, dict):
                found.append((kind, f"[[{kind}]] {_name(table)}", table))
    return found


def _name(table: dict[str, Any]) -> str:
    """A target's name: its own, else (as cargo does) its file's."""
    if isinstance(table.get("name"), str):
        return str(table["name"])
    folder, file = posixpath.split(str(table.get("path", "?")))
    return posixpath.basename(folder) if file == "main.rs" else posixpath.splitext(file)[0]


def _source(kind: str, table: dict[str, Any]) -> tuple[str, list[str]]:
    """A target table's ``path`` as a path of the work dir ('' when it gives none), and where cargo looks for a
    target of its kind and name."""
    path = posixpath.normpath(str(table["path"]).replace("\\", "/")) if "path" in table else ""
    return path, [home.format(name=_name(table)) for home in _HOMES[kind]]


def _moved(kind: str, label: str, table: dict[str, Any]) -> str:
    """Why a target's ``path`` is refused: another file than the one cargo would take for that name."""
    path, homes = _source(kind, table)
    if not path or path in homes:
        return ""
    return (f"Cargo.toml gives {label} the source {path}, where cargo looks for {' or '.join(homes)}: a target "
            "table may not build another file in a test's place or take a test file away; remove the path or "
            "move the file")
