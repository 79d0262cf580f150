"""Go: the user's ``_test.go`` files, with no test file of the team's beside them, judged from ``go test -json``.

The team's test files are absent from this pass, so no ``TestMain`` of theirs can skip or stop the
user's tests; ``GOWORK=off`` keeps a ``go.work`` out, ``-count=1`` keeps cached results out, and the
environment (``GOFLAGS`` included) is the sandbox's own. Each user test function is found by name in
the runner's events; a skip counts only when the user's file is where it was called.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Mapping, Sequence
from typing import Any

from bot.sandbox.authority import Authority, FileResult, Verdict, judge, quoted

_TEST_FUNC = re.compile(r"^func\s+(Test\w*)\s*\(\s*\w+\s+\*testing\.T\s*\)", re.M)
_LOCATION = re.compile(r"^\s+([\w./-]+\.go):\d+:", re.M)


class GoTest(Authority):
    def command(self, user: Sequence[str], files: Mapping[str, str], workdir: str, token: str) -> str:
        packages = sorted({"./" + (posixpath.dirname(path) or ".") for path in user})
        return ("[ -f go.mod ] || go mod init sandbox >/dev/null 2>&1; "
                f"GOWORK=off go test -count=1 -json {quoted(packages)}")

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
        return judge(results, extra)

    def display(self, stdout: str) -> str:
        """The text ``go test -v`` would have printed, rebuilt from the events' output."""
        lines = []
        for line in stdout.splitlines(keepends=True):
            event = _event(line)
            if event is None:
                lines.append(line)
            elif event.get("Action") == "output":
                lines.append(str(event.get("Output", "")))
        return "".join(lines)


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
