"""C, C++, Bash, JavaScript and TypeScript: each user test file run by itself, its TAP lines and exit code
read from its own framed section of the output.

- C and C++: one test binary per user file, from that file and the code (never ``main.c`` and never a
  test file of the team's); the user's own object file must define ``main``, so no ``main`` of the
  team's prints the ``ok`` lines in its place. That ``main`` is renamed and called by a ``main`` of the
  sandbox's, which prints a line after it returned: TAP lines printed by the code before it ends the
  process (from a constructor, ``exit`` or ``_exit`` in the code) count for nothing.
- Bash: each user file runs as its own ``bash`` process, named explicitly (no ``find``), and passes only when it
  reached its own end (``agents.language.bash.RUN_ONE``): an ``exit 0`` in a file it sources does not pass it.
- JavaScript and TypeScript: ``node --test`` on each user file alone (each in its own process), with no
  test file of the team's present; TypeScript is compiled with the files named on the command line, so
  no ``tsconfig.json`` applies.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Mapping, Sequence

from agents.language.bash import RUN_ONE
from bot.sandbox import node_names
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
        runs = "; ".join(framed(i, self.run_one(i, path, user, files, token), token) for i, path in enumerate(user))
        return f"rm -rf {REPORT_DIR} && mkdir -p {REPORT_DIR} || exit 2; {prepare}{runs}"

    def prepare(self, user: Sequence[str], files: Mapping[str, str]) -> str:
        return ""

    def run_one(self, index: int, path: str, user: Sequence[str], files: Mapping[str, str], token: str) -> str:
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


RAN_ENV = "CODEGEN_SANDBOX_RAN"
USER_MAIN = "codegen_user_main"
# The sandbox's main: the user's (renamed) runs, then one line only a main that returned prints. C++ may
# have either form of main (weak, so the one the file defines is the one called).
_C_MAIN = f"""#include <stdio.h>
#include <stdlib.h>
int {USER_MAIN}();
int main(int argc, char **argv) {{
    int code = {USER_MAIN}(argc, argv);
    const char *mark = getenv("{RAN_ENV}");
    fflush(stdout);
    printf("\\n@@codegen-ran %s %d\\n", mark ? mark : "", code);
    return code;
}}
"""
_CPP_MAIN = f"""#include <cstdio>
#include <cstdlib>
int {USER_MAIN}() __attribute__((weak));
int {USER_MAIN}(int, char **) __attribute__((weak));
int main(int argc, char **argv) {{
    int (*without)() = {USER_MAIN};
    int (*with)(int, char **) = {USER_MAIN};
    int code = with ? with(argc, argv) : without();
    const char *mark = std::getenv("{RAN_ENV}");
    std::fflush(stdout);
    std::printf("\\n@@codegen-ran %s %d\\n", mark ? mark : "", code);
    return code;
}}
"""


# The team's pass: their test binary is linked with ``--wrap=main`` (the language's command), so the C runtime
# starts this ``main`` of the sandbox's, which calls theirs and prints the line after it returned.
TEAM_MAIN = "zz_codegen_sandbox_main"
_WRAP_MAIN = f"""#include <stdio.h>
#include <stdlib.h>
{{extern_c}}int __real_main(int argc, char **argv);
{{extern_c}}int __wrap_main(int argc, char **argv) {{{{
    int code = __real_main(argc, argv);
    const char *mark = getenv("{RAN_ENV}");
    fflush(stdout);
    printf("\\n@@codegen-ran %s %d\\n", mark ? mark : "", code);
    return code;
}}}}
"""


class NativeTap(TapFiles):
    """C or C++: the user's file must hold ``main``; the binary is that file plus the code. In the team's pass
    the binary is linked so that the sandbox's ``main`` calls theirs (``TEAM_MAIN``): TAP lines count only
    when their ``main`` returned."""

    def __init__(self, compiler: str, extensions: tuple[str, ...], mains: tuple[str, ...]) -> None:
        self._compiler, self._extensions, self._mains = compiler, extensions, mains
        self._cpp = extensions[0] != ".c"

    def team_files(self, files: Mapping[str, str]) -> dict[str, str]:
        del files
        return {TEAM_MAIN + self._extensions[0]: _WRAP_MAIN.format(extern_c='extern "C" ' if self._cpp else "")}

    def team_env(self, token: str) -> dict[str, str]:
        return {RAN_ENV: token}

    def team_problem(self, stdout: str, stderr: str, token: str, files: Mapping[str, str]) -> str:
        del stderr, files
        if f"@@codegen-ran {token} " in stdout:
            return ""
        return ("the test binary ended before its main() returned (exit() or _exit() in the code or the tests, or "
                "a crash): the TAP lines it printed do not count; let main() return its result")

    def prepare(self, user: Sequence[str], files: Mapping[str, str]) -> str:
        source = f"{REPORT_DIR}/sandbox_main.{'cpp' if self._cpp else 'c'}"
        return (f"printf '%s' {shlex.quote(_CPP_MAIN if self._cpp else _C_MAIN)} > {source} && "
                f"{self._compiler} -w -c -o {REPORT_DIR}/sandbox_main.o {source} || exit 2; ")

    def run_one(self, index: int, path: str, user: Sequence[str], files: Mapping[str, str], token: str) -> str:
        code = [p for p in files if p.endswith(self._extensions) and p not in user
                and posixpath.basename(p) not in self._mains]
        obj, binary = f"{REPORT_DIR}/user{index}.o", f"{REPORT_DIR}/test{index}"
        sources = " ".join(shlex.quote("./" + p) for p in code)
        return (f"{{ {self._compiler} -Dmain={USER_MAIN} -c -o {obj} {shlex.quote('./' + path)} && "
                f"{{ nm {obj} | grep -q ' T .*{USER_MAIN}' || {{ echo {shlex.quote(path + ': defines no main()')} "
                f">&2; false; }}; }} && {self._compiler} -o {binary} {REPORT_DIR}/sandbox_main.o {obj} {sources} "
                f"-lm && {RAN_ENV}={token} {binary}; }}")

    def verdict(self, user: Sequence[str], files: Mapping[str, str], stdout: str, report: str,
                token: str, workdir: str) -> Verdict:
        found = sections(stdout, token)
        results = {}
        for index, path in enumerate(user):
            output, code = found.get(index, ("", None))
            result = _judged(output, code) if index in found else FileResult()
            if index in found and f"@@codegen-ran {token} " not in output:
                result.failed = max(result.failed, 1)  # the process ended before the user's main returned
            results[path] = result
        return judge(results)

    def display(self, stdout: str) -> str:
        return re.sub(r"^\n?@@codegen-ran .*\n?", "", stdout, flags=re.M)


class BashTap(TapFiles):
    """Each user file through ``RUN_ONE``: it passes when it reached its own end (or its own ``exit``) with 0, so a
    file it sources that calls ``exit 0`` does not pass it."""

    def run_one(self, index: int, path: str, user: Sequence[str], files: Mapping[str, str], token: str) -> str:
        shown, ran = shlex.quote(path), f"{REPORT_DIR}/ran{index}"
        return (f"{{ bash -c {shlex.quote(RUN_ONE)} {shlex.quote('./' + path)} {token} 3>{ran}; "
                f"if [ \"$(cat {ran})\" = \"{token} 0\" ]; then echo \"ok {index + 1} - \"{shown}; "
                f"else echo \"not ok {index + 1} - \"{shown}; false; fi; }}")


class NodeTap(TapFiles):
    """JavaScript, or TypeScript (compiled by tsc when the image has it, else node strips the types)."""

    def __init__(self, typescript: bool) -> None:
        self._typescript = typescript

    def refusal(self, files: Mapping[str, str], user: Sequence[str]) -> str:
        """A file the team wrote into ``node_modules/`` is a package the tests would ``require`` in place of the
        registry's (an assertion library whose checks never fail: ``expect(sub(5, 3)).to.equal(2)`` passing
        whatever sub gives), for anyone's tests."""
        mine = set(user)
        planted = sorted(path for path in files if "node_modules" in path.split("/")[:-1] and path not in mine)
        if not planted:
            return ""
        return (f"{planted[0]}: files written into node_modules are not allowed (a package there would stand in for "
                "the one the tests require); list the package in package.json, or write the code outside node_modules")

    def prepare(self, user: Sequence[str], files: Mapping[str, str]) -> str:
        if not self._typescript:
            return ""
        sources = " ".join(shlex.quote("./" + p) for p in files if p.endswith(".ts") and not p.endswith(".d.ts"))
        return (f"if command -v tsc >/dev/null; then tsc --outDir {REPORT_DIR}/js --rootDir . --module commonjs "
                f"--target es2020 --skipLibCheck {sources} | grep -v \"Cannot find module 'node:\" >&2; fi; ")

    def run_one(self, index: int, path: str, user: Sequence[str], files: Mapping[str, str], token: str) -> str:
        if not self._typescript:
            return f"node --test --test-reporter=tap {shlex.quote('./' + path)}"
        compiled = f"{REPORT_DIR}/js/{posixpath.splitext(path)[0]}.js"
        return (f"if command -v tsc >/dev/null; then (cd {REPORT_DIR}/js && node --test --test-reporter=tap "
                f"{shlex.quote(compiled)}); else node --experimental-strip-types --test --test-reporter=tap "
                f"{shlex.quote('./' + path)}; fi")

    def verdict(self, user: Sequence[str], files: Mapping[str, str], stdout: str, report: str,
                token: str, workdir: str) -> Verdict:
        """As every TAP file's, and each test a user file names must have reported in its section: node sums up
        only the tests that finished before the process ended (``node_names``)."""
        found = sections(stdout, token)
        results, extra = {}, []
        for index, path in enumerate(user):
            output, code = found.get(index, ("", None))
            results[path] = _judged(output, code) if index in found else FileResult()
            if index in found and (missing := node_names.unreported({path: files.get(path, "")}, output)):
                extra.append(f"{path}: {node_names.sentence(missing)}")
        return judge(results, extra)
