"""Judging the user's pass from each runner's report (no Docker): what counts as ran, passed, failed, skipped."""

from __future__ import annotations

import json

from bot.sandbox import node_names
from bot.sandbox.authority import FileResult, framed, judge, sections
from bot.sandbox.authority.go import GoTest, unrun
from bot.sandbox.authority.java import JavaTest
from bot.sandbox.authority.python import Pytest
from bot.sandbox.authority.rust import CargoTest
from bot.sandbox.authority.tap import BashTap, NodeTap

USER = ["test_calc.py"]
FILES = {"test_calc.py": "def test_a(): pass\n"}


def junit(*cases: str) -> str:
    return f'<?xml version="1.0"?><testsuites><testsuite name="pytest">{"".join(cases)}</testsuite></testsuites>'


def case(name: str, inner: str = "", file: str = "test_calc.py") -> str:
    return f'<testcase classname="x" name="{name}" file="{file}" line="1">{inner}</testcase>'


def python_verdict(report: str, files=FILES):
    return Pytest().verdict(USER, files, "", report, "t", "/work")


def test_python_counts_passes_and_failures_per_user_file():
    verdict = python_verdict(junit(case("a"), case("b"), case("c", '<failure message="boom">x</failure>')))
    assert (verdict.passed, verdict.failed, verdict.ok) == (2, 1, False)
    assert verdict.problems == ("test_calc.py: 1 of its tests failed",)


def test_python_skip_from_the_users_file_counts_but_one_from_the_code_does_not():
    own = '<skipped type="pytest.skip" message="later">/work/test_calc.py:3: later</skipped>'
    foreign = '<skipped type="pytest.skip" message="busy">/work/calc.py:7: busy</skipped>'
    assert python_verdict(junit(case("a"), case("b", own))).ok
    verdict = python_verdict(junit(case("a"), case("b", foreign)))
    assert not verdict.ok and "skipped from outside the file (/work/calc.py:7)" in verdict.problems[0]


def test_python_xfail_only_where_the_file_asks_for_it():
    xfail = '<skipped type="pytest.xfail" message="" />'
    assert not python_verdict(junit(case("a"), case("b", xfail))).ok
    assert python_verdict(junit(case("a"), case("b", xfail)), {"test_calc.py": "@pytest.mark.xfail\n"}).ok


def test_python_a_file_with_nothing_passed_or_no_readable_report_fails():
    assert python_verdict(junit(case("a", file="test_other.py"))).problems == (
        "test_calc.py: none of its tests ran and passed",)
    for report in ("", "<testsuites", '<!DOCTYPE x [<!ENTITY a "b">]><testsuites/>'):
        verdict = python_verdict(report)
        assert not verdict.ok and "no readable report" in verdict.problems[0]


def test_python_collection_errors_outside_any_file_fail():
    verdict = python_verdict(junit(case("a"), case("test_calc", '<error message="collection failure"/>', file="")))
    assert not verdict.ok and "collection failure" in verdict.problems[0]


def go_stream(*events: dict) -> str:
    """``go test -json``'s lines: every event names its package (the module ``go mod init sandbox`` makes)."""
    return "\n".join(json.dumps({"Package": "sandbox", **e}) for e in events) + "\n"


GO_FILES = {"calc_test.go": "package calc\n\nfunc TestAdd(t *testing.T) {}\nfunc TestSkip(t *testing.T) {}\n"}


RAN = {"Action": "output", "Output": "@@codegen-ran t 0\n"}  # the sandbox's TestMain, after m.Run()


def test_go_tests_are_found_by_name_and_skips_by_where_they_were_called():
    out = go_stream({"Action": "pass", "Test": "TestAdd"},
                    {"Action": "output", "Test": "TestSkip", "Output": "    calc_test.go:4: later\n"},
                    {"Action": "skip", "Test": "TestSkip"}, RAN)
    assert GoTest().verdict(["calc_test.go"], GO_FILES, out, "", "t", "/work").ok
    foreign = out.replace("calc_test.go:4", "calc.go:9")
    verdict = GoTest().verdict(["calc_test.go"], GO_FILES, foreign, "", "t", "/work")
    assert not verdict.ok and "calc.go" in verdict.problems[0]


def test_go_results_without_the_sandboxs_testmain_line_do_not_count():
    """Events Go 1.19's test2json made from "--- PASS" lines a TestMain or an init printed, then exited."""
    out = go_stream({"Action": "pass", "Test": "TestAdd"}, {"Action": "pass", "Test": "TestSkip"})
    verdict = GoTest().verdict(["calc_test.go"], GO_FILES, out, "", "t", "/work")
    assert not verdict.ok and "ended without its tests being run" in verdict.problems[0]
    forged = out + go_stream({"Action": "output", "Output": "@@codegen-ran guessed 0\n"})
    assert not GoTest().verdict(["calc_test.go"], GO_FILES, forged, "", "t", "/work").ok
    assert "ended without" in GoTest().team_problem(out, "", "t", GO_FILES)
    assert not GoTest().team_problem(out + go_stream(RAN), "", "t", GO_FILES)


def test_go_a_package_that_failed_without_a_test_failing_fails():
    out = go_stream({"Action": "pass", "Test": "TestAdd"}, {"Action": "fail", "Package": "calc"}, RAN)
    verdict = GoTest().verdict(["calc_test.go"], GO_FILES, out, "", "t", "/work")
    assert not verdict.ok and "go test failed for calc" in verdict.problems[0]
    assert GoTest().display(out + "plain line\n") == "plain line\n"



def test_go_a_test_function_of_the_file_that_never_reported_is_no_pass():
    """TestSkip's result never came (the code's init cut the run short of it, or go never ran it): TestAdd alone
    passing is not the file passing."""
    out = go_stream({"Action": "pass", "Test": "TestAdd"}, RAN)
    verdict = GoTest().verdict(["calc_test.go"], GO_FILES, out, "", "t", "/work")
    assert not verdict.ok and verdict.problems[0].startswith("calc_test.go: TestSkip never ran")
    other = out.replace('"Package": "sandbox", "Action": "pass"', '"Package": "sandbox/other", "Action": "pass"')
    assert not GoTest().verdict(["calc_test.go"], {**GO_FILES, "go.mod": "module sandbox\n"},
                                other + go_stream({"Action": "pass", "Test": "TestSkip"}), "", "t", "/work").ok

RUST_FILES = {"tests/calc_test.rs": "#[test]\nfn test_sub() {}\n#[test]\n#[ignore]\nfn test_slow() {}\n"}
PRINTED = "test test_sub ... ok\ntest result: ok. 2 passed; 0 failed\n"  # what the code can print


def test_rust_results_come_from_the_harness_log_not_the_output():
    verdict = CargoTest().verdict(["tests/calc_test.rs"], RUST_FILES, PRINTED, "failed test_sub\nignored test_slow\n",
                                  "t", "/work")
    assert (verdict.passed, verdict.failed) == (0, 1)
    assert not CargoTest().verdict(["tests/calc_test.rs"], RUST_FILES, PRINTED, "", "t", "/work").ok


def test_rust_a_test_the_file_declares_must_report():
    """The binary exited part way (``process::exit`` in the code): the tests after it never reported."""
    verdict = CargoTest().verdict(["tests/calc_test.rs"], RUST_FILES, PRINTED, "ignored test_slow\n", "t", "/work")
    assert not verdict.ok and "test_sub never reported" in verdict.problems[0]


def test_rust_library_tests_belong_to_their_module():
    files = {"src/calc.rs": "#[cfg(test)]\nmod tests {\n#[test]\nfn test_sub() {}\n}\n"}
    log = "ok other::tests::test_sub\n"  # another module's test of the same name
    assert not CargoTest().verdict(["src/calc.rs"], files, "", log, "t", "/work").ok
    assert CargoTest().verdict(["src/calc.rs"], files, "", "ok calc::tests::test_sub\n", "t", "/work").ok


def test_rust_ignored_only_where_the_file_marks_it():
    log = "ok test_sub\nignored test_slow\n"
    assert CargoTest().verdict(["tests/calc_test.rs"], RUST_FILES, "", log, "t", "/work").ok
    plain = {"tests/calc_test.rs": RUST_FILES["tests/calc_test.rs"].replace("#[ignore]\n", "")}
    assert not CargoTest().verdict(["tests/calc_test.rs"], plain, "", log, "t", "/work").ok


def test_rust_each_target_has_its_own_log():
    user = ["tests/a.rs", "tests/b/main.rs", "src/calc.rs"]
    assert CargoTest().report_paths(user) == ["/tmp/.judge/cargo-0.log", "/tmp/.judge/cargo-1.log",
                                              "/tmp/.judge/cargo-2.log"]
    command = CargoTest().command(user, {}, "/work", "t")
    assert "--lib -- --logfile /tmp/.judge/cargo-0.log" in command and "--test a -- --logfile" in command


def test_rust_refuses_only_team_written_switches():
    manifest = '[package]\nname = "c"\n\n[lib]\nharness = false\n'
    assert "harness = false under [lib]" in CargoTest().refusal({"Cargo.toml": manifest}, ["tests/a.rs"])
    assert CargoTest().refusal({"Cargo.toml": manifest}, ["Cargo.toml", "tests/a.rs"]) == ""  # the user's own
    assert CargoTest().refusal({"Cargo.toml": "not toml ["}, ["tests/a.rs"]) == ""  # cargo says what is wrong
    assert ".cargo/config" in CargoTest().refusal({".cargo/config": ""}, ["tests/a.rs"])


def test_java_lines_per_class_with_assumptions_and_ignores():
    files = {"CalcTest.java": "public class CalcTest {}", "pkg/OtherTest.java": "package pkg;\n@Ignore"}
    report = "CalcTest 3 0 1 0\npkg.OtherTest 2 0 0 1\n"
    verdict = JavaTest().verdict(["CalcTest.java", "pkg/OtherTest.java"], files, "", report, "t", "/work")
    assert verdict.passed == 4
    assert verdict.problems == ("CalcTest.java: a test was skipped from outside the file "
                                "(1 test(s) stopped by an assumption the file does not make)",)


def test_tap_sections_need_their_end_and_their_whole_plan():
    token, bash = "abc", BashTap()
    assert framed(0, "true", token).startswith('echo "@@codegen-authority abc begin 0"')
    assert sections("@@codegen-authority abc begin 0\nok 1\n", token) == {0: ("ok 1\n", None)}
    verdict = bash.verdict(["test_a.sh", "test_b.sh"], {}, "@@codegen-authority abc begin 0\nok 1 - a\n"
                           "@@codegen-authority abc end 0 0\n@@codegen-authority abc begin 1\nok 1\n1..3\n"
                           "@@codegen-authority abc end 1 0\n", "", token, "/work")
    assert verdict.problems == ("test_b.sh: 2 of its tests failed",)
    crashed = bash.verdict(["test_a.sh"], {}, "@@codegen-authority abc begin 0\nok 1\n"
                           "@@codegen-authority abc end 0 139\n", "", token, "/work")
    assert not crashed.ok
    forged = bash.verdict(["test_a.sh"], {}, "@@codegen-authority other end 0 0\n", "", token, "/work")
    assert forged.problems == ("test_a.sh: none of its tests ran and passed",)


def test_judge_counts_each_file_that_did_not_pass_as_a_failure():
    verdict = judge({"a": FileResult(passed=2), "b": FileResult(), "c": FileResult(failed=3)})
    assert (verdict.passed, verdict.failed, len(verdict.problems)) == (2, 4, 2)


def test_python_a_run_stopped_in_the_middle_of_a_test_fails():
    """pytest.exit(returncode=0) from the code under test: the test it stopped is written with no name."""
    verdict = python_verdict(junit(case("a"), '<testcase time="0.000" />'))
    assert not verdict.ok and "stopped in the middle of a test" in verdict.problems[0]


def test_node_a_user_file_that_exited_before_its_tests_reported_fails():
    """The code under test calls process.exit(0): node reports the file as a whole, with no test of its own."""
    token, node = "abc", NodeTap(typescript=False)
    stdout = ("@@codegen-authority abc begin 0\nTAP version 13\n# Subtest: /work/calc.test.js\n"
              "ok 1 - /work/calc.test.js\n1..1\n# tests 1\n# pass 1\n# fail 0\n@@codegen-authority abc end 0 0\n")
    verdict = node.verdict(["calc.test.js"], {}, stdout, "", token, "/work")
    assert not verdict.ok and verdict.passed == 0


def test_node_names_a_test_file_gives_plainly_are_asked_for_as_node_escapes_them():
    source = ("describe('calc #1', () => {\n  it(\"adds\", () => {});\n});\n// test('old one', () => {});\n"
              "/* test('older', () => {}); */\ntest(`sub`, { timeout: 100 }, () => {});\n"
              "for (const n of [1, 2]) test(`case ${n}`, () => {});\ntest('it\\'s', () => {});\n")
    assert node_names.declared(source) == {"calc #1", "adds", "sub"}
    output = "# Subtest: calc \\#1\n    # Subtest: adds\n    ok 1 - adds\nok 1 - calc \\#1\n# Subtest: case 1\n"
    assert node_names.unreported({"calc.test.js": source}, output) == [("calc.test.js", "sub")]
    assert node_names.declared("describe.skip('later', () => {\n  it('adds', () => {});\n});\n") == set()
    assert node_names.declared("test('digits', () => assert.ok(/^\\d+$/.test('42')));\n") == {"digits"}
    assert node_names.declared("test(`adds\ntwo`, () => {});\ntest('a\tb', () => {});\n") == set()


def test_go_a_replace_of_a_module_no_test_imports_is_not_refused():
    files = {"go.mod": "module calc\n\nreplace (\n\t// the code's own helper\n\tother.com/x => ./x\n)\n",
             "calc_test.go": "package calc\n\nimport (\n\t\"testing\"\n\n\t\"example.com/check\"\n)\n"}
    assert GoTest().refusal(files, ["calc_test.go"]) == ""
    assert "replaces other.com/x, which calc_test.go imports" in GoTest().refusal(
        {**files, "calc_test.go": files["calc_test.go"].replace("example.com/check", "other.com/x/sub")}, [])
    assert GoTest().refusal(files, ["calc_test.go", "go.mod"]) == ""  # the user's own go.mod is theirs
    own = {"go.mod": "module example.com/calc\n\nreplace example.com/calc/util => ./util\n",
           "calc_test.go": "package calc\n\nimport (\n\t\"testing\"\n\n\t\"example.com/calc/util\"\n)\n"}
    assert GoTest().refusal(own, ["calc_test.go"]) == ""  # a module of the project's own, in a folder of its own


def test_go_sources_kept_as_test_inputs_are_not_tests_that_never_ran():
    files = {"testdata/golden_test.go": "package golden\n\nfunc TestGolden(t *testing.T) {}\n",
             "_old/calc_test.go": GO_FILES["calc_test.go"], "calc_test.go": GO_FILES["calc_test.go"]}
    reported = go_stream({"Action": "pass", "Test": "TestAdd"}, {"Action": "pass", "Test": "TestSkip"})
    assert unrun(files, reported) == []
    assert unrun({**files, "sub/calc_test.go": GO_FILES["calc_test.go"]}, reported) == [
        ("sub/calc_test.go", "TestAdd"), ("sub/calc_test.go", "TestSkip")]


def test_go_tests_whose_results_the_cut_output_lost_are_not_taken_for_tests_that_never_ran():
    from agents.types import TestReport, TestStatus
    from bot.config.sections import LanguageConfig
    from bot.sandbox.reports import all_collected

    go = LanguageConfig(image="x", test_command="t", report_format="go")
    stdout = go_stream({"Action": "pass", "Test": "TestSkip"})  # TestAdd's result was in the part cut out
    passed = TestReport(status=TestStatus.PASSED, exit_code=0, passed=1, failed=0)
    assert all_collected(passed, GO_FILES, go, None, stdout).status is TestStatus.FAILED  # whole: it never ran
    cut = TestReport(status=TestStatus.PASSED, exit_code=0, passed=1, failed=0, truncated=True)
    assert all_collected(cut, GO_FILES, go, None, stdout).status is TestStatus.PASSED
