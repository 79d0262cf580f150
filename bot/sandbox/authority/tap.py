"""C, C++, Bash, JavaScript and TypeScript: each user test file run by itself, its TAP lines and exit code
read from its own framed section of the output.

- C and C++: one test binary per user file, from that file and the code (never ``main.c`` and never a
  test file of the team's); the user's own object file must define ``main``, so no ``main`` of the
  team's prints the ``ok`` lines in its place.
- Bash: each user file runs as its own ``bash`` process, named explicitly (no ``find``).
- JavaScript and TypeScript: ``node --test`` on each user file alone (each in its own process), with no
  test file of the team's present; TypeScript is compiled with the files named on the command line, so
  no ``tsconfig.json`` applies.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Mapping, Sequence

from bot.sandbox.authority import REPORT_DIR, Authority, FileResult, Verdict, framed, judge, sections
from bot.sandbox.results import node_files_alone

_RESULT = re.compile(r"^(not ok|ok)\b(.*)$", re.M)
_DIRECTIVE = re.compile(r"#\s*(skip|todo)\b", re.I)
_PLAN = re.compile(r"^1\.\.(\d+)", re.M)
_NODE_SUMMARY = re.compile(r"^# (pass|fail|cancelled) (\d+)$", re.M)


class TapFiles(Authority):
    """The shared half: one framed section per user file, judged by its TAP lines and exit code."""

    def command(self, user: Sequence[str], files: Mapping[str, str], workdir: str, token: str) -> str:
        prepare = self.prepare(user, files)
        runs = "; ".join(framed(i, self.run_one(i, path, user, files), token) for i, path in enumerate(user))
        return f"rm -rf {REPORT_DIR} && mkdir -p {REPORT_DIR} || exit 2; {prepare}{runs}"

    def prepare(self, user: Sequence[str], files: Mapping[str, str]) -> str:
        return ""

    def run_one(self, index: int, path: str, user: Sequence[str], files: Mapping[str, str]) -> str:
        raise NotImplementedError

    def verdict(self, user: Sequence[str], files: Mapping[str, str], stdout: str, report: str,
                token: str, workdir: str) -> Verdict:
        found = sections(stdout, token)
        results = {}
        for index, path in enumerate(user):
            output, code = found.get(index, ("", None))
            results[path] = _judged(output, code) if index in found else FileResult()
        return judge(results)


def _judged(output: str, code: int | None) -> FileResult:
    result = FileResult(ran=True)
    summary = dict(_NODE_SUMMARY.findall(output))
    if summary:
        alone = node_files_alone(output)  # the file exited before its tests reported, or has none
        result.passed = max(int(summary.get("pass", 0)) - alone, 0)
        result.failed = int(summary.get("fail", 0)) + int(summary.get("cancelled", 0)) + alone
    else:
        lines = [(word, rest) for word, rest in _RESULT.findall(output) if not _DIRECTIVE.search(rest)]
        result.passed = sum(word == "ok" for word, _ in lines)
        result.failed = sum(word == "not ok" for word, _ in lines)
        plan = _PLAN.search(output)
        counted = len(_RESULT.findall(output))
        if plan and counted < int(plan.group(1)):
            result.failed += int(plan.group(1)) - counted  # stopped before its plan's end
    if code != 0 and not result.failed:
        result.failed = 1  # crashed, killed or exited non-zero: never a pass
    return result


class NativeTap(TapFiles):
    """C or C++: the user's file must hold ``main``; the binary is that file plus the code."""

    def __init__(self, compiler: str, extensions: tuple[str, ...], mains: tuple[str, ...]) -> None:
        self._compiler, self._extensions, self._mains = compiler, extensions, mains

    def run_one(self, index: int, path: str, user: Sequence[str], files: Mapping[str, str]) -> str:
        code = [p for p in files if p.endswith(self._extensions) and p not in user
                and posixpath.basename(p) not in self._mains]
        obj, binary = f"{REPORT_DIR}/user{index}.o", f"{REPORT_DIR}/test{index}"
        sources = " ".join(shlex.quote("./" + p) for p in code)
        return (f"{{ {self._compiler} -c -o {obj} {shlex.quote('./' + path)} && "
                f"{{ nm {obj} | grep -q ' T main$' || {{ echo {shlex.quote(path + ': defines no main()')} >&2; "
                f"false; }}; }} && {self._compiler} -o {binary} {obj} {sources} -lm && {binary}; }}")


class BashTap(TapFiles):
    def run_one(self, index: int, path: str, user: Sequence[str], files: Mapping[str, str]) -> str:
        shown = shlex.quote(path)
        return (f"{{ bash -- {shlex.quote('./' + path)} && echo \"ok {index + 1} - \"{shown} || "
                f"{{ echo \"not ok {index + 1} - \"{shown}; false; }}; }}")


class NodeTap(TapFiles):
    """JavaScript, or TypeScript (compiled by tsc when the image has it, else node strips the types)."""

    def __init__(self, typescript: bool) -> None:
        self._typescript = typescript

    def prepare(self, user: Sequence[str], files: Mapping[str, str]) -> str:
        if not self._typescript:
            return ""
        sources = " ".join(shlex.quote("./" + p) for p in files if p.endswith(".ts") and not p.endswith(".d.ts"))
        return (f"if command -v tsc >/dev/null; then tsc --outDir {REPORT_DIR}/js --rootDir . --module commonjs "
                f"--target es2020 --skipLibCheck {sources} | grep -v \"Cannot find module 'node:\" >&2; fi; ")

    def run_one(self, index: int, path: str, user: Sequence[str], files: Mapping[str, str]) -> str:
        if not self._typescript:
            return f"node --test --test-reporter=tap {shlex.quote('./' + path)}"
        compiled = f"{REPORT_DIR}/js/{posixpath.splitext(path)[0]}.js"
        return (f"if command -v tsc >/dev/null; then (cd {REPORT_DIR}/js && node --test --test-reporter=tap "
                f"{shlex.quote(compiled)}); else node --experimental-strip-types --test --test-reporter=tap "
                f"{shlex.quote('./' + path)}; fi")
