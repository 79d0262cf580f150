"""The user's tests against files the team wrote to subvert them, in every built-in language, on real Docker.

Each attack comes with buggy code: the run must fail, naming the user's failing test. The team's own
tests still run, with their own configuration.
"""

from __future__ import annotations

import dataclasses

import pytest

from agents.types import FileSet, TestJob, TestStatus
from bot.sandbox import DockerSandbox
from bot.sandbox.languages import DEFAULT_LANGUAGES
from tests.sandbox.conftest import configured
from tests.sandbox.programs import PROGRAMS, PYTHON

pytestmark = pytest.mark.docker

USER_TESTS = {"python": ("test_calc.py",), "javascript": ("calc.test.js",), "typescript": ("calc.test.ts",),
              "go": ("calc_test.go",), "java": ("CalcTest.java",), "c": ("calc_test.c",),
              "cpp": ("calc_test.cpp",), "bash": ("test_add.sh", "test_sub.sh", "test_mul.sh")}

FLIP_REPORTS = '''import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    outcome.get_result().outcome = "passed"
'''
SKIP_ALL = '''import pytest

def pytest_collection_modifyitems(items):
    for item in items:
        item.add_marker(pytest.mark.skip(reason="not today"))
'''
FAKE_PYTEST = "import sys\nprint('3 passed in 0.01s')\nsys.exit(0)\n"
K_NOT_SUB = 'addopts = -k "not sub"\n'


def plugin_package(module: str, body: str, entry_point: bool) -> dict[str, str]:
    """A local package the dependency setup installs into the tests' path (offline, no build isolation)."""
    entry = f'\n[project.entry-points.pytest11]\nflip = "{module}"\n' if entry_point else ""
    return {
        "requirements.txt": "./vendor/helper\n",
        "vendor/helper/pyproject.toml": '[build-system]\nrequires = ["setuptools"]\nbuild-backend = '
                                        f'"setuptools.build_meta"\n\n[project]\nname = "helper"\nversion = "1.0"\n'
                                        f'{entry}\n[tool.setuptools]\npy-modules = ["{module}"]\n',
        f"vendor/helper/{module}.py": body,
    }


PYTHON_ATTACKS = {
    "conftest-flips-failures": {"conftest.py": FLIP_REPORTS},
    "conftest-in-a-sub-folder": {"sub/conftest.py": FLIP_REPORTS, "sub/__init__.py": ""},
    "conftest-skips-everything": {"conftest.py": SKIP_ALL},
    "collect-ignore": {"conftest.py": "collect_ignore = ['test_calc.py']\n"},
    "pytest-ini-addopts": {"pytest.ini": "[pytest]\n" + K_NOT_SUB},
    "pyproject-addopts": {"pyproject.toml": "[tool.pytest.ini_options]\naddopts = \"-k 'not sub'\"\n"},
    "setup-cfg-addopts": {"setup.cfg": "[tool:pytest]\n" + K_NOT_SUB},
    "tox-ini-addopts": {"tox.ini": "[pytest]\n" + K_NOT_SUB},
    "ini-python-files": {"pytest.ini": "[pytest]\npython_files = nothing_*.py\n"},
    "shadow-pytest-module": {"pytest.py": FAKE_PYTEST},
    "shadow-pytest-package": {"_pytest/__init__.py": FAKE_PYTEST, "pytest/__init__.py": FAKE_PYTEST},
    "sitecustomize-in-deps": plugin_package("sitecustomize", "import os\nos._exit(0)\n", entry_point=False),
    "plugin-by-entry-point": plugin_package("flipper", FLIP_REPORTS, entry_point=True),
    "code-skips-the-test": {"calc.py": "import pytest\n\ndef add(a, b):\n    return a + b\n\n"
                                       "def sub(a, b):\n    pytest.skip('busy')\n\ndef mul(a, b):\n    return a * b\n"},
}


def job(language: str, files: FileSet) -> TestJob:
    return TestJob(language, files, authoritative=USER_TESTS[language])


@pytest.mark.parametrize("attack", sorted(PYTHON_ATTACKS))
async def test_python_team_files_cannot_pass_a_wrong_sub(docker_client, attack):
    files = PYTHON.buggy().merged(PYTHON_ATTACKS[attack])
    async with DockerSandbox(configured(setup_network=False), client=docker_client) as sandbox:
        report = await sandbox.run(job("python", files))
    assert report.status is TestStatus.FAILED, report.output(10_000)
    if "requirements.txt" in PYTHON_ATTACKS[attack]:  # a local package: the setup refuses to build it at all
        assert "requirements.txt: line 1: './vendor/helper' is not a package name" in report.stderr
    else:
        assert "the user's tests do not pass: test_calc.py" in report.stderr


async def test_the_same_files_pass_when_the_code_is_right(docker_client):
    """The defences do not break an honest run: the code is right, the team's extras are harmless."""
    files = PYTHON.correct().merged({**PYTHON_ATTACKS["pytest-ini-addopts"], **PYTHON_ATTACKS["tox-ini-addopts"],
                                     "helperlib.py": "VALUE = 4\n",  # vendored: the setup installs no local package
                                     "test_extra.py": "import helperlib\n\ndef test_dep():\n"
                                                      "    assert helperlib.VALUE == 4\n"})
    async with DockerSandbox(configured(setup_network=False), client=docker_client) as sandbox:
        report = await sandbox.run(job("python", files))
    assert (report.status, report.passed, report.failed) == (TestStatus.PASSED, 4, 0), report.output(10_000)


async def test_team_tests_run_with_their_own_conftest_and_count(sandbox):
    team = {"conftest.py": "import pytest\n\n@pytest.fixture\ndef two():\n    return 2\n",
            "test_team.py": "from calc import sub\n\ndef test_uses_fixture(two):\n    assert sub(two, two) == 0\n"}
    passed = await sandbox.run(job("python", PYTHON.correct().merged(team)))
    assert (passed.status, passed.passed, passed.failed) == (TestStatus.PASSED, 4, 0), passed.output(10_000)
    assert "== the team's tests ==" in passed.stdout
    failing = {**team, "test_team.py": "def test_wrong():\n    assert 1 == 2\n"}
    failed = await sandbox.run(job("python", PYTHON.correct().merged(failing)))
    assert (failed.status, failed.passed, failed.failed) == (TestStatus.FAILED, 3, 1), failed.output(10_000)


async def test_a_user_file_that_does_not_run_fails_the_run(sandbox):
    files = PYTHON.correct().merged({"test_extra.py": "import no_such_module\n\ndef test_x():\n    pass\n"})
    report = await sandbox.run(TestJob("python", files, authoritative=("test_calc.py", "test_extra.py")))
    assert report.status is TestStatus.FAILED
    assert "test_extra.py" in report.stderr


async def test_setup_leftovers_cannot_rewrite_the_users_tests(docker_client):
    """A setup that runs code (here a configured setup command; the built-in one builds nothing of the
    files) leaves a process behind that keeps rewriting the user's test file: it is stopped, and the
    file is not its to write. (A configured python is not built-in, so its tests run as configured.)"""
    setup_py = ("import os, time\nif os.fork() == 0:\n    os.setsid()\n    os.closerange(0, 256)\n"
                "    for _ in range(600):\n"
                "        for name in os.listdir('/work'):\n"
                "            if name.startswith('test_'):\n"
                "                try:\n"
                "                    open('/work/' + name, 'w').write('def test_ok():\\n    pass\\n')\n"
                "                except OSError:\n"
                "                    pass\n"
                "        time.sleep(0.05)\n    os._exit(0)\n")
    files = PYTHON.buggy().merged({"requirements.txt": "./vendor/helper\n", "vendor/helper/setup.py": setup_py})
    async with DockerSandbox(configured(setup_network=False), client=docker_client) as sandbox:
        refused = await sandbox.run(job("python", files))
    assert "is not a package name" in refused.stderr, refused.output(10_000)
    runs_it = dataclasses.replace(DEFAULT_LANGUAGES["python"], setup_command="python3 vendor/helper/setup.py")
    async with DockerSandbox(configured(setup_network=False, languages={"python": runs_it}),
                             client=docker_client) as sandbox:
        report = await sandbox.run(job("python", files))
    assert report.status is TestStatus.FAILED, report.output(10_000)
    assert "test_sub" in report.output(10_000)


GO_TEAM_MAIN = {"zz_test.go": "package calc\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\n"
                              "func TestMain(m *testing.M) { os.Exit(0) }\n"}
JAVA_FAKE_JUNIT = {"org/junit/runner/JUnitCore.java": "package org.junit.runner;\n\npublic class JUnitCore {\n"
                   "    public static void main(String[] args) { System.out.println(\"OK (3 tests)\"); }\n}\n"}
C_TEAM_MAIN = {"team_test.c": "#include <stdio.h>\nint main(void) { puts(\"ok 1 - all\"); puts(\"1..1\"); return 0; }\n"}
JS_TEAM = {"team.test.js": "const test = require('node:test');\ntest('team', () => {});\n"}
TS_TEAM = {"team.test.ts": "import { test } from 'node:test';\ntest('team', () => {});\n",
           "tsconfig.json": '{"compilerOptions": {"noEmit": true}}\n'}
BASH_TEAM = {"test_team.sh": "exit 0\n"}


@pytest.mark.parametrize(("language", "attack"), [
    ("go", GO_TEAM_MAIN), ("java", JAVA_FAKE_JUNIT), ("c", C_TEAM_MAIN),
    ("cpp", {"team_test.cpp": C_TEAM_MAIN["team_test.c"]}), ("javascript", JS_TEAM), ("typescript", TS_TEAM),
    ("bash", BASH_TEAM),
], ids=["go-team-TestMain", "java-fake-JUnitCore", "c-team-main", "cpp-team-main", "js-team-test",
        "ts-tsconfig-noEmit", "bash-team-test"])
async def test_other_languages_team_files_cannot_pass_a_wrong_sub(sandbox, language, attack):
    program = PROGRAMS[language]
    report = await sandbox.run(job(language, program.buggy().merged(attack)))
    assert report.status is TestStatus.FAILED, report.output(10_000)
    assert "the user's tests do not pass" in report.stderr
    assert program.failing_test in report.output(100_000)
    right = await sandbox.run(job(language, program.correct().merged(attack)))
    if attack is GO_TEAM_MAIN:  # the user's tests pass, but the team's file ran no test of its own
        assert (right.status, right.passed) == (TestStatus.FAILED, 3), right.output(10_000)
        assert "the team's tests were not run: zz_test.go declares TestMain" in right.stderr
    else:
        assert right.status is TestStatus.PASSED, right.output(10_000)



# The user's test checks with a module of assertions; the team's go.mod takes it from a copy whose checks never fail.
GO_CHECKED = {"calc_test.go": "package calc\n\nimport (\n\t\"testing\"\n\n\tcheck \"example.com/check\"\n)\n\n"
                              "func TestAdd(t *testing.T) { check.Equal(t, 5, Add(2, 3)) }\n",
              "calc.go": "package calc\n\nfunc Add(a, b int) int { return a - b }\n",
              "internal/check/go.mod": "module example.com/check\n\ngo 1.19\n",
              "internal/check/check.go": "package check\n\nimport \"testing\"\n\nfunc Equal(t *testing.T, want, got int) {}\n"}
GO_REPLACING = ["replace example.com/check => ./internal/check\n",
                "replace (\n\tother.com/x => ./x\n\texample.com/check v1.0.0 => ./internal/check\n)\n"]


@pytest.mark.parametrize("replace", GO_REPLACING, ids=["line", "block"])
@pytest.mark.parametrize("whose", ["user", "team"])
async def test_go_a_module_the_tests_import_cannot_be_replaced_by_the_team(sandbox, replace, whose):
    go_mod = "module calc\n\ngo 1.19\n\nrequire example.com/check v1.0.0\n\n" + replace
    files = FileSet({**GO_CHECKED, "go.mod": go_mod})
    report = await sandbox.run(TestJob("go", files, authoritative=("calc_test.go",) if whose == "user" else ()))
    assert report.status is TestStatus.FAILED, report.output(10_000)
    assert ("go.mod replaces example.com/check, which calc_test.go imports, with other code"
            in report.stderr), report.output(10_000)

async def test_c_user_file_without_main_is_not_run_with_the_teams(sandbox):
    """The user's file holds the checks; a main of the team's would print whatever it likes."""
    checks = "#include \"calc.h\"\nint check_sub(void) { return sub(5, 3) == 2; }\n"
    team_main = "#include <stdio.h>\nint main(void) { puts(\"ok 1 - sub\"); return 0; }\n"
    files = FileSet({**PROGRAMS["c"].buggy(), "calc_test.c": checks, "runner.c": team_main})
    report = await sandbox.run(TestJob("c", files, authoritative=("calc_test.c",)))
    assert report.status is TestStatus.FAILED
    assert "calc_test.c: defines no main()" in report.stderr


RUST_USER = {
    "Cargo.toml": "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    "src/lib.rs": "pub fn sub(a: i64, b: i64) -> i64 { a + b }\n",
    "tests/calc_test.rs": "use calc::sub;\n\n#[test]\nfn test_sub() { assert_eq!(sub(5, 3), 2); }\n",
}


@pytest.mark.parametrize(("changes", "said"), [
    ({"Cargo.toml": RUST_USER["Cargo.toml"] + "autotests = false\n"}, "autotests = false"),
    ({"Cargo.toml": RUST_USER["Cargo.toml"] + "\n[lib]\ntest = false\n"}, "test = false under [lib]"),
    ({"Cargo.toml": RUST_USER["Cargo.toml"] + "\n[[test]]\nname = \"calc_test\"\nharness = false\n"},
     "harness = false under [[test]] calc_test"),
    ({".cargo/config.toml": "[target.x86_64-unknown-linux-gnu]\nrunner = \"true\"\n"}, ".cargo/config.toml"),
    # The user's target name, built from a file of the team's whose empty tests carry the user's tests' names.
    ({"Cargo.toml": RUST_USER["Cargo.toml"] + "\n[[test]]\nname = \"calc_test\"\npath = \"bench/checks.rs\"\n",
      "bench/checks.rs": "#[test]\nfn test_sub() {}\n"}, "gives [[test]] calc_test the source bench/checks.rs"),
    ({"Cargo.toml": RUST_USER["Cargo.toml"] + "\n[features]\nnever = []\n\n[[test]]\nname = \"calc_test\"\n"
                                              "required-features = [\"never\"]\n"},
     "required-features under [[test]] calc_test"),
], ids=["autotests", "lib-test", "test-harness", "cargo-runner", "test-path", "test-required-features"])
async def test_rust_team_manifests_that_switch_tests_off_are_refused(sandbox, changes, said):
    report = await sandbox.run(TestJob("rust", FileSet({**RUST_USER, **changes}),
                                       authoritative=("tests/calc_test.rs",)))
    assert report.status is TestStatus.FAILED
    assert said in report.stderr and "[sandbox] the user's tests were not run" in report.stderr, report.output(10_000)


async def test_rust_user_integration_test_is_judged_by_name(sandbox):
    wrong = await sandbox.run(TestJob("rust", FileSet(RUST_USER), authoritative=("tests/calc_test.rs",)))
    assert wrong.status is TestStatus.FAILED and "tests/calc_test.rs: 1 of its tests failed" in wrong.stderr
    fixed = {**RUST_USER, "src/lib.rs": "pub fn sub(a: i64, b: i64) -> i64 { a - b }\n"}
    right = await sandbox.run(TestJob("rust", FileSet(fixed), authoritative=("tests/calc_test.rs",)))
    assert (right.status, right.passed) == (TestStatus.PASSED, 1), right.output(10_000)


async def test_without_user_tests_a_fake_junit_of_the_teams_is_not_used_either(sandbox):
    report = await sandbox.run(TestJob("java", PROGRAMS["java"].buggy().merged(JAVA_FAKE_JUNIT)))
    assert (report.status, report.failed) == (TestStatus.FAILED, 1), report.output(10_000)
