"""A Bash test passes only when it reached its own end (or its own ``exit``) with 0, on real Docker: a script it
sources that runs its main and exits 0 ends the test before its checks, which is no pass, for the user's tests and
the team's alike."""

from __future__ import annotations

import pytest

from agents.types import FileSet, TestJob, TestStatus

pytestmark = pytest.mark.docker

# sub is wrong; the script's main runs (and exits 0) even when a test sources it.
EXITS = ("add() { echo $(( $1 + $2 )); }\nsub() { echo $(( $1 + $2 )); }\n\nmain() {\n"
         "  case \"$1\" in add) add \"$2\" \"$3\";; sub) sub \"$2\" \"$3\";; esac\n  exit 0\n}\n\nmain \"$@\"\n")
GUARDED = EXITS.replace("sub() { echo $(( $1 + $2 )); }", "sub() { echo $(( $1 - $2 )); }").replace(
    'main "$@"', 'if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then main "$@"; fi')
TESTS = {"test_add.sh": "set -e\n. ./calc.sh\n[ \"$(add 2 3)\" = 5 ]\n",
         "test_sub.sh": "set -e\n. ./calc.sh\n[ \"$(sub 5 3)\" = 2 ]\n",
         # Its own exit is its result; the program run as a child exits as it likes.
         "test_main.sh": ". ./calc.sh\n[ \"$(bash ./calc.sh add 2 3)\" = 5 ] || exit 1\nexit 0\n"}


@pytest.mark.parametrize("whose", ["user", "team"])
async def test_a_sourced_script_that_exits_0_passes_no_test(sandbox, whose):
    user = tuple(TESTS) if whose == "user" else ()
    report = await sandbox.run(TestJob("bash", FileSet({"calc.sh": EXITS, **TESTS}), authoritative=user))
    assert report.status is TestStatus.FAILED and not report.passed, report.output(10_000)
    assert "[sandbox] ./calc.sh called exit 0 while ./test_add.sh ran" in report.stderr, report.output(10_000)


@pytest.mark.parametrize("whose", ["user", "team"])
async def test_tests_that_reach_their_end_or_exit_by_themselves_still_pass(sandbox, whose):
    user = tuple(TESTS) if whose == "user" else ()
    report = await sandbox.run(TestJob("bash", FileSet({"calc.sh": GUARDED, **TESTS}), authoritative=user))
    assert (report.status, report.passed, report.failed) == (TestStatus.PASSED, 3, 0), report.output(10_000)


# Checks one per line, without set -e: only the last line's status would end the test. sub is wrong in WRONG_SUB.
CHECKS = {"test_calc.sh": ". ./calc.sh\n[ \"$(add 2 3)\" = 5 ]\n[ \"$(sub 5 3)\" = 2 ]\n[[ \"$(add 1 1)\" == 2 ]]\n"}
WRONG_SUB = "add() { echo $(( $1 + $2 )); }\nsub() { echo $(( $1 + $2 )); }\nis_even() { [ $(( $1 % 2 )) -eq 0 ]; }\n"
# A false check inside a condition, a function expected to fail with its status checked on the next line, and a
# script's own [ ... ] && ... lines are no failed check.
ERROR_PATHS = {"test_even.sh": ". ./calc.sh\nis_even 3\n[ $? -eq 1 ]\nif [ \"$(add 1 1)\" != 2 ]; then exit 1; fi\n"
                               "[ -n \"$DEBUG\" ] && echo debugging\n[ \"$(add 2 2)\" = 4 ] || exit 1\nexit 0\n"}


@pytest.mark.parametrize("whose", ["user", "team"])
async def test_a_false_check_the_test_went_past_passes_no_test(sandbox, whose):
    user = tuple(CHECKS) if whose == "user" else ()
    report = await sandbox.run(TestJob("bash", FileSet({"calc.sh": WRONG_SUB, **CHECKS}), authoritative=user))
    assert report.status is TestStatus.FAILED and not report.passed, report.output(10_000)
    assert "./test_calc.sh: the check on line 3: [ \"$(sub 5 3)\" = 2 ] was false" in report.stderr, \
        report.output(10_000)
    right = WRONG_SUB.replace("sub() { echo $(( $1 + $2 )); }", "sub() { echo $(( $1 - $2 )); }")
    user = (*user, *ERROR_PATHS) if user else ()
    report = await sandbox.run(TestJob("bash", FileSet({"calc.sh": right, **CHECKS, **ERROR_PATHS}), authoritative=user))
    assert (report.status, report.passed) == (TestStatus.PASSED, 2), report.output(10_000)
