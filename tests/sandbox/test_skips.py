"""A team's tests pass only when every test it wrote ran: skipped, xfailed, async (skipped by pytest) or todo tests
beside a passing one are named and fail the run, on real Docker. The user's own tests and a repository's keep
their rules."""

from __future__ import annotations

import pytest

from agents.language import BUILT_IN
from agents.test_health import unrunnable_tests
from agents.types import FileSet, TestJob, TestStatus
from bot.repos.test_command import PYTEST
from tests.sandbox.programs import GO, JAVA, PYTHON, RUST

pytestmark = pytest.mark.docker

# The code is right for add and wrong for sub: a run that passes hid test_sub.
CALC = {"calc.py": "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a + b\n"}
TEST_ADD = "from calc import add, sub\n\ndef test_add():\n    assert add(2, 3) == 5\n\n"
PYTHON_NOT_RUN = {
    "async": (TEST_ADD + "async def test_sub():\n    assert sub(5, 3) == 2\n", "asyncio.run"),
    "skip-mark": ("import pytest\n" + TEST_ADD + "@pytest.mark.skip(reason='later')\ndef test_sub():\n"
                  "    assert sub(5, 3) == 2\n", "a skipped test proves nothing"),
    "skip-call": ("import pytest\n" + TEST_ADD + "def test_sub():\n    pytest.skip('later')\n    assert sub(5, 3) == 2\n",
                  "a skipped test proves nothing"),
    "xfail-mark": ("import pytest\n" + TEST_ADD + "@pytest.mark.xfail(reason='flaky')\ndef test_sub():\n"
                   "    assert sub(5, 3) == 2\n", "xfail proves nothing"),
}


@pytest.mark.parametrize("how", sorted(PYTHON_NOT_RUN))
async def test_a_python_team_test_that_did_not_run_fails_the_run_by_name(sandbox, how):
    test, advice = PYTHON_NOT_RUN[how]
    report = await sandbox.run(TestJob("python", FileSet({**CALC, "test_calc.py": test})))
    assert (report.status, report.passed, report.skipped) == (TestStatus.FAILED, 1, 1), report.output(10_000)
    assert report.summary() == "1 passed, 0 failed, 1 skipped"
    assert "one of the team's tests did not run: test_calc::test_sub" in report.stderr, report.output(10_000)
    assert advice in report.stderr
    # It goes back to the Tester with that sentence, not to the Programmer.
    said = unrunnable_tests(report, "python", ["test_calc.py"], BUILT_IN)
    assert said.startswith("one of the team's tests did not run: test_calc::test_sub"), said


async def test_a_skip_in_the_users_own_file_still_counts_as_theirs(sandbox):
    """The user's tests keep their rule: a skip their file raises is theirs to make; the team's tests all ran."""
    user = ("import pytest\nfrom calc import add, sub, mul\n\ndef test_add():\n    assert add(2, 3) == 5\n\n"
            "@pytest.mark.skip(reason='later')\ndef test_sub():\n    assert sub(5, 3) == 3\n")
    team = {"test_team.py": "from calc import mul\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"}
    files = FileSet({**PYTHON.files, "test_calc.py": user, **team})
    report = await sandbox.run(TestJob("python", files, authoritative=("test_calc.py",)))
    assert (report.status, report.passed) == (TestStatus.PASSED, 2), report.output(10_000)


async def test_a_repositorys_skipped_tests_do_not_fail_its_run(sandbox):
    """A repository's tests may skip as they always did: only the team's own tests must all run."""
    tests = {"tests/test_calc.py": "import pytest\n" + TEST_ADD.replace("add, sub", "add")
             + "@pytest.mark.skip(reason='needs a database')\ndef test_db():\n    assert False\n"}
    files = FileSet({**CALC, **tests})
    report = await sandbox.run(TestJob("python", files, command=PYTEST, report_format="pytest", team_files=("calc.py",)))
    assert (report.status, report.passed, report.skipped) == (TestStatus.PASSED, 1, 1), report.output(10_000)


GO_SKIPS = GO.files["calc_test.go"].replace("func TestSub(t *testing.T) { if",
                                           "func TestSub(t *testing.T) { t.Skip(\"later\"); if")
NODE_SKIPS = ("const test = require('node:test');\nconst assert = require('node:assert');\n"
              "const { add } = require('./calc');\ntest('adds', () => assert.strictEqual(add(2, 3), 5));\n"
              "test.skip('subtracts', () => {});\ntest.todo('multiplies');\n")


@pytest.mark.parametrize(("language", "files", "named"), [
    ("go", {**GO.files, "calc_test.go": GO_SKIPS}, "TestSub (a skipped test"),
    ("javascript", {"calc.js": "exports.add = (a, b) => a + b;\n", "calc.test.js": NODE_SKIPS},
     "subtracts (a skipped test proves nothing: remove the skip, or the test); multiplies (a test marked todo"),
    ("rust", {**RUST.files, "src/lib.rs": RUST.files["src/lib.rs"].replace(
        "    #[test]\n    fn test_sub", "    #[test]\n    #[ignore]\n    fn test_sub")}, "tests::test_sub (a skipped test"),
    ("java", {**JAVA.files, "CalcTest.java": JAVA.files["CalcTest.java"].replace(
        "    @Test public void testSub", "    @org.junit.Ignore @Test public void testSub").replace(
        "{ assertEquals(6,", "{ org.junit.Assume.assumeTrue(false); assertEquals(6,")},
     "testSub(CalcTest) (a skipped test proves nothing: remove the skip, or the test); testMul(CalcTest) (a test an "
     "assumption stopped"),
])
async def test_skipped_and_todo_team_tests_fail_in_other_languages(sandbox, language, files, named):
    report = await sandbox.run(TestJob(language, FileSet(files)))
    assert report.status is TestStatus.FAILED and report.passed, report.output(10_000)
    assert named in report.stderr, report.output(10_000)
