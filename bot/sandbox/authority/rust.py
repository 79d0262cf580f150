"""Rust: ``cargo test`` over the user's test files with no test file of the team's, and no manifest switch
or cargo config of the team's that could turn them off or run them through something else.

Refused before anything runs: a team-written ``Cargo.toml`` that sets ``test = false`` or
``harness = false`` (on the library or a ``[[test]]`` target) or ``autotests = false``, and any
team-written file under ``.cargo/`` (its ``runner`` setting would run the test binaries through a
program of the team's).

Each user file's target runs in a cargo invocation of its own (``--test NAME`` for a file in
``tests/``, ``--lib`` for the library's modules), and its results are read from the log the test
harness itself writes (``--logfile``), sealed by the sandbox: what the code prints is never read as a
result. Every test function the file declares must be in that log: a binary that exits part way
(``process::exit`` in the code) leaves the rest unreported, which is no pass.
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


class CargoTest(Authority):
    def refusal(self, files: Mapping[str, str], user: Sequence[str]) -> str:
        mine = set(user)
        configs = sorted(p for p in files if ".cargo" in p.split("/")[:-1] and p not in mine)
        if configs:
            return (f"{configs[0]}: cargo configuration written by the team (it can run the tests through "
                    "another program) is not allowed; remove the .cargo folder")
        if "Cargo.toml" in files and "Cargo.toml" not in mine:
            return _manifest_switch(files["Cargo.toml"], any(p.startswith("tests/") for p in user))
        return ""

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


def _manifest_switch(text: str, user_in_tests: bool) -> str:
    try:
        manifest = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return ""  # cargo itself will say what is wrong with it
    package: dict[str, Any] = manifest.get("package") or {}
    if package.get("autotests") is False and user_in_tests:
        return "Cargo.toml sets autotests = false, so the user's tests in tests/ would not be built; remove it"
    targets = [("[lib]", manifest.get("lib") or {})]
    targets += [(f"[[test]] {t.get('name', '?')}", t) for t in manifest.get("test") or [] if isinstance(t, dict)]
    for name, table in targets:
        for key in ("test", "harness"):
            if isinstance(table, dict) and table.get(key) is False:
                return f"Cargo.toml sets {key} = false under {name}, which turns tests off; remove it"
    return ""
