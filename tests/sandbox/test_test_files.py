"""Every file the team names as a test runs, or the run is no pass, on real Docker: a test file the runner never ran
tested nothing. Each case is code that is wrong for sub, with the test of sub in a file named like a test that the
runner used to leave out."""

from __future__ import annotations

import pytest

from agents.language import BUILT_IN
from agents.test_health import unrunnable_tests
from agents.types import FileSet, TestJob, TestStatus

pytestmark = pytest.mark.docker

PY_CODE = {"calc.py": "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a + b\n"}
PY_ADD = "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n"
PY_SUB = "from calc import sub\n\ndef test_sub():\n    assert sub(5, 3) == 2\n"
JS_CODE = {"calc.js": "exports.add = (a, b) => a + b;\nexports.sub = (a, b) => a + b;\n",
           "calc.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\n"
                           "const { add } = require('./calc');\ntest('add', () => assert.strictEqual(add(2, 3), 5));\n"}
JS_SUB_ESM = ("import test from 'node:test';\nimport assert from 'node:assert';\nimport calc from './calc.js';\n"
              "test('sub', () => assert.strictEqual(calc.sub(5, 3), 2));\n")
JS_SUB = ("const test = require('node:test');\nconst assert = require('node:assert');\nconst { sub } = require('./calc');\n"
          "test('sub', () => assert.strictEqual(sub(5, 3), 2));\n")
GO_TESTED = {"go.mod": "module calc\n\ngo 1.19\n", "calc.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\n"
                                   "func Sub(a, b int) int { return a + b }\n",
             "add_test.go": "package calc\n\nimport \"testing\"\n\n"
                            "func TestAdd(t *testing.T) { if Add(2, 3) != 5 { t.Fatal(\"add\") } }\n"}
SUB_TEST = "package calc\n\nimport \"testing\"\n\nfunc TestSub(t *testing.T) { if Sub(5, 3) != 2 { t.Fatal(\"sub\") } }\n"
# Where go never builds the failing test: TestAdd alone, passing, would have passed the run.
GO_UNBUILT = {"build-constraint": {"sub_test.go": "//go:build integration\n\n" + SUB_TEST},
              "os-suffix": {"sub_windows_test.go": SUB_TEST},
              "lowercase-name": {"sub_test.go": SUB_TEST.replace("TestSub", "Testsub")}}
JAVA_TEST = ("import org.junit.Test;\nimport static org.junit.Assert.assertEquals;\n\npublic class {name} {{\n"
             "    @Test public void test{what}() {{ assertEquals({expected}, Calc.{call}); }}\n}}\n")
JAVA_CODE = {"Calc.java": "public class Calc {\n    static int add(int a, int b) { return a + b; }\n"
                          "    static int sub(int a, int b) { return a + b; }\n}\n",
             "CalcTest.java": JAVA_TEST.format(name="CalcTest", what="Add", expected=5, call="add(2, 3)")}


async def test_a_python_test_file_pytest_does_not_collect_fails_the_run_by_name(sandbox):
    report = await sandbox.run(TestJob("python", FileSet({**PY_CODE, "test_calc.py": PY_ADD, "calc_spec.py": PY_SUB})))
    assert (report.status, report.passed) == (TestStatus.FAILED, 1), report.output(10_000)
    assert "[sandbox] not a pass: pytest never ran the tests in calc_spec.py" in report.stderr, report.output(10_000)
    # The Tester renames it: the code is not blamed.
    said = unrunnable_tests(report, "python", ["test_calc.py", "calc_spec.py"], BUILT_IN)
    assert said.startswith("pytest never ran the tests in calc_spec.py"), said


async def test_python_helpers_beside_the_tests_are_not_test_files_pytest_missed(sandbox):
    """A tests/ package's __init__.py, conftest.py and helpers hold no test functions: nothing is missing."""
    files = {**PY_CODE, "tests/__init__.py": "", "tests/conftest.py": "import pytest\n\n@pytest.fixture\ndef two():\n"
             "    return 2\n", "tests/helpers.py": "def numbers():\n    return (2, 3)\n",
             "tests/test_calc.py": "from calc import add\nfrom tests.helpers import numbers\n\nclass TestAdd:\n"
                                   "    def test_add(self, two):\n        assert add(*numbers()) == 5 and two == 2\n"}
    report = await sandbox.run(TestJob("python", FileSet(files)))
    assert (report.status, report.passed) == (TestStatus.PASSED, 1), report.output(10_000)


@pytest.mark.parametrize(("language", "files"), [
    ("javascript", {**JS_CODE, "sub.test.mjs": JS_SUB_ESM}),
    ("javascript", {**JS_CODE, "sub.test.cjs": JS_SUB}),
    ("javascript", {**JS_CODE, "calc_spec.js": JS_SUB}),
    ("java", {**JAVA_CODE, "CalcSubTests.java": JAVA_TEST.format(name="CalcSubTests", what="Sub", expected=2,
                                                                  call="sub(5, 3)")}),
])
async def test_every_test_file_the_language_names_is_run(sandbox, language, files):
    assert all(BUILT_IN.looks_like_test(path) for path in files if "test" in path.lower() or "spec" in path)
    report = await sandbox.run(TestJob(language, FileSet(files)))
    assert (report.status, report.passed, report.failed) == (TestStatus.FAILED, 1, 1), report.output(10_000)


@pytest.mark.parametrize("how", sorted(GO_UNBUILT))
async def test_a_go_test_the_team_wrote_that_go_never_ran_fails_the_run(sandbox, how):
    report = await sandbox.run(TestJob("go", FileSet({**GO_TESTED, **GO_UNBUILT[how]})))
    assert report.status is TestStatus.FAILED, report.output(10_000)
    assert "[sandbox] not a pass: go test never ran Test" in report.stderr, report.output(10_000)
    # The Tester rewrites it: the code is not blamed.
    said = unrunnable_tests(report, "go", [*GO_UNBUILT[how], "add_test.go"], BUILT_IN)
    assert said.startswith("go test never ran Test"), said


@pytest.mark.parametrize("module", ["module calc\n\ngo 1.19\n", ""], ids=["go.mod", "no-go.mod"])
async def test_go_tests_in_every_package_that_all_report_still_pass(sandbox, module):
    files = {**GO_TESTED, "calc.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
             "sub/sub.go": "package sub\n\nfunc Sub(a, b int) int { return a - b }\n",
             "sub/sub_test.go": SUB_TEST.replace("package calc", "package sub"), "go.mod": module}
    report = await sandbox.run(TestJob("go", FileSet({path: text for path, text in files.items() if text})))
    assert (report.status, report.passed) == (TestStatus.PASSED, 2), report.output(10_000)


TS_CODE = {"calc.ts": "export function add(a: number, b: number): number { return a + b; }\n"
                      "export function sub(a: number, b: number): number { return a + b; }\n",
           "calc.test.ts": "import { test } from 'node:test';\nimport * as assert from 'node:assert';\n"
                           "import { add } from './calc';\ntest('add', () => assert.strictEqual(add(2, 3), 5));\n"}
TS_SUB = ("import { test } from 'node:test';\nimport * as assert from 'node:assert';\nimport { sub } from './calc';\n"
          "test('sub', () => assert.strictEqual(sub(5, 3), 2));\n")


@pytest.mark.parametrize(("language", "files", "left_out"), [
    ("typescript", {**TS_CODE, "sub.test.js": JS_SUB}, "sub.test.js"),
    ("javascript", {**JS_CODE, "sub.test.ts": TS_SUB}, "sub.test.ts"),
], ids=["js-test-in-typescript", "ts-test-in-javascript"])
async def test_a_test_file_of_the_other_node_language_fails_the_run_by_name(sandbox, language, files, left_out):
    report = await sandbox.run(TestJob(language, FileSet(files)))
    assert report.status is TestStatus.FAILED, report.output(10_000)
    assert f"[sandbox] not a pass: node --test never ran {left_out}" in report.stderr, report.output(10_000)
    said = unrunnable_tests(report, language, list(files), BUILT_IN)
    assert said.startswith(f"node --test never ran {left_out}"), said
