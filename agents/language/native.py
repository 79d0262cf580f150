"""C and C++: every source but main.c/main.cpp compiled into one test binary, which prints TAP."""

from __future__ import annotations

import re

from agents.language.description import CodeNamer, Language, TestRun
from agents.language.sandbox_env import BASE_ENV, OFFLINE_PREFIX

_MARKER = re.compile(r"\bassert\s*\(|\"(?:not )?ok %d|printf\s*\(\s*\"(?:not )?ok\b|\b1\.\.%d")
_HOW = "a test_{ext} file whose main() runs the checks, prints 'ok N - name' lines and returns non-zero on failure"
# ``--wrap=main``: the C runtime starts the sandbox's ``main`` (a file it adds, bot.sandbox.authority.tap), which
# calls the tests' own and says when it returned, so TAP lines printed by code that then exits do not count.
_C_TEST = ("cc -std=c11 -Wall -O0 -Wl,--wrap=main -o /tmp/test_bin $(find . -name '*.c' ! -name main.c) -lm "
           "&& /tmp/test_bin")
_CPP_TEST = (
    "c++ -std=c++17 -Wall -O0 -Wl,--wrap=main -o /tmp/test_bin $(find . \\( -name '*.cpp' -o -name '*.cc' \\) "
    "! -name main.cpp ! -name main.cc) && /tmp/test_bin"
)


def _run(test_command: str) -> TestRun:
    return TestRun(image="gcc:14", offline_image=f"{OFFLINE_PREFIX}/gcc:bookworm",
                   offline_packages=("gcc", "g++", "libc6-dev"), env=dict(BASE_ENV), test_command=test_command,
                   report_format="tap")


def _compile_errors(extensions: str) -> re.Pattern[str]:
    """"./test_calc.c:3:39: error: ..." (not its warnings and notes)."""
    return re.compile(rf"^(?:\./)?(?P<path>[\w./-]+\.(?:{extensions})):\d+(?::\d+)?: (?!warning|note)", re.M)


def _namer(solution: str) -> CodeNamer:
    def name_code(code: str) -> str:
        """A file with no main() is a solution to test, not the program."""
        return "" if re.search(r"\bint\s+main\s*\(", code) else solution
    return name_code


C = Language(
    name="c", title="C", extensions=(".c", ".h"), test_files=("test_*.c",), usual_file="main.c",
    named_by=r"\bin c\b|\bc (?:function|program)", how_tests_are_found=_HOW.format(ext="*.c"),
    test_marker=_MARKER, name_code=_namer("solution.c"),
    error_at=(_compile_errors("c|h"),), run=_run(_C_TEST),
)

CPP = Language(
    name="cpp", title="C++", extensions=(".cpp", ".cc", ".hpp", ".cxx"), test_files=("test_*.cpp",), usual_file="main.cpp",
    aliases=("c++", "cxx", "cc"), named_by=r"c\+\+|\bcpp\b", how_tests_are_found=_HOW.format(ext="*.cpp"),
    test_marker=_MARKER, name_code=_namer("solution.cpp"),
    error_at=(_compile_errors("cc|cpp|hpp"),), run=_run(_CPP_TEST),
)
