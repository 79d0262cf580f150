"""Tests the team wrote that cannot fail for what the code does: read from their source, sent back to the
Tester when they pass, and never a run's pass."""

from __future__ import annotations

import pytest

from agents.checkless import cannot_pass_tests, checkless_tests
from agents.events import Notice, RunFinished, TurnFinished
from agents.language import BUILT_IN
from agents.manager import Budget, Manager, Order, TeamSettings
from agents.run_request import RunRequest
from agents.types import Attachment, RunStatus, TestReport, TestStatus
from tests.fakes import team_script as s
from tests.fakes.publishers import RecordingPublisher
from tests.fakes.team_script import ScriptedModel, ScriptedSandbox

GOOD = "from main import add\n\ndef test_add():\n    assert add(2, 3) == 5\n"


@pytest.mark.parametrize(("files", "said"), [
    ({"test_main.py": "from main import add\n\ndef test_add():\n    return 42 + 50, 'no tests ran'\n"},
     "test_main.py: test_add neither checks nor calls anything"),
    ({"test_main.py": "def test_add():\n    pass\n"}, "test_add neither checks nor calls anything"),
    ({"test_main.py": "class TestAdd:\n    def test_it(self):\n        print('ok')\n        result = 3\n"},
     "test_it neither checks nor calls anything"),  # print and a constant: nothing that could fail
    ({"test_main.py": GOOD + "\n\ndef test_more():\n    'to do'\n"}, "test_more neither checks"),
    ({"tests/test_main.py": "async def test_add():\n    return None\n"}, "test_add neither checks"),
    ({"test_main.py": "from main import add\n\ndef test_add():\n    add(2, 3)\n",
      "tests/test_other.py": "from main import sub\n\ndef test_sub():\n    print(sub(3, 2))\n"},
     "no test checks a result"),  # every test calls the code, none looks at what it returned
])
def test_tests_that_cannot_fail_for_what_the_code_does_are_named(files, said):
    assert said in checkless_tests(files, BUILT_IN)



GO_CHECKING = "package calc\n\nimport \"testing\"\n\nfunc TestSub(t *testing.T) { if Sub(5, 3) != 2 { t.Errorf(\"sub\") } }\n"
JS_CHECKING = ("const test = require('node:test');\nconst assert = require('node:assert');\n"
               "const { sub } = require('./calc');\ntest('sub', () => assert.strictEqual(sub(5, 3), 2));\n")


@pytest.mark.parametrize(("files", "said"), [
    ({"calc_test.go": GO_CHECKING.replace('if Sub(5, 3) != 2 { t.Errorf(\"sub\") }', 't.Logf(\"%d\", Sub(5, 3))')},
     "calc_test.go: no test checks a result"),
    ({"calc.test.js": JS_CHECKING.replace("assert.strictEqual(sub(5, 3), 2)", "console.log(sub(5, 3))")},
     "calc.test.js: no test checks a result"),
    ({"calc.test.ts": "import { test } from 'node:test';\nimport * as assert from 'node:assert';\n"
                      "import { sub } from './calc';\ntest('sub', () => { sub(5, 3); });\n"}, "calc.test.ts: no test checks"),
    ({"CalcTest.java": "import org.junit.Test;\n\npublic class CalcTest {\n    @Test public void testSub() {\n"
                       "        System.out.println(Calc.sub(5, 3));\n    }\n}\n"}, "CalcTest.java: no test checks"),
    ({"tests/calc.rs": "#[test]\nfn sub() {\n    println!(\"{}\", calc::sub(5, 3));\n}\n"}, "tests/calc.rs: no test checks"),
])
def test_go_and_node_tests_none_of_which_checks_anything_are_named(files, said):
    assert said in checkless_tests(files, BUILT_IN)


@pytest.mark.parametrize("files", [
    {"calc_test.go": GO_CHECKING}, {"calc_test.go": GO_CHECKING.replace("t.Errorf", "t.Fatalf")},
    {"calc.test.js": JS_CHECKING},
    {"calc.test.mjs": "import test from 'node:test';\nimport { strictEqual } from 'node:assert';\n"
                      "import { sub } from './calc.js';\ntest('sub', () => strictEqual(sub(5, 3), 2));\n"},
    {"calc.test.js": "const test = require('node:test');\nconst { sub } = require('./calc');\n"
                     "test('sub', () => { if (sub(5, 3) !== 2) throw new Error('sub'); });\n"},
    {"CalcTest.java": "import org.junit.Test;\nimport static org.junit.Assert.assertEquals;\n\npublic class CalcTest {\n"
                      "    @Test public void testSub() { assertEquals(2, Calc.sub(5, 3)); }\n}\n"},
    {"CalcTest.java": "public class CalcTest {\n    public static void main(String[] args) {\n"
                      "        assert Calc.sub(5, 3) == 2 : \"sub\";\n    }\n}\n"},
    {"tests/calc.rs": "#[test]\nfn sub() {\n    assert_eq!(calc::sub(5, 3), 2);\n}\n"},
    {"tests/calc.rs": "#[test]\n#[should_panic]\nfn sub() {\n    calc::div(1, 0);\n}\n"},
    {"tests/calc.rs": "proptest! {\n    #[test]\n    fn sub(a: i64) {\n        prop_assert_eq!(calc::sub(a, 0), a);\n    }\n}\n"},
    {"calc_test.go": GO_CHECKING.replace('if Sub(5, 3) != 2 { t.Errorf(\"sub\") }', 'qt.New(t).Assert(Sub(5, 3), qt.Equals, 2)')},
    # a file that only logs beside one that checks: the set checks something
    {"calc.test.js": JS_CHECKING, "log.test.js": "const test = require('node:test');\ntest('log', () => {});\n"},
    # checks made by a helper of the tests, in a file of its own
    {"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestSub(t *testing.T) { eq(t, Sub(5, 3), 2) }\n",
     "helpers_test.go": "package calc\n\nimport \"testing\"\n\nfunc eq(t *testing.T, got, want int) {\n"
                        "    if got != want { t.Errorf(\"got %d, want %d\", got, want) }\n}\n"},
    {"calc.test.js": "const test = require('node:test');\nconst { eq } = require('./test/helpers');\n"
                     "const { sub } = require('./calc');\ntest('sub', () => eq(sub(5, 3), 2));\n",
     "test/helpers.js": "const assert = require('node:assert');\nexports.eq = (a, b) => assert.strictEqual(a, b);\n"},
    {"CalcTest.java": "import org.junit.Test;\n\npublic class CalcTest extends Checks {\n"
                      "    @Test public void testSub() { same(2, Calc.sub(5, 3)); }\n}\n",
     "Checks.java": "import static org.junit.Assert.assertEquals;\n\nclass Checks {\n"
                    "    void same(int want, int got) { assertEquals(want, got); }\n}\n"},
    {"calc_test.go": GO_CHECKING.replace('if Sub(5, 3) != 2 { t.Errorf(\"sub\") }', 'Expect(Sub(5, 3)).To(Equal(2))')},
    {"tests/calc.rs": "#[test]\nfn parses() -> Result<(), String> {\n    if calc::parse(\"1\")? != 1 {\n"
                      "        return Err(\"parse\".into());\n    }\n    Ok(())\n}\n"},
])
def test_go_and_node_tests_that_check_something_are_left_alone(files):
    assert checkless_tests(files, BUILT_IN) == ""

@pytest.mark.parametrize("files", [
    {"test_main.py": GOOD},
    {"test_main.py": "from main import add\n\ndef test_runs():\n    add(2, 3)\n\n" + GOOD.split("\n\n", 1)[1]},
    {"test_main.py": "import unittest\nfrom main import add\n\nclass T(unittest.TestCase):\n"
                     "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"},
    {"test_main.py": "from main import add\n\ndef check(a, b, want):\n    assert add(a, b) == want\n\n"
                     "def test_add():\n    check(2, 3, 5)\n"},  # a helper of the file that asserts
    {"test_main.py": "import pytest\nfrom main import div\n\ndef test_div():\n    with pytest.raises(ZeroDivisionError):\n"
                     "        div(1, 0)\n"},
    {"test_main.py": "def test_broken(:\n"},  # the runner says what is wrong with it
    {"main.py": "def test_mode():\n    pass\n"},  # not a test file
    {"main_test.go": "package main\n"},  # other languages: their runners' reports decide
])
def test_tests_that_check_a_result_are_left_alone(files):
    assert checkless_tests(files, BUILT_IN) == ""


# -- tests that never reach the code while they check ---------------------------------------------------------

CODE = {"main.py": "def add(a, b):\n    return a - b\n"}


@pytest.mark.parametrize("tests", [
    {"test_main.py": "def test_add():\n    assert True\n"},
    {"test_main.py": "def test_add():\n    assert 2 + 3 == 5\n"},
    # the function under test written again in the test file, and checked there
    {"test_main.py": "def add(a, b):\n    return a + b\n\ndef test_add():\n    assert add(2, 3) == 5\n"},
    # one test calls the code without checking it, the other checks nothing of the code
    {"test_main.py": "from main import add\n\ndef test_runs():\n    add(2, 3)\n\ndef test_sum():\n    assert 5 == 5\n"},
    {"test_main.py": "import pytest\n\n@pytest.mark.parametrize('a, b', [(1, 2)])\ndef test_add(a, b, tmp_path):\n"
                     "    assert a + b == 3\n"},  # parameters and pytest's own fixtures bring no code
])
def test_tests_that_never_reach_the_code_while_they_check_are_named(tests):
    said = checkless_tests(tests, BUILT_IN, [*CODE, *tests])
    assert "test_main.py: no test calls the code while it checks a result (none uses main)" in said


@pytest.mark.parametrize(("code", "tests"), [
    (CODE, {"test_main.py": GOOD}),
    ({"src/calc.py": "def add(a, b): ..."}, {"tests/test_calc.py": "from src.calc import add\n\ndef test_add():\n"
                                                                    "    assert add(2, 3) == 5\n"}),
    ({"src/calc.py": "def add(a, b): ..."}, {"tests/test_calc.py": "from calc import add\n\ndef test_add():\n"
                                                                    "    assert add(2, 3) == 5\n"}),
    ({"src/calc.py": "def add(a, b): ..."}, {"test_calc.py": "from src import calc\n\ndef test_add():\n"
                                                              "    assert calc.add(2, 3) == 5\n"}),
    ({"calc/__init__.py": "", "calc/ops.py": "def add(a, b): ..."},
     {"test_calc.py": "import calc.ops as ops\n\ndef test_add():\n    assert ops.add(2, 3) == 5\n"}),
    (CODE, {"test_main.py": "from main import *\n\ndef test_add():\n    assert add(2, 3) == 5\n"}),
    (CODE, {"test_main.py": "def test_add():\n    from main import add\n    assert add(2, 3) == 5\n"}),
    (CODE, {"test_main.py": "import unittest\nimport main\n\nclass T(unittest.TestCase):\n    def setUp(self):\n"
                            "        self.add = main.add\n\n    def test_add(self):\n"
                            "        self.assertEqual(self.add(2, 3), 5)\n"}),
    (CODE, {"test_main.py": "from main import add\n\nRESULT = add(2, 3)\n\ndef test_add():\n    assert RESULT == 5\n"}),
    (CODE, {"conftest.py": "import pytest\n\n@pytest.fixture\ndef adder():\n    from main import add\n    return add\n",
            "test_main.py": "def test_add(adder):\n    assert adder(2, 3) == 5\n"}),
    (CODE, {"test_main.py": "def test_add(calculator):\n    assert calculator(2, 3) == 5\n"}),  # a fixture of the user's
    ({"main.py": "print(2 + 3)\n"}, {"test_main.py": "import subprocess, sys\n\ndef test_prints():\n"
                                                        "    out = subprocess.run([sys.executable, 'main.py'],\n"
                                                        "                         capture_output=True)\n"
                                                        "    assert out.stdout == b'5\\n'\n"}),
    ({"main.js": "module.exports = 1;\n"}, {"test_main.py": "def test_add():\n    assert True\n"}),  # no Python code
])
def test_tests_that_reach_the_code_while_they_check_are_left_alone(code, tests):
    assert checkless_tests(tests, BUILT_IN, [*code, *tests]) == ""


def passing(job):  # type: ignore[no-untyped-def]
    """A runner for which every test passes, as a test that checks nothing does."""
    return TestReport(TestStatus.PASSED, 0, 0.1, 1, 0, "1 passed in 0.01s")


HOLLOW = "```python path=test_intf.py\nfrom intf import find_intf\n\ndef test_nested():\n    find_intf({})\n```\n"


# The function under test written again in the test file: checked there, it passes whatever intf.py does.
SELF_CONTAINED = ("```python path=test_intf.py\ndef find_intf(obj):\n    return [('intf', 1)]\n\n"
                  "def test_nested():\n    assert find_intf({'intf': 1}) == [('intf', 1)]\n```\n")


@pytest.mark.parametrize(("first", "said", "kept"), [(HOLLOW, "no test checks a result", "assert"),
                                                     (SELF_CONTAINED, "no test calls the code", "from intf import")])
@pytest.mark.parametrize("order", list(Order))
async def test_passing_tests_that_cannot_fail_go_back_to_the_tester_and_the_run_passes_on_real_ones(
        order, first, said, kept):
    script = {**s.happy_path(), "tester": [first, s.TESTS], "optimizer": [s.APPROVE, s.APPROVE]}
    manager = Manager(ScriptedModel(script), ScriptedSandbox(verdict=passing), RecordingPublisher(),
                      settings=TeamSettings(order=order))
    events = [e async for e in manager.run(RunRequest(task="find all intf keys", run_id="r1"))]
    final = events[-1]
    assert isinstance(final, RunFinished) and final.status is RunStatus.PASSED, final.reason
    assert [e.agent for e in events if isinstance(e, TurnFinished)].count("tester") == 2
    assert any("passed but cannot fail" in e.text and said in e.text for e in events if isinstance(e, Notice))
    assert kept in final.tests["test_intf.py"]


async def test_tests_that_never_could_fail_end_the_run_stopped_not_passed():
    script = {**s.happy_path(), "tester": [HOLLOW, HOLLOW], "optimizer": [s.APPROVE, s.APPROVE],
              "programmer": [s.CODE, s.CODE]}
    manager = Manager(ScriptedModel(script), ScriptedSandbox(verdict=passing), RecordingPublisher(),
                      settings=TeamSettings(budget=Budget(max_rounds=2)))
    events = [e async for e in manager.run(RunRequest(task="find all intf keys", run_id="r1"))]
    final = events[-1]
    assert final.status is RunStatus.STOPPED
    assert "the tests passed but cannot fail" in final.reason


# -- tests that cannot pass: an example's placeholders kept --------------------------------------------------

PLACEHOLDERS = ("```python path=test_intf.py\nfrom intf import find_intf\n\n\ndef test_find_intf():\n"
                "    assert find_intf(...) == ...\n```\n")


@pytest.mark.parametrize(("test", "named"), [
    ("def test_f():\n    assert f(...) == ...\n", "test_f"),
    ("def test_f():\n    assert f(1) == ...\n", "test_f"),
    ("def test_f():\n    assert f(...) == 2\n", "test_f"),
    ("class TestF:\n    def test_g(self):\n        assert sorted(f(...)) == [1]\n", "test_g"),
])
def test_a_test_that_keeps_an_examples_placeholders_cannot_pass(test, named):
    said = cannot_pass_tests({"test_main.py": "from main import f\n\n" + test}, BUILT_IN)
    assert said.startswith(f"test_main.py: {named} compares with or passes `...`")


@pytest.mark.parametrize("test", [
    "def test_f():\n    assert f(2) == 4\n",
    "def test_f():\n    assert f(grid)[...] == 1\n",  # an index, not a placeholder
    "def test_f():\n    x = ...\n    assert f(1) == 1\n",
    "def helper():\n    assert f(...) == ...\n",  # not a test pytest collects
])
def test_real_values_and_other_uses_of_dots_are_no_placeholders(test):
    assert cannot_pass_tests({"test_main.py": test}, BUILT_IN) == ""
    assert cannot_pass_tests({"main.py": "def test_f():\n    assert f(...) == ...\n"}, BUILT_IN) == ""  # no test file


def failing_while_placeholders(job):
    if "(...)" in job.files.get("test_intf.py", ""):
        return TestReport(TestStatus.FAILED, 1, 0.1, 0, 1,
                          "FAILED test_intf.py::test_find_intf - assert [] == Ellipsis\n1 failed in 0.01s")
    return ScriptedSandbox().verdict(job)


# A small model's test file that defines the function it tests (and gets the expected result wrong).
OWN_COPY = ("```python path=test_intf.py\ndef find_intf(obj):\n    return []\n\n\ndef test_find_intf():\n"
            "    assert find_intf({'intf': 1}) == [('intf', 2)]\n```\n")


def test_failing_tests_none_of_which_reaches_the_code_cannot_pass():
    tests = {"test_intf.py": "def find_intf(obj):\n    return []\n\n\ndef test_find_intf():\n"
                             "    assert find_intf({'intf': 1}) == [('intf', 2)]\n"}
    said = cannot_pass_tests(tests, BUILT_IN, ["intf.py"])
    assert said.startswith("test_intf.py: no test calls the code while it checks a result (none uses intf), so they "
                           "fail whatever the code does"), said
    assert cannot_pass_tests(tests, BUILT_IN) == ""  # no code to reach: nothing to say
    assert cannot_pass_tests({"test_intf.py": GOOD}, BUILT_IN, ["main.py"]) == ""


def failing_while_own_copy(job):
    if "def find_intf" in job.files.get("test_intf.py", ""):
        return TestReport(TestStatus.FAILED, 1, 0.1, 0, 1, "FAILED test_intf.py::test_find_intf - assert [] == [...]")
    return ScriptedSandbox().verdict(job)


async def test_failing_tests_that_test_their_own_copy_go_back_to_the_tester_not_the_code_to_the_programmer():
    script = {**s.happy_path(), "tester": [OWN_COPY, s.TESTS], "optimizer": [s.APPROVE, s.APPROVE]}
    script.pop("manager", None)  # a triage would send the code back: asking for one fails the run
    manager = Manager(ScriptedModel(script), ScriptedSandbox(verdict=failing_while_own_copy), RecordingPublisher())
    events = [e async for e in manager.run(RunRequest(task="find all intf keys", run_id="r1"))]
    final = events[-1]
    assert isinstance(final, RunFinished) and final.status is RunStatus.PASSED, final.reason
    turns = [e.agent for e in events if isinstance(e, TurnFinished)]
    assert turns.count("tester") == 2 and turns.count("programmer") == 1 and "manager" not in turns
    assert any("failed but cannot pass" in e.text and "none uses intf" in e.text for e in events
               if isinstance(e, Notice))


@pytest.mark.parametrize("order", list(Order))
async def test_failing_tests_that_cannot_pass_go_back_to_the_tester_not_the_code_to_the_programmer(order):
    # One Programmer reply and no triage scripted: asking either again would fail the run.
    script = {**s.happy_path(), "tester": [PLACEHOLDERS, s.TESTS], "optimizer": [s.APPROVE, s.APPROVE]}
    script.pop("manager", None)
    manager = Manager(ScriptedModel(script), ScriptedSandbox(verdict=failing_while_placeholders), RecordingPublisher(),
                      settings=TeamSettings(order=order))
    events = [e async for e in manager.run(RunRequest(task="find all intf keys", run_id="r1"))]
    final = events[-1]
    assert isinstance(final, RunFinished) and final.status is RunStatus.PASSED, final.reason
    turns = [e.agent for e in events if isinstance(e, TurnFinished)]
    assert turns.count("tester") == 2 and turns.count("programmer") == 1 and "manager" not in turns
    assert any("failed but cannot pass" in e.text and "test_find_intf compares with or passes `...`" in e.text
               for e in events if isinstance(e, Notice))


async def test_tests_that_never_could_pass_end_the_run_stopped_not_blaming_the_code():
    # The Tester keeps its placeholders to the last round: the failure is the tests', so the code has no verdict.
    script = {**s.happy_path(), "tester": [PLACEHOLDERS, PLACEHOLDERS], "optimizer": [s.APPROVE, s.APPROVE]}
    script.pop("manager", None)
    manager = Manager(ScriptedModel(script), ScriptedSandbox(verdict=failing_while_placeholders), RecordingPublisher(),
                      settings=TeamSettings(budget=Budget(max_rounds=2)))
    events = [e async for e in manager.run(RunRequest(task="find all intf keys", run_id="r1"))]
    final = events[-1]
    assert isinstance(final, RunFinished) and final.status is RunStatus.STOPPED, final.reason
    assert final.reason == ("the team used all 2 rounds; the tests failed but cannot pass (test_intf.py: "
                            "test_find_intf compares with or passes `...`, an example's placeholder, so it fails "
                            "whatever the code does; write real arguments and the result the task expects), so the "
                            "code was not judged")


async def two_rounds_with_a_users_test(script, verdict, check: str) -> RunFinished:
    """How a two-round run ends whose request brings a test of the user's asserting ``check``."""
    user_test = Attachment("test_user.py", f"from intf import find_intf\n\n\ndef test_user():\n    assert {check}\n")
    manager = Manager(ScriptedModel(script), ScriptedSandbox(verdict=verdict), RecordingPublisher(),
                      settings=TeamSettings(budget=Budget(max_rounds=2)))
    final = [e async for e in manager.run(RunRequest(task="find all intf keys", run_id="r1",
                                                     attachments=(user_test,)))][-1]
    assert isinstance(final, RunFinished)
    return final


async def test_code_that_fails_the_users_tests_to_the_last_round_ends_failed_whatever_the_teams_tests_hold():
    # The team's tests keep their placeholders, but the user's own test judged the code, and the code failed it.
    def verdict(job):
        if "found.extend(find_intf(value))" not in job.files["intf.py"]:  # the buggy code fails the user's test
            return TestReport(TestStatus.FAILED, 1, 0.1, 0, 1, "FAILED test_user.py::test_user - assert [...] == [...]")
        return failing_while_placeholders(job)

    script = {**s.happy_path(), "programmer": [s.BUGGY_CODE] * 2, "tester": [PLACEHOLDERS] * 2,
              "optimizer": [s.APPROVE] * 2}
    final = await two_rounds_with_a_users_test(script, verdict,
                                               "find_intf({'intf': {'intf': 1}}) == [('intf', {'intf': 1}), ('intf', 1)]")
    assert final.status is RunStatus.FAILED, final.reason
    assert "cannot pass" not in final.reason and "not judged" not in final.reason, final.reason


async def test_code_that_passes_the_users_tests_beside_team_tests_that_cannot_pass_ends_stopped_saying_so():
    # The user's own test judged the code and it passed; the team's tests kept their placeholders to the end.
    def verdict(job):  # the user's test alone passes; with the team's placeholders beside it, the run fails
        if "test_intf.py" not in job.files:
            return TestReport(TestStatus.PASSED, 0, 0.1, 1, 0, "1 passed in 0.01s")
        return failing_while_placeholders(job)

    script = {**s.happy_path(), "tester": [PLACEHOLDERS] * 2, "optimizer": [s.APPROVE] * 2,
              "programmer": [s.CODE] * 2}
    final = await two_rounds_with_a_users_test(script, verdict, "find_intf({'intf': 1}) == [('intf', 1)]")
    assert final.status is RunStatus.STOPPED, final.reason
    assert final.reason.endswith("write real arguments and the result the task expects); the task's own tests "
                                 "passed"), final.reason


async def test_team_tests_of_which_none_ran_to_the_last_round_end_stopped_with_the_users_passing():
    # The Tester's file holds no test, every round; the user's test passes: the counts, "1 passed, 0 failed", are
    # the user's alone, and the sandbox's sentence says the team's ran none.
    no_test = "```python path=test_intf.py\nfrom intf import find_intf\n\nEXAMPLE = {'intf': 1}\n```\n"

    def verdict(job):
        if "test_intf.py" not in job.files:
            return TestReport(TestStatus.PASSED, 0, 0.1, 1, 0, "1 passed in 0.01s")
        return TestReport(TestStatus.FAILED, 5, 0.1, 1, 0, "1 passed in 0.01s\n\nno tests ran in 0.01s",
                          "[sandbox] not a pass: none of the team's tests ran: \"no tests ran\"")

    script = {**s.happy_path(), "tester": [no_test] * 2, "optimizer": [s.APPROVE] * 2}
    script.pop("manager", None)  # the Tester is asked again, without a triage
    final = await two_rounds_with_a_users_test(script, verdict, "find_intf({'intf': 1}) == [('intf', 1)]")
    assert final.status is RunStatus.STOPPED, final.reason
    assert final.reason == ("the team used all 2 rounds; the tests of the version published (round 1) failed but "
                            "cannot pass (none of the team's tests ran: \"no tests ran\"); the task's own tests "
                            "passed"), final.reason
