"""Rust: ``cargo test`` over the user's test files with no test file of the team's, and no manifest switch
or cargo config of the team's that could turn them off or run them through something else.

Refused before anything runs: a team-written ``Cargo.toml`` that sets ``test = false`` or
``harness = false`` (on the library or a ``[[test]]`` target) or ``autotests = false``, and any
team-written file under ``.cargo/`` (its ``runner`` setting would run the test binaries through a
program of the team's). Each user test function is then found by name under the target that built it.
"""

from __future__ import annotations

import posixpath
import re
import tomllib
from collections.abc import Mapping, Sequence
from typing import Any

from bot.sandbox.authority import Authority, FileResult, Verdict, judge

_TEST_FUNC = re.compile(r"#\[test\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?fn\s+(\w+)")
_RUNNING = re.compile(r"^\s+Running (?:unittests )?(\S+)", re.M)
_RESULT = re.compile(r"^test (\S+) \.\.\. (ok|FAILED|ignored)", re.M)


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

    def command(self, user: Sequence[str], files: Mapping[str, str], workdir: str, token: str) -> str:
        return "cargo test --offline --no-fail-fast 2>&1"  # one stream: results follow their "Running" line

    def verdict(self, user: Sequence[str], files: Mapping[str, str], stdout: str, report: str,
                token: str, workdir: str) -> Verdict:
        results = {path: FileResult() for path in user}
        names = {path: set(_TEST_FUNC.findall(files.get(path, ""))) for path in user}
        targets = [(m.start(), m.group(1)) for m in _RUNNING.finditer(stdout)]
        for match in _RESULT.finditer(stdout):
            target = next((t for start, t in reversed(targets) if start < match.start()), "")
            path = _owner(match.group(1), target, names)
            if path is None:
                continue
            _count(results[path], match.group(2), match.group(1), "#[ignore" in files.get(path, ""))
        return judge(results)


def _owner(test: str, target: str, names: Mapping[str, set[str]]) -> str | None:
    """Which user file a result line belongs to: its own target, or a module of the library."""
    parts = test.split("::")
    for path, declared in names.items():
        if parts[-1] not in declared:
            continue
        if target == path:
            return path
        module = posixpath.splitext(posixpath.basename(path))[0]
        if path.startswith("src/") and target.startswith("src/") and module in parts[:-1]:
            return path
    return None


def _count(result: FileResult, outcome: str, test: str, file_ignores: bool) -> None:
    result.ran = True
    if outcome == "ok":
        result.passed += 1
    elif outcome == "FAILED":
        result.failed += 1
    elif not file_ignores:
        result.foreign_skips.append(f"{test} ignored, though the file marks nothing #[ignore]")


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
