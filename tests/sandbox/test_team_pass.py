"""A run of the team's own tests passes only when tests were seen to run and pass, on real Docker.

Each case is buggy code with team-written tests that would have come back "passed" from an exit code of 0:
nothing collected, everything skipped, an exit at import, a fake summary line, a configuration that
skips or only collects, a hook that rewrites reports, a test that cannot fail. None may pass.
"""

from __future__ import annotations

import dataclasses

import pytest

from agents.types import FileSet, TestJob, TestStatus
from bot.repos.test_command import PYTEST
from bot.sandbox import DockerSandbox
from bot.sandbox.languages import DEFAULT_LANGUAGES
from tests.sandbox.conftest import configured
from tests.sandbox.programs import PROGRAMS, PYTHON
from tests.sandbox.test_authority import FLIP_REPORTS, USER_TESTS, plugin_package

pytestmark = pytest.mark.docker

WRONG_ADD = {"calc.py": "def add(a, b):\n    return a - b\n"}
TEST_ADD = "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n"
FAKE_SUMMARY = "import os\nprint('========== 5 passed in 0.01s ==========', flush=True)\nos._exit(0)\n"
WRITES_REPORT = ("import glob, os\nfor where in glob.glob('/tmp/.ju' + 'dge/*'):\n    try:\n"
                 "        with open(where, 'w') as report:\n            report.write('<testsuites><testsuite><testcase "
                 "classname=\"test_calc\" name=\"test_add\"/></testsuite></testsuites>')\n"
                 "    except OSError:\n        pass\nos._exit(0)\n")
# Imported in place of pytest, it writes the report pytest would have written for a passing test_add.
FAKE_PYTEST = ("import sys\n\ndef main(args):\n    where = [a for a in args if a.startswith('--jun')][0].split('=', 1)[1]\n"
               "    with open(where, 'w') as report:\n        report.write('<testsuites><testsuite><testcase "
               "classname=\"test_calc\" name=\"test_add\"/></testsuite></testsuites>')\n    return 0\n")

DISGUISED_FLIP = """import pytest

def _wrap(item, call):
    outcome = yield
    outcome.get_result().outcome = "passed"

globals()["pytest_runtest_" + "makereport"] = getattr(pytest, "hook" + "impl")(hookwrapper=True)(_wrap)
"""

PYTHON_FAKES = {
    "pytest-exit-0": {"test_calc.py": "import pytest\n\ndef test_first():\n    pass\n\ndef test_stop():\n"
                                      "    pytest.exit('done', returncode=0)\n\n" + TEST_ADD},
    "session-shouldstop": {"test_calc.py": "def test_first(request):\n    request.session.shouldstop = 'enough'\n\n"
                                           + TEST_ADD},
    "nothing-collected": {"test_calc.py": "from calc import add\n\ndef check_add():\n    assert add(2, 3) == 5\n"},
    "all-skipped": {"test_calc.py": "import pytest\npytestmark = pytest.mark.skip('later')\n" + TEST_ADD},
    "skip-at-import": {"test_calc.py": "import pytest\npytest.skip('later', allow_module_level=True)\n" + TEST_ADD},
    "all-xfail": {"test_calc.py": "import pytest\npytestmark = pytest.mark.xfail\n" + TEST_ADD},
    "conftest-sys-exit": {"conftest.py": "import sys\nsys.exit(0)\n", "test_calc.py": TEST_ADD},
    "os-exit-at-import": {"test_calc.py": "import os\nos._exit(0)\n" + TEST_ADD},
    "init-exits": {"__init__.py": "import os\nos._exit(0)\n", "test_calc.py": TEST_ADD},
    "fake-summary-line": {"test_calc.py": FAKE_SUMMARY + TEST_ADD},
    "ini-collect-only": {"pytest.ini": "[pytest]\naddopts = --co\n", "test_calc.py": TEST_ADD},
    "ini-no-junitxml": {"setup.cfg": "[tool:pytest]\naddopts = -p no:junitxml\n", "test_calc.py": TEST_ADD},
    "pyproject-deselects": {"pyproject.toml": "[tool.pytest.ini_options]\naddopts = \"-k 'not add'\"\n",
                            "test_calc.py": TEST_ADD + "\ndef test_nothing():\n    pass\n"},
    "tox-ignores": {"tox.ini": "[pytest]\naddopts = --ignore=test_calc.py\n",
                    "test_calc.py": TEST_ADD, "test_other.py": "def test_nothing():\n    pass\n"},
    "shadow-pytest": {"pytest.py": FAKE_SUMMARY, "test_calc.py": TEST_ADD},
    "shadow-pytest-writes-report": {"pytest.py": FAKE_PYTEST, "test_calc.py": TEST_ADD},
    "shadow-pytest-package-writes-report": {"pytest/__init__.py": FAKE_PYTEST, "test_calc.py": TEST_ADD},
    # Whatever the sandbox's reports folder holds, written to by path: the report pytest was about to write.
    "writes-into-the-report-channel": {"test_calc.py": WRITES_REPORT + TEST_ADD},
    "conftest-flips-reports": {"conftest.py": FLIP_REPORTS, "test_calc.py": TEST_ADD},
    "swallowed-assertion": {"test_calc.py": "from calc import add\n\ndef test_add():\n    try:\n"
                                            "        assert add(2, 3) == 5\n    except AssertionError:\n        pass\n"},
    "patched-unittest": {"test_calc.py": "import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\n"
                                         "from calc import add\n\nclass T(unittest.TestCase):\n"
                                         "    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"},
    # Spelled so that no name gives it away: only not loading installed plugins stops it.
    "plugin-by-entry-point": {**plugin_package("flipper", DISGUISED_FLIP, entry_point=True), "test_calc.py": TEST_ADD},
}
GO_CODE = {"calc.go": "package calc\n\nfunc Add(a, b int) int { return a - b }\n"}
GO_TEST = "\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n"
TAP_THEN_EXIT = ("#include <stdio.h>\n#include <unistd.h>\n__attribute__((constructor)) static void report(void) {\n"
                 "    printf(\"ok 1 - add\\nok 2 - sub\\n1..2\\n\");\n    fflush(stdout);\n    _exit(0);\n}\n")
JAVA_HOOK = ("    static { Runtime.getRuntime().addShutdownHook(new Thread(() -> {\n"
             "        System.out.println(\"\\nOK (3 tests)\"); Runtime.getRuntime().halt(0); })); }\n")
OTHER_FAKES = {
    "go-testmain-exits": ("go", {**GO_CODE, "calc_test.go": "package calc\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\n"
                                                            "func TestMain(m *testing.M) { os.Exit(0) }\n" + GO_TEST}),
    "js-file-without-tests": ("javascript", {"calc.js": "exports.add = (a, b) => a - b;\n",
                                             "calc.test.js": "const { add } = require('./calc');\nadd(2, 3);\n"}),
    "js-exits-before-tests": ("javascript", {"calc.js": "exports.add = (a, b) => a - b;\n",
                                             "calc.test.js": "console.log('# pass 5');\nprocess.exit(0);\n"
                                                             "require('node:test')('add', () => {});\n"}),
    "js-exits-in-a-test": ("javascript", {"calc.js": "exports.add = (a, b) => a - b;\n", "calc.test.js":
                           "const test = require('node:test');\nconst assert = require('node:assert');\n"
                           "const { add } = require('./calc');\ntest('first', () => {});\n"
                           "test('stop', () => { process.exit(0); });\n"
                           "test('add', () => { assert.strictEqual(add(2, 3), 5); });\n",
                           "other.test.js": "const test = require('node:test');\ntest('fine', () => {});\n"}),
    "c-main-checks-nothing": ("c", {"calc.c": "int add(int a, int b) { return a - b; }\n",
                                    "test_calc.c": "int main(void) { return 0; }\n"}),
    # The code prints the TAP lines of two passing tests from a constructor, then ends the process with 0.
    "c-constructor-prints-tap-and-exits": ("c", {**PROGRAMS["c"].buggy(), "calc_ctor.c": TAP_THEN_EXIT}),
    "cpp-constructor-prints-tap-and-exits": ("cpp", {**PROGRAMS["cpp"].buggy(), "calc_ctor.cpp": TAP_THEN_EXIT}),
    # Tests that say a check failed, then end with 0 all the same.
    "bash-prints-fail-and-exits-0": ("bash", {**PROGRAMS["bash"].buggy(), "test_sub.sh": ". ./calc.sh\n"
                                     "if [ \"$(sub 5 3)\" = 2 ]; then echo 'PASS: sub'; else echo 'FAIL: sub'; fi\n"}),
    "c-prints-fail-and-returns-0": ("c", {**PROGRAMS["c"].buggy(), "calc_test.c": PROGRAMS["c"].files["calc_test.c"]
                                    .replace('"%s %d - %s\\n", ok ? "ok" : "not ok"', '"%s %d - %s\\n", ok ? "ok" : "FAIL"')
                                    .replace("return bad;", "return 0;")}),
    # "OK" and "FAIL" are what the test printed, not TAP: no test was seen to pass.
    "c-prints-OK-or-FAIL": ("c", {**PROGRAMS["c"].buggy(), "calc_test.c": "#include <stdio.h>\n#include \"calc.h\"\n"
                            "int main(void) {\n    puts(add(2, 3) == 5 ? \"OK\" : \"FAIL\");\n"
                            "    puts(sub(5, 3) == 2 ? \"OK\" : \"FAIL\");\n    return 0;\n}\n"}),
    "js-prints-fail-and-asserts-nothing": ("javascript", {**PROGRAMS["javascript"].buggy(), "calc.test.js":
                                           "const test = require('node:test');\nconst { sub } = require('./calc');\n"
                                           "test('sub', () => { if (sub(5, 3) !== 2) console.log('FAIL: sub'); });\n"}),
    # The code prints JUnit's summary of two passing tests in the middle of the second, then ends the JVM with 0.
    "java-prints-junit-summary-and-exits": ("java", {**PROGRAMS["java"].files, "Calc.java": PROGRAMS["java"].files[
        "Calc.java"].replace("return a - b;", 'System.out.println("\\nOK (3 tests)"); System.exit(0); return 0;')}),
    # JUnit reported a failure and exits 1; the code's shutdown hook prints a passing summary and halts with 0.
    "java-shutdown-hook-rewrites-the-end": ("java", {"Calc.java": PROGRAMS["java"].buggy()["Calc.java"].replace(
        "public class Calc {\n", "public class Calc {\n" + JAVA_HOOK), "CalcTest.java": PROGRAMS["java"].files["CalcTest.java"]}),
}


@pytest.mark.parametrize("fake", sorted(PYTHON_FAKES))
async def test_python_team_tests_that_test_nothing_do_not_pass(docker_client, fake):
    files = FileSet({**WRONG_ADD, **PYTHON_FAKES[fake]})
    async with DockerSandbox(configured(setup_network=False), client=docker_client) as sandbox:
        report = await sandbox.run(TestJob("python", files))
    assert report.status is TestStatus.FAILED, report.output(10_000)


@pytest.mark.parametrize("fake", sorted(OTHER_FAKES))
async def test_other_languages_team_tests_that_test_nothing_do_not_pass(sandbox, fake):
    language, files = OTHER_FAKES[fake]
    report = await sandbox.run(TestJob(language, FileSet(files)))
    assert report.status is TestStatus.FAILED, report.output(10_000)
    assert report.failed or "[sandbox] not a pass" in report.stderr, report.output(10_000)


async def test_a_report_left_by_the_setup_is_not_read_as_the_tests(docker_client):
    """The dependency setup runs the team's code: a report it plants where pytest writes its own (and a
    process it leaves behind to keep planting it) is gone before the tests run, so a test run that ends
    early still has no report."""
    fake = ('<testsuites><testsuite><testcase classname="t" name="a"/>'
            '<testcase classname="t" name="b"/></testsuite></testsuites>')
    plant = ("import os, time\ndef plant():\n    try:\n        os.makedirs('/tmp/.judge', exist_ok=True)\n"
             f"        open('/tmp/.judge/' + 'junit' + '.xml', 'w').write({fake!r})\n"
             "    except OSError:\n        pass\n"
             "plant()\nif os.fork() == 0:\n    os.setsid()\n    os.closerange(0, 256)\n"
             "    for _ in range(600):\n        plant()\n        time.sleep(0.02)\n    os._exit(0)\n")
    files = FileSet({**WRONG_ADD, "requirements.txt": "", "vendor/helper/setup.py": plant,
                     "test_calc.py": "import os\nos._exit(0)\n" + TEST_ADD})
    # The built-in setup builds nothing of the files; a configured one may run them.
    runs_it = dataclasses.replace(DEFAULT_LANGUAGES["python"], setup_command="python3 vendor/helper/setup.py")
    async with DockerSandbox(configured(setup_network=False, languages={"python": runs_it}),
                             client=docker_client) as sandbox:
        report = await sandbox.run(TestJob("python", files))
    assert report.status is TestStatus.FAILED and not report.passed, report.output(10_000)
    assert "report of the tests is missing or incomplete" in report.stderr


async def test_honest_team_tests_still_pass_with_their_count(sandbox):
    for language in ("python", "javascript", "go", "c", "cpp", "java", "bash"):
        report = await sandbox.run(TestJob(language, PROGRAMS[language].correct()))
        assert (report.status, report.passed, report.failed) == (TestStatus.PASSED, 3, 0), report.output(10_000)
        assert "generated xml file" not in report.stdout


async def test_a_failing_team_test_is_counted_from_the_report(sandbox):
    report = await sandbox.run(TestJob("python", PYTHON.buggy()))
    assert (report.status, report.passed, report.failed) == (TestStatus.FAILED, 2, 1), report.output(10_000)
    assert "test_sub" in report.stdout


RUST_CODE = {"src/lib.rs": "pub fn add(a: i32, b: i32) -> i32 { a - b }\n",
             "tests/add.rs": "#[test]\nfn adds() { assert_eq!(calc::add(2, 3), 5); }\n"}
MANIFEST = '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n'
LIB_UNIT_TEST = "\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn builds() {}\n}\n"


@pytest.mark.parametrize(("extra", "said"), [
    ({".cargo/config.toml": '[target.x86_64-unknown-linux-gnu]\nrunner = "true"\n'}, ".cargo/config.toml"),
    ({"Cargo.toml": MANIFEST + "\n[lib]\nharness = false\n"}, "harness = false"),
    ({"Cargo.toml": MANIFEST + '\n[[test]]\nname = "add"\npath = "tests/add.rs"\ntest = false\n'}, "test = false"),
    ({"Cargo.toml": MANIFEST + '\n[features]\nnever = []\n\n[[test]]\nname = "add"\nrequired-features = ["never"]\n'},
     "required-features under [[test]] add"),
    ({"Cargo.toml": MANIFEST.replace("edition", "autotests = false\nedition")}, "autotests = false"),
], ids=["cargo-runner", "lib-harness", "test-off", "test-required-features", "autotests"])
async def test_rust_team_switches_that_fake_or_skip_the_tests_are_refused(sandbox, extra, said):
    """Each leaves tests/add.rs unbuilt (or its results unread), so the library's passing unit test alone would
    have passed the run."""
    files = FileSet({"Cargo.toml": MANIFEST, **RUST_CODE, "src/lib.rs": RUST_CODE["src/lib.rs"] + LIB_UNIT_TEST,
                     **extra})
    report = await sandbox.run(TestJob("rust", files))
    assert report.status is TestStatus.FAILED and said in report.stderr, report.output(10_000)
    assert "[sandbox] the tests were not run" in report.stderr


async def test_a_change_to_a_rust_repository_cannot_switch_its_tests_off(sandbox):
    manifest = MANIFEST + '\n[features]\noff = []\n\n[[test]]\nname = "add"\nrequired-features = ["off"]\n'
    files = FileSet({**RUST_CODE, "src/lib.rs": RUST_CODE["src/lib.rs"] + LIB_UNIT_TEST, "Cargo.toml": manifest})
    report = await sandbox.run(TestJob("rust", files, command="cargo test --offline", report_format="cargo",
                                       team_files=("Cargo.toml", "src/lib.rs")))
    assert report.status is TestStatus.FAILED, report.output(10_000)
    assert "[sandbox] the repository's tests were not run: Cargo.toml sets required-features" in report.stderr


# sub exits the test binary with 0 when called with 99: cargo moves on to the next binary (the doc test, which passes).
EXITING_LIB = ("/// ```\n/// assert_eq!(calc::add(2, 3), 5);\n/// ```\npub fn add(a: i64, b: i64) -> i64 { a + b }\n"
               "pub fn sub(a: i64, b: i64) -> i64 { if a == 99 { std::process::exit(0) } a + b }\n")
EXITING_TESTS = {"tests/calc.rs": "#[test]\nfn exits() { calc::sub(99, 1); }\n"
                                  "#[test]\nfn sub_wrong() { assert_eq!(calc::sub(5, 3), 2); }\n"}


@pytest.mark.parametrize("repository", [False, True], ids=["team-pass", "repository"])
async def test_a_rust_test_binary_that_exits_0_part_way_does_not_pass(sandbox, repository):
    files = FileSet({"Cargo.toml": MANIFEST, "src/lib.rs": EXITING_LIB, **EXITING_TESTS})
    job = TestJob("rust", files, command="cargo test --offline", report_format="cargo", team_files=("src/lib.rs",)) \
        if repository else TestJob("rust", files)
    report = await sandbox.run(job)
    assert report.status is TestStatus.FAILED, report.output(10_000)
    assert "not a pass: 1 test binary ended before reporting every test it started" in report.stderr


# Manifests the refusal lets through that still leave tests/add.rs out of plain `cargo test`.
UNBUILDING_MANIFESTS = {
    # The workspace's default member is another crate: the package at the top is not tested at all.
    "default-members": {"Cargo.toml": MANIFEST + '\n[workspace]\nmembers = ["inner"]\ndefault-members = ["inner"]\n',
                        "inner/Cargo.toml": MANIFEST.replace("calc", "inner"), "inner/src/lib.rs": LIB_UNIT_TEST},
    # Edition 2015 (no edition): a declared [[test]] turns the finding of the others off.
    "edition-2015": {"Cargo.toml": '[package]\nname = "calc"\nversion = "0.1.0"\n\n[[test]]\nname = "other"\n',
                     "tests/other.rs": "#[test]\nfn other() {}\n"},
}


@pytest.mark.parametrize("how", sorted(UNBUILDING_MANIFESTS))
async def test_a_rust_test_file_that_cargo_never_built_fails_the_run(sandbox, how):
    files = FileSet({**RUST_CODE, "src/lib.rs": RUST_CODE["src/lib.rs"] + LIB_UNIT_TEST, **UNBUILDING_MANIFESTS[how]})
    report = await sandbox.run(TestJob("rust", files))
    assert report.status is TestStatus.FAILED, report.output(10_000)
    assert "not a pass: tests/add.rs was never built and run by cargo test" in report.stderr


async def test_rust_unit_integration_and_doc_tests_that_all_report_still_pass(sandbox):
    """Three unit tests, two integration tests and a doc test: each binary sums up what it started."""
    doc = "/// ```\n/// assert_eq!(calc::add(2, 3), 5);\n/// ```\n"
    files = PROGRAMS["rust"].correct().merged({
        "src/lib.rs": doc + PROGRAMS["rust"].correct()["src/lib.rs"],
        "tests/calc.rs": "#[test]\nfn adds() { assert_eq!(calc::add(1, 1), 2); }\n"
                         "#[test]\nfn subtracts() { assert_eq!(calc::sub(5, 3), 2); }\n"})
    report = await sandbox.run(TestJob("rust", files))
    assert (report.status, report.passed) == (TestStatus.PASSED, 6), report.output(10_000)


async def test_a_rust_manifest_naming_its_targets_where_cargo_looks_still_runs_them(sandbox):
    manifest = MANIFEST + ('\n[lib]\nname = "calc"\npath = "src/lib.rs"\n\n[[bin]]\nname = "app"\npath = "src/main.rs"\n'
                           '\n[[test]]\nname = "add"\npath = "tests/add.rs"\n\n[[bench]]\nname = "speed"\nharness = false\n')
    files = FileSet({"Cargo.toml": manifest, "src/lib.rs": "pub fn add(a: i32, b: i32) -> i32 { a + b }\n",
                     "src/main.rs": "fn main() { println!(\"{}\", calc::add(1, 2)); }\n",
                     "tests/add.rs": RUST_CODE["tests/add.rs"], "benches/speed.rs": "fn main() {}\n"})
    report = await sandbox.run(TestJob("rust", files))
    assert (report.status, report.passed) == (TestStatus.PASSED, 1), report.output(10_000)


@pytest.mark.parametrize(("language", "good", "bad"), [
    ("python", "def sub(a, b):\n    return a - b\n",
     "def sub(a, b):\n    import pytest\n    pytest.exit('done', returncode=0)\n"),
    ("javascript", "exports.sub = (a, b) => a - b;", "exports.sub = (a, b) => process.exit(0);"),
])
async def test_code_that_ends_the_run_with_success_does_not_pass_the_users_tests(sandbox, language, good, bad):
    program = PROGRAMS[language]
    path = next(p for p, text in program.files.items() if good in text)
    files = FileSet({**program.files, path: program.files[path].replace(good, bad)})
    report = await sandbox.run(TestJob(language, files, authoritative=USER_TESTS[language]))
    assert report.status is TestStatus.FAILED, report.output(10_000)
    assert "the user's tests do not pass" in report.stderr, report.output(10_000)


# The code ends the process with success from a timer while the second test still awaits: node sums up only the test
# that finished ("1 passed"), and the wrong sub is never checked.
EXITS_WHILE_A_TEST_WAITS = {
    "calc.js": "exports.add = (a, b) => a + b;\nexports.sub = (a, b) => a + b;\nsetTimeout(() => process.exit(0), 30);\n",
    "calc.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\n"
                    "const { add, sub } = require('./calc');\n"
                    "test('test_add', () => assert.strictEqual(add(2, 3), 5));\n"
                    "test('test_sub', async () => {\n  await new Promise((done) => setTimeout(done, 500));\n"
                    "  assert.strictEqual(sub(5, 3), 2);\n});\n",
}


# The team writes the assertion library the tests require into node_modules, with checks that never fail.
PLANTED_CHAI = {
    "calc.js": "exports.add = (a, b) => a + b;\nexports.sub = (a, b) => a + b;\n",
    "calc.test.js": "const test = require('node:test');\nconst { expect } = require('chai');\n"
                    "const { add, sub } = require('./calc');\n"
                    "test('test_add', () => expect(add(2, 3)).to.equal(5));\n"
                    "test('test_sub', () => expect(sub(5, 3)).to.equal(2));\n",
    "node_modules/chai/index.js": "const ok = { to: { equal: () => {} } };\nexports.expect = () => ok;\n",
}

# Wrong code (sub adds) whose check never ran, or ran against a stand-in, and why the run says it is no pass.
NODE_UNCHECKED = {
    "exits-while-a-test-waits": (EXITS_WHILE_A_TEST_WAITS, "node never reported 'test_sub' (calc.test.js)"),
    "planted-package": (PLANTED_CHAI, "node_modules/chai/index.js: files written into node_modules are not allowed"),
}


@pytest.mark.parametrize("how", sorted(NODE_UNCHECKED))
@pytest.mark.parametrize("user", [False, True], ids=["team", "user"])
async def test_wrong_node_code_whose_check_never_ran_does_not_pass(sandbox, how, user):
    files, why = NODE_UNCHECKED[how]
    report = await sandbox.run(TestJob("javascript", FileSet(files), authoritative=("calc.test.js",) if user else ()))
    assert report.status is TestStatus.FAILED, report.output(10_000)
    assert why in report.stderr, report.output(10_000)


# Honest node tests that call a method named like node's test functions (a regular expression's test('...'))
# with a plain string: no test of that name exists, so none is asked to have reported.
HONEST_NODE = {
    "calc.js": "exports.isNumber = (text) => /^\\d+$/.test(text);\n",
    "calc.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\n"
                    "const { isNumber } = require('./calc');\n"
                    "test('reads digits', () => {\n  assert.ok(isNumber('42'));\n"
                    "  assert.ok(/^\\d+$/.test('42'));\n  assert.ok(!/^\\d+$/.test('4x'));\n});\n",
}


# Honest node tests whose names hold a line break or a tab (a template literal over two lines): node reports them
# escaped, as its version escapes them.
HONEST_NODE_NAMES = {
    "calc.js": "exports.add = (a, b) => a + b;\n",
    "calc.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\n"
                    "const { add } = require('./calc');\n"
                    "test(`adds\ntwo numbers`, () => assert.strictEqual(add(2, 3), 5));\n"
                    "test('adds\tonce more', () => assert.strictEqual(add(1, 1), 2));\n",
}


@pytest.mark.parametrize("user", [False, True], ids=["team", "user"])
@pytest.mark.parametrize(("files", "count"), [(HONEST_NODE, 1), (HONEST_NODE_NAMES, 2)], ids=["regex-test", "names"])
async def test_honest_node_tests_that_only_look_unreported_pass(sandbox, user, files, count):
    report = await sandbox.run(TestJob("javascript", FileSet(files), authoritative=("calc.test.js",) if user else ()))
    assert (report.status, report.passed, report.failed) == (TestStatus.PASSED, count, 0), report.output(10_000)


async def test_beside_the_users_tests_the_teams_hollow_tests_are_refused_by_name(sandbox):
    """The user's tests pass, but the team's swallow their own failure: the run is no pass, and says whose."""
    swallowing = {"test_team.py": "from calc import add\n\ndef test_add():\n    try:\n        assert add(2, 3) == 6\n"
                                  "    except AssertionError:\n        pass\n"}
    report = await sandbox.run(TestJob("python", PYTHON.correct().merged(swallowing),
                                       authoritative=USER_TESTS["python"]))
    assert (report.status, report.passed) == (TestStatus.FAILED, 3), report.output(10_000)
    assert "[sandbox] the team's tests were not run: test_team.py: test_add catches" in report.stderr



@pytest.mark.parametrize("team", [
    {"test_team.py": "from calc import add\n\n\ndef add_twice(a, b):\n    return add(add(a, b), b)\n"},  # no test
    {"test_team.py": ""},
])
async def test_beside_the_users_tests_a_team_test_file_that_runs_no_test_is_said_so(sandbox, team):
    """The user's tests pass and the team's file holds no test: no pass, and the sentence says what the counts,
    the user's alone, cannot ("3 passed, 0 failed", yet not a pass)."""
    report = await sandbox.run(TestJob("python", PYTHON.correct().merged(team), authoritative=USER_TESTS["python"]))
    assert (report.status, report.passed, report.failed) == (TestStatus.FAILED, 3, 0), report.output(10_000)
    assert "[sandbox] not a pass: none of the team's tests ran: \"no tests ran\"" in report.stderr, report.stderr

# A repository's own tests run by its own pytest command (bot.repos.test_command): the team's change is the
# code, and what it adds must not stand in for pytest or write the report pytest was about to write.
REPOSITORY_TEST = {"tests/test_calc.py": "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n",
                   "pyproject.toml": "[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n"}
REPOSITORY_FAKES = {
    "shadow-pytest-writes-report": {**WRONG_ADD, "pytest.py": FAKE_PYTEST},
    "shadow-pytest-package-writes-report": {**WRONG_ADD, "pytest/__init__.py": FAKE_PYTEST},
    "code-writes-into-the-report-channel": {"calc.py": WRITES_REPORT + WRONG_ADD["calc.py"]},
}


@pytest.mark.parametrize("fake", sorted(REPOSITORY_FAKES))
async def test_a_change_to_a_repository_cannot_pass_its_tests_by_writing_their_report(sandbox, fake):
    team = REPOSITORY_FAKES[fake]
    report = await sandbox.run(TestJob("python", FileSet({**REPOSITORY_TEST, **team}), command=PYTEST,
                                       report_format="pytest", team_files=tuple(team)))
    assert report.status is TestStatus.FAILED, report.output(10_000)


@pytest.mark.parametrize(("code", "status", "passed"), [
    ("def add(a, b):\n    return a + b\n", TestStatus.PASSED, 1), (WRONG_ADD["calc.py"], TestStatus.FAILED, 0)])
async def test_a_repositorys_tests_import_its_code_from_the_top_of_its_tree(sandbox, code, status, passed):
    report = await sandbox.run(TestJob("python", FileSet({**REPOSITORY_TEST, "calc.py": code}), command=PYTEST,
                                       report_format="pytest", team_files=("calc.py",)))
    assert (report.status, report.passed) == (status, passed), report.output(10_000)
