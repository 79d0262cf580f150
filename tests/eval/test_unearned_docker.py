"""An eval's score is earned: wrong code that brings a build step or a fake report of its own is scored
unsolved, in each language whose toolchain can run the team's code before the hidden tests. Real Docker."""

from __future__ import annotations

import dataclasses

import pytest

from agents.types import FileSet
from bot.eval.attempts import score
from bot.eval.problems import Problem
from bot.sandbox import DockerSandbox
from tests.docker_support import TEST_CONFIG
from tests.sandbox.programs import PROGRAMS, RUST

pytestmark = pytest.mark.docker

RUST_HIDDEN = {"tests/calc_test.rs": "#[test]\nfn test_sub() { assert_eq!(calc::sub(5, 3), 2); }\n"}
# The reported case: wrong code, and a build script that rewrites the hidden test before cargo builds it.
REWRITING_BUILD_RS = ('fn main() { let _ = std::fs::write("tests/calc_test.rs", '
                      '"#[test]\\nfn test_sub() {}\\n"); }\n')
GO_HIDDEN = {"calc_test.go": PROGRAMS["go"].files["calc_test.go"]}
GO_FAKE_INIT = ("package calc\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc init() {\n"
                "\tfmt.Println(\"=== RUN   TestSub\\n--- PASS: TestSub (0.00s)\\nPASS\")\n\tos.Exit(0)\n}\n")
PY_HIDDEN = {"test_calc.py": PROGRAMS["python"].files["test_calc.py"]}
PY_ATEXIT = PROGRAMS["python"].buggy()["calc.py"] + (
    "\nimport atexit, glob, os\n"
    "def _forge():\n"
    "    for path in glob.glob('/tmp/**/*.xml', recursive=True) + glob.glob('/tmp/.*/*'):\n"
    "        try:\n"
    "            open(path, 'w').write('<testsuites><testsuite><testcase name=\"test_sub\" file=\"test_calc.py\"/>'\n"
    "                                  '</testsuite></testsuites>')\n"
    "        except OSError:\n"
    "            pass\n"
    "    os._exit(0)\n"
    "atexit.register(_forge)\n")

CASES = {
    "rust-build-script": (Problem("calc-rs", "rust", "sub", FileSet(RUST_HIDDEN)),
                          RUST.buggy().merged({"build.rs": REWRITING_BUILD_RS})),
    "go-init-prints-passes": (Problem("calc-go", "go", "sub", FileSet(GO_HIDDEN)),
                              PROGRAMS["go"].buggy().without(FileSet(GO_HIDDEN)).merged({"fake.go": GO_FAKE_INIT})),
    "python-atexit-report": (Problem("calc-py", "python", "sub", FileSet(PY_HIDDEN)),
                             FileSet({"calc.py": PY_ATEXIT})),
}


@pytest.mark.parametrize("case", sorted(CASES))
async def test_wrong_code_with_a_way_round_the_hidden_tests_is_not_solved(docker_client, case):
    problem, files = CASES[case]
    async with DockerSandbox(TEST_CONFIG, client=docker_client) as sandbox:
        result = await score(problem, files, sandbox)
    assert not result.passed, result.output
    fixed = {"rust-build-script": RUST.correct().merged({"build.rs": REWRITING_BUILD_RS}),
             "go-init-prints-passes": PROGRAMS["go"].correct().without(FileSet(GO_HIDDEN)),
             "python-atexit-report": FileSet({"calc.py": PROGRAMS["python"].files["calc.py"]})}[case]
    async with DockerSandbox(TEST_CONFIG, client=docker_client) as sandbox:
        right = await score(problem, fixed, sandbox)
    assert right.passed, right.output


async def test_a_hidden_test_that_times_out_is_one_timeout_not_counted_failures(docker_client):
    """The limit killed the run before pytest wrote its report: there are no counts to give, so none are made up
    (it read "timeout: 0 passed, 2 failed" for one test), and the reason given is the time limit."""
    problem = Problem("spin", "python", "f", FileSet({"test_spin.py": "from spin import f\n\ndef test_f():\n"
                                                                      "    assert f() == 1\n"}))
    config = dataclasses.replace(TEST_CONFIG, timeout_s=3.0)
    async with DockerSandbox(config, client=docker_client) as sandbox:
        result = await score(problem, FileSet({"spin.py": "def f():\n    while True:\n        pass\n"}), sandbox)
    assert not result.passed
    assert result.summary.startswith("tests timed out after ")
    assert "time limit" in result.output and "no readable report" not in result.output
