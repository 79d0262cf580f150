"""A pass must be earned: wrong code cannot change the user's tests (at build or at run time), rewrite a
runner's report after it was written, or print results the sandbox reads as the runner's. Real Docker."""

from __future__ import annotations

import pytest

from agents.types import FileSet, TestJob, TestStatus
from bot.sandbox import DockerSandbox
from tests.sandbox.conftest import configured
from tests.sandbox.programs import PROGRAMS, PYTHON, RUST

pytestmark = pytest.mark.docker

RUST_USER = "#[test]\nfn test_add() { assert_eq!(calc::add(2, 3), 5); }\n" \
            "#[test]\nfn test_sub() { assert_eq!(calc::sub(5, 3), 2); }\n"
RUST_WRONG = RUST.buggy().merged({"tests/calc_test.rs": RUST_USER})
HARMLESS_RS = "#[test]\\nfn test_sub() {}\\n"
# Build scripts that put a test of their own in place of the user's, each its own way.
BUILD_RS = {
    "rewrite": f"fn main() {{ let _ = std::fs::write(\"tests/calc_test.rs\", \"{HARMLESS_RS}\"); }}\n",
    "replace": f"fn main() {{ let _ = std::fs::write(\"tests/new.txt\", \"{HARMLESS_RS}\"); "
               "let _ = std::fs::rename(\"tests/new.txt\", \"tests/calc_test.rs\"); }\n",
    "remove-and-add": f"fn main() {{ let _ = std::fs::remove_file(\"tests/calc_test.rs\"); "
                      f"let _ = std::fs::write(\"tests/calc_test.rs\", \"{HARMLESS_RS}\"); }}\n",
}


def rust_job(files: FileSet) -> TestJob:
    return TestJob("rust", files, authoritative=("tests/calc_test.rs",))


@pytest.mark.parametrize("how", sorted(BUILD_RS))
async def test_a_rust_build_script_cannot_rewrite_the_users_tests(sandbox, how):
    report = await sandbox.run(rust_job(RUST_WRONG.merged({"build.rs": BUILD_RS[how]})))
    assert report.status is TestStatus.FAILED, report.output(20_000)
    assert (report.passed, report.failed) == (1, 1), report.output(20_000)  # the user's own test_sub ran


# The team's own tests, the crate's library with none of its own: a build script (or the code at run time) that
# rewrote tests/calc_test.rs passed them.
RUST_TEAM_WRONG = FileSet({"Cargo.toml": RUST.files["Cargo.toml"], "tests/calc_test.rs": RUST_USER,
                           "src/lib.rs": "pub fn add(a: i64, b: i64) -> i64 { a + b }\n"
                                         "pub fn sub(a: i64, b: i64) -> i64 { a + b }\n"})


@pytest.mark.parametrize("how", sorted(BUILD_RS))
async def test_a_rust_build_script_cannot_rewrite_the_teams_tests(sandbox, how):
    report = await sandbox.run(TestJob("rust", RUST_TEAM_WRONG.merged({"build.rs": BUILD_RS[how]})))
    assert report.status is TestStatus.FAILED, report.output(20_000)
    assert (report.passed, report.failed) == (1, 1), report.output(20_000)  # the team's own test_sub ran


async def with_sub(sandbox, body: str):  # type: ignore[no-untyped-def]
    """The wrong Rust crate with ``sub``'s body replaced by ``body``, run in the sandbox."""
    lib = RUST_WRONG["src/lib.rs"].replace("pub fn sub(a: i64, b: i64) -> i64 { a + b }",
                                           f"pub fn sub(_a: i64, _b: i64) -> i64 {{ {body} }}")
    assert lib != RUST_WRONG["src/lib.rs"]
    return await sandbox.run(rust_job(RUST_WRONG.merged({"src/lib.rs": lib})))


async def test_rust_code_that_prints_results_and_exits_does_not_pass(sandbox):
    """``sub`` prints the line libtest would print for a pass, then ends the process with 0."""
    report = await with_sub(sandbox, "println!(\"test test_sub ... ok\\n\\ntest result: ok. 2 passed; "
                                     "0 failed\"); std::process::exit(0)")
    assert report.status is TestStatus.FAILED, report.output(20_000)
    assert "test_sub never reported a result" in report.stderr


async def test_rust_code_that_writes_the_harness_log_by_its_path_does_not_pass(sandbox):
    """``sub`` writes the log lines the harness would write for two passes into whatever the sandbox's report
    folder holds (the harness's open log among them), then ends the process with 0. (Before the harness's tests
    start the sandbox has taken the log's name away: the wait keeps this case off that moment.)"""
    report = await with_sub(sandbox, "std::thread::sleep(std::time::Duration::from_millis(300)); "
                                     "if let Ok(found) = std::fs::read_dir(\"/tmp/.judge\") { for entry in found.flatten() "
                                     "{ let _ = std::fs::write(entry.path(), \"ok test_add\\nok test_sub\\n\"); } } "
                                     "std::process::exit(0)")
    assert report.status is TestStatus.FAILED, report.output(20_000)
    assert "test_sub never reported a result" in report.stderr


async def test_the_right_rust_code_with_a_build_script_still_passes(sandbox):
    right = RUST.correct().merged({"tests/calc_test.rs": RUST_USER, "build.rs": "fn main() {}\n"})
    report = await sandbox.run(rust_job(right))
    assert report.status is TestStatus.PASSED, report.output(20_000)


GO_FAKE_MAIN = ("package calc\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"testing\"\n)\n\n"
                "func TestMain(m *testing.M) {\n\tfmt.Println(\"=== RUN   TestSub\\n--- PASS: TestSub (0.00s)\\nPASS\")\n"
                "\tos.Exit(0)\n}\n")
GO_FAKE_INIT = ("package calc\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\n"
                "func init() {\n\tfor _, t := range []string{\"TestAdd\", \"TestSub\", \"TestMul\"} {\n"
                "\t\tfmt.Printf(\"=== RUN   %s\\n--- PASS: %s (0.00s)\\n\", t, t)\n\t}\n"
                "\tfmt.Println(\"PASS\")\n\tos.Exit(0)\n}\n")


async def test_a_go_testmain_that_prints_passes_without_running_the_tests_fails(sandbox):
    files = PROGRAMS["go"].buggy().merged({"fake_test.go": GO_FAKE_MAIN})
    report = await sandbox.run(TestJob("go", files))  # the team's pass alone: `sandbox run DIR`
    assert report.status is TestStatus.FAILED, report.output(20_000)
    assert "fake_test.go declares TestMain" in report.stderr


@pytest.mark.parametrize("user", [(), ("calc_test.go",)], ids=["team-pass", "user-pass"])
async def test_go_code_that_prints_passes_from_init_and_exits_fails(sandbox, user):
    files = PROGRAMS["go"].buggy().merged({"fake.go": GO_FAKE_INIT})
    report = await sandbox.run(TestJob("go", files, authoritative=user))
    assert report.status is TestStatus.FAILED, report.output(20_000)
    assert "ended without its tests being run" in report.stderr


# A second package whose code ends its test binary with 0 before any test runs: go test says "ok" for it, with no
# test result at all.
GO_EXIT_IN_INIT = {
    "go.mod": "module sandbox\n\ngo 1.19\n",
    "calc/calc.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
    "calc/calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n"
                         "\t\tt.Fatal(\"wrong\")\n\t}\n}\n",
    "sub/sub.go": "package sub\n\nimport \"os\"\n\nfunc init() {\n\tos.Exit(0)\n}\n\nfunc Sub(a, b int) int { return a + b }\n",
    "sub/sub_test.go": "package sub\n\nimport \"testing\"\n\nfunc TestSub(t *testing.T) {\n\tif Sub(5, 3) != 2 {\n"
                       "\t\tt.Fatal(\"wrong\")\n\t}\n}\n",
}
GO_REPOSITORY = {"command": "go test -v ./...", "report_format": "go", "team_files": ("sub/sub.go",)}


@pytest.mark.parametrize("repository", [False, True], ids=["team-pass", "repository"])
async def test_a_go_package_whose_test_binary_exits_0_before_its_tests_fails(sandbox, repository):
    report = await sandbox.run(TestJob("go", FileSet(GO_EXIT_IN_INIT), **(GO_REPOSITORY if repository else {})))
    assert report.status is TestStatus.FAILED, report.output(20_000)
    assert "not a pass: the test binary of sandbox/sub ended without its tests being run" in report.stderr


async def test_a_go_repositorys_own_testmain_and_honest_packages_still_pass(sandbox):
    own_main = ("package calc\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\n"
                "func TestMain(m *testing.M) {\n\tos.Exit(m.Run())\n}\n")
    files = {**GO_EXIT_IN_INIT, "sub/sub.go": "package sub\n\nfunc Sub(a, b int) int { return a - b }\n",
             "calc/main_test.go": own_main}
    report = await sandbox.run(TestJob("go", FileSet(files), **GO_REPOSITORY))
    assert (report.status, report.passed) == (TestStatus.PASSED, 2), report.output(20_000)
    assert "@@codegen" not in report.stdout


async def test_go_passes_that_were_earned_still_count(sandbox):
    report = await sandbox.run(TestJob("go", PROGRAMS["go"].correct()))
    assert (report.status, report.passed) == (TestStatus.PASSED, 3), report.output(20_000)
    assert "--- PASS: TestAdd" in report.stdout and "@@codegen" not in report.stdout


PY_FIRST = "from calc import add\n\ndef test_add_first():\n    assert add(1, 1) == 2\n"
# Imported by the first user test file (test_a.py); rewrites the next one on disk before pytest imports it.
PY_REWRITES_TESTS = PYTHON.buggy()["calc.py"] + (
    "\nimport os\nfor _how in ('write', 'replace', 'remove'):\n"
    "    try:\n"
    "        if _how == 'write':\n"
    "            open('test_calc.py', 'w').write('def test_ok():\\n    pass\\n')\n"
    "        elif _how == 'replace':\n"
    "            open('x.py', 'w').write('def test_ok():\\n    pass\\n')\n"
    "            os.replace('x.py', 'test_calc.py')\n"
    "        else:\n"
    "            os.remove('test_calc.py')\n"
    "            open('test_calc.py', 'w').write('def test_ok():\\n    pass\\n')\n"
    "    except OSError:\n"
    "        pass\n")
PASSING_XML = ('<?xml version="1.0"?><testsuites><testsuite name="pytest" tests="3">'
               '<testcase classname="test_calc" name="test_add" file="test_calc.py"/>'
               '<testcase classname="test_calc" name="test_sub" file="test_calc.py"/>'
               '<testcase classname="test_calc" name="test_mul" file="test_calc.py"/>'
               '</testsuite></testsuites>')
# After the run: an atexit handler, and a process left behind, each write a report of passes wherever
# a report could be.
PY_REWRITES_REPORT = PYTHON.buggy()["calc.py"] + (
    "\nimport atexit, glob, os, time\n"
    f"XML = {PASSING_XML!r}\n"
    "def _forge():\n"
    "    for path in glob.glob('/tmp/**/*.xml', recursive=True) + glob.glob('/tmp/.*/*.xml') + glob.glob('/tmp/.judge/*')"
    " + ['/tmp/.judge/' + name for name in ('jun' + 'it.xml', 'user-report.xml')]:\n"
    "        try:\n"
    "            with open(path, 'w') as report:\n"
    "                report.write(XML)\n"
    "        except OSError:\n"
    "            pass\n"
    "def _forge_and_exit():\n"
    "    _forge()\n"
    "    os._exit(0)\n"
    "atexit.register(_forge_and_exit)\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    time.sleep(2)\n"
    "    _forge()\n"
    "    os._exit(0)\n")


async def test_python_code_cannot_rewrite_the_users_test_files_while_they_run(sandbox):
    files = PYTHON.buggy().merged({"calc.py": PY_REWRITES_TESTS, "test_a.py": PY_FIRST})
    report = await sandbox.run(TestJob("python", files, authoritative=("test_a.py", "test_calc.py")))
    assert report.status is TestStatus.FAILED, report.output(20_000)
    assert "test_sub" in report.output(100_000) and "test_ok" not in report.output(100_000)


@pytest.mark.parametrize("user", [(), ("test_calc.py",)], ids=["team-pass", "user-pass"])
async def test_python_code_cannot_rewrite_the_report_after_pytest_wrote_it(docker_client, user):
    files = PYTHON.buggy().merged({"calc.py": PY_REWRITES_REPORT})
    async with DockerSandbox(configured(timeout_s=30), client=docker_client) as sandbox:
        report = await sandbox.run(TestJob("python", files, authoritative=user))
    assert report.status is not TestStatus.PASSED, report.output(20_000)
    assert "test_sub" in report.output(100_000)


C_FORGES = PROGRAMS["c"].buggy()["calc.c"] + (
    "\n#include <stdio.h>\n#include <unistd.h>\n"
    "__attribute__((constructor)) static void forge(void) {\n"
    "    printf(\"ok 1 - test_add\\nok 2 - test_sub\\nok 3 - test_mul\\n1..3\\n\");\n"
    "    fflush(stdout);\n    _exit(0);\n}\n")


@pytest.mark.parametrize("language", ["c", "cpp"])
async def test_native_code_that_prints_tap_and_exits_before_main_fails(sandbox, language):
    program = PROGRAMS[language]
    source = "calc.c" if language == "c" else "calc.cpp"
    forging = C_FORGES.replace(PROGRAMS["c"].buggy()["calc.c"], program.buggy()[source])
    report = await sandbox.run(TestJob(language, program.buggy().merged({source: forging}),
                                       authoritative=(f"calc_test.{source.rsplit('.', 1)[1]}",)))
    assert report.status is TestStatus.FAILED, report.output(20_000)
    right = await sandbox.run(TestJob(language, program.correct(),
                                      authoritative=(f"calc_test.{source.rsplit('.', 1)[1]}",)))
    assert right.status is TestStatus.PASSED, right.output(20_000)


async def test_java_team_file_cannot_shadow_the_users_test_class(sandbox):
    program = PROGRAMS["java"]
    shadow = {"src/CalcTest.java": "public class CalcTest {\n    @org.junit.Test public void testAdd() {}\n}\n"}
    report = await sandbox.run(TestJob("java", program.buggy().merged(shadow), authoritative=("CalcTest.java",)))
    assert report.status is TestStatus.FAILED, report.output(20_000)
