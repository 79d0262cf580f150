"""From what the container printed to the ``TestReport`` a run returns: one pass, or the user's pass
(judged by its ``Authority``) followed by the team's."""

from __future__ import annotations

import dataclasses
import fnmatch
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from agents.language import BUILT_IN
from agents.language.node import JAVASCRIPT, TYPESCRIPT
from agents.language.reports import NOTHING_RAN
from agents.types import TestReport, TestStatus
from bot.config.sections import LanguageConfig, SandboxConfig
from bot.sandbox import junit, node_names, skips
from bot.sandbox.authority import Authority, Verdict, go
from bot.sandbox.junit import without_note
from bot.sandbox.results import Counts, parse, status_of

KILLED = 137


@dataclass(frozen=True)
class StepResult:
    exit_code: int | None
    timed_out: bool
    duration_s: float
    stdout: str
    stderr: str
    truncated: bool
    ended: str = ""  # how the engine itself ended the step, when it says (a Pod's OOMKilled, its deadline)


def single(step: StepResult, language: LanguageConfig, config: SandboxConfig,
           written: str | None = None) -> TestReport:
    """The report of a run with one pass: the language's configured test command. ``written`` is the
    structured report its runner wrote, for a language that keeps one (``report_file``)."""
    counts, unproven = _counts(step, language, written)
    status = TestStatus.TIMEOUT if step.timed_out else status_of(step.exit_code, counts)
    stderr = step.stderr + note(step, config)
    if status is TestStatus.PASSED and language.report_format != "exit-code" and not counts.passed:
        # An exit code of 0 alone is no pass: something must be seen to have run and passed.
        status, counts = TestStatus.FAILED, Counts(0, counts.failed or 0)
        stderr += f"\n[sandbox] not a pass: {unproven or NOTHING_PASSED}"
    stdout = without_note(step.stdout) if language.report_file else step.stdout
    skipped = len(skips.not_run(language.report_format, step.stdout, written))
    return TestReport(status=status, exit_code=step.exit_code, duration_s=round(step.duration_s, 3),
                      passed=counts.passed, failed=counts.failed, stdout=stdout, stderr=stderr,
                      truncated=step.truncated, ran=_ran(written), skipped=skipped or None)


def all_ran(report: TestReport, language: LanguageConfig, stdout: str, written: str | None) -> TestReport:
    """A run of the team's own tests, no pass while a test they wrote did not run (skipped, xfail, todo): such a
    test checked nothing, and "1 passed, 0 failed" would hide it. Each one is named, with what to write instead.
    The counts stay the runner's; the sentence says why the run failed."""
    if report.status not in (TestStatus.PASSED, TestStatus.FAILED):
        return report
    missed = skips.not_run(language.report_format, stdout, written)
    if not missed:
        return report
    return dataclasses.replace(report, status=TestStatus.FAILED,
                               stderr=report.stderr + f"\n[sandbox] not a pass: {skips.sentence(missed)}")


# A check a test said failed, at the start of a line of what the tests printed to stdout: "FAIL: sub gave 8",
# "[FAILED] sub", "Test failed", "test sub failed" (node shows what a test prints as "# FAIL: ..."). Not a count of
# none ("FAILED: 0", "FAILED: none", "Test cases failed: 0"), not a bare "FAIL" (a grader's own answer, printed), not
# the code's own messages ("Failed to open ..."), which a passing test of an error path may print, and nothing on
# stderr, where the code under test writes its own complaints ("FAILED: host down" from a checker being tested).
_SAID_FAILED = re.compile(r"^\W{0,3}(?:FAIL(?:ED|URE)?(?![\s:=]*0\b)(?:[:!\]]|[ \t]+-?[ \t]*\w)"
                          r"|(?i:test(?:\s+\S+)?\s+failed\b)).*$", re.M)
_COUNT_OF_NONE = re.compile(r"[:=]\s*(?:0|none|no|zero)\W*$", re.I)


def none_said_failed(report: TestReport, language: LanguageConfig, stdout: str, stderr: str) -> TestReport:
    """A pass of the team's own tests counted from printed lines (TAP: a shell script, a C main, a node test), no
    pass while a test printed that a check failed: it printed its verdict but still ended with success, so it would
    pass whatever the code did."""
    if report.status is not TestStatus.PASSED or language.report_format != "tap":
        return report
    found = next((m for m in _SAID_FAILED.finditer(stdout) if not _COUNT_OF_NONE.search(m.group(0))), None)
    if found is None:
        return report
    why = (f"a test printed {found.group(0).strip()[:200]!r} but the tests ended with success: a failing check must "
           "make its test fail (exit 1 from a script, a non-zero return from main(), an assert in a node test)")
    return dataclasses.replace(report, status=TestStatus.FAILED, stderr=report.stderr + f"\n[sandbox] not a pass: {why}")


def all_collected(report: TestReport, files: Mapping[str, str], language: LanguageConfig, written: str | None,
                  stdout: str) -> TestReport:
    """A pass of the team's own tests (``files``: every file of the pass but the user's), no pass while a test they
    wrote never ran: pytest collects only some of the names a Python test file may have, and go builds a
    ``_test.go`` file only when no build constraint, file name or folder leaves it out; node sums up only the tests
    that reported before a test file's process ended."""
    if report.status is not TestStatus.PASSED:
        return report
    if language.report_format == "pytest" and written:
        tests = {path: text for path, text in files.items() if BUILT_IN.looks_like_test(path)}
        missing = junit.unreported(tests, written)
        why = (f"pytest never ran the tests in {', '.join(missing)}: it collects test_* functions from files named "
               "test_*.py or *_test.py; rename the file")
    elif language.report_format == "go":
        # Output cut in the middle lost some tests' results, not the tests: what ran cannot be told from it.
        unrun = [] if report.truncated else go.unrun(files, stdout)
        missing = [f"{name} ({path})" for path, name in unrun]
        why = f"go test never ran {', '.join(missing[:5])}{go.UNRUN_HINT}"
    elif node_patterns := set(language.test_files) & NODE_TEST_FILES:
        # A JavaScript test file in a TypeScript run (or the other way round): node --test is given only the files
        # of the run's language.
        missing = [path for path in sorted(files) if _named(path, NODE_TEST_FILES) and not _named(path, node_patterns)]
        why = (f"node --test never ran {', '.join(missing[:5])}: this run tests only files named "
               f"{', '.join(sorted(node_patterns))}; write the tests in the run's language")
        if not missing and not report.truncated:  # (output cut in the middle lost results, not tests)
            tests = {path: text for path, text in files.items() if _named(path, node_patterns)}
            unreported = node_names.unreported(tests, stdout)
            missing, why = [name for _, name in unreported], node_names.sentence(unreported)
    else:
        return report
    if not missing:
        return report
    return dataclasses.replace(report, status=TestStatus.FAILED, stderr=report.stderr + f"\n[sandbox] not a pass: {why}")


NODE_TEST_FILES = frozenset((*JAVASCRIPT.test_files, *TYPESCRIPT.test_files))


def _named(path: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(posixpath.basename(path), pattern) for pattern in patterns)


def _ran(written: str | None) -> tuple[str, ...]:
    """The tests the runner's structured report lists (none without one, or when it cannot be read)."""
    if not written:
        return ()
    try:
        return junit.names(written)
    except ValueError:
        return ()


NOTHING_PASSED = "the test command exited 0, but its runner showed no test that ran and passed"


def _counts(step: StepResult, language: LanguageConfig, written: str | None) -> tuple[Counts, str]:
    """The counts, from the runner's structured report when the language keeps one (then what it printed
    is not read: a test can print a fake summary line), and why they prove no pass when they cannot."""
    if written is None:
        return parse(language.report_format, step.stdout, step.stderr), ""
    if step.timed_out:  # stopped before the runner could write its report: no counts to give
        return Counts(), ""
    try:
        return junit.counts(written), ""
    except ValueError as error:
        printed = parse(language.report_format, step.stdout, step.stderr)
        return Counts(0, printed.failed or 0), (
            f"the runner's report of the tests is missing or incomplete ({error}): something ended the run "
            "before it finished (sys.exit, os._exit or pytest.exit in a test, a conftest.py or the code), or "
            "switched the report off")


def guarded(report: TestReport, guard: Authority | None, step: StepResult, token: str,
            files: Mapping[str, str]) -> TestReport:
    """A pass of the configured test command over ``files``, as its language's guard reads it
    (``Authority.team_problem``): its output as a person reads it, and no pass when the guard finds it unproven."""
    if guard is None:
        return report
    report = dataclasses.replace(report, stdout=guard.display(report.stdout))
    problem = guard.team_problem(step.stdout, step.stderr, token, files)
    if not problem or report.status is not TestStatus.PASSED:
        return report
    return dataclasses.replace(report, status=TestStatus.FAILED, passed=0, failed=max(report.failed or 0, 1),
                               stderr=report.stderr + f"\n[sandbox] not a pass: {problem}")


def refused(why: str, which: str = "the user's tests") -> TestReport:
    """The tests cannot run as given, because of something in the files (the team's, in a bot's run)."""
    return TestReport(status=TestStatus.FAILED, exit_code=None, passed=0, failed=1,
                      stderr=f"[sandbox] {which} were not run: {why}")


def combined(user: Sequence[str], shown: str, step: StepResult, verdict: Verdict, team: TestReport | None,
             config: SandboxConfig) -> TestReport:
    """The user's pass (``shown`` is its output as a person reads it) and, when it ran, the team's."""
    user_ok = verdict.ok and step.exit_code == 0 and not step.timed_out
    # The limit killed the run before the runner reported: the verdict's counts and reasons (a missing report, files
    # that never passed) are only that, so the report gives none, as a single pass's does, and the note says why.
    problems = [] if step.timed_out else list(verdict.problems)
    if verdict.ok and step.exit_code not in (0, None) and not step.timed_out:
        problems.append(f"the run of the user's tests exited {step.exit_code}")
    stderr = step.stderr + note(step, config) + "".join(
        f"\n[sandbox] the user's tests do not pass: {problem}" for problem in problems)
    stdout = f"== the user's tests ({', '.join(user)}), run as given ==\n{shown}"
    if step.timed_out or (team is not None and team.status is TestStatus.TIMEOUT):
        status = TestStatus.TIMEOUT
    elif not user_ok or (team is not None and not team.ok):
        status = TestStatus.FAILED
    else:
        status = TestStatus.PASSED
    passed: int | None = None if step.timed_out else verdict.passed
    failed: int | None = None if step.timed_out else verdict.failed
    skipped: int | None = None
    duration, truncated, exit_code = step.duration_s, step.truncated, step.exit_code
    if team is not None:
        stdout += f"\n== the team's tests ==\n{team.stdout}"
        stderr += ("\n" if stderr else "") + team.stderr + _none_ran(team)
        if team.passed is not None or team.failed is not None:
            passed, failed = (passed or 0) + (team.passed or 0), (failed or 0) + (team.failed or 0)
        skipped = team.skipped
        duration, truncated = duration + team.duration_s, truncated or team.truncated
        exit_code = exit_code if exit_code else team.exit_code
    return TestReport(status=status, exit_code=exit_code, duration_s=round(duration, 3), passed=passed,
                      failed=failed, stdout=stdout, stderr=stderr.lstrip("\n"), truncated=truncated, skipped=skipped)


def _none_ran(team: TestReport) -> str:
    """The sentence for a pass of the team's tests that ran none ("no tests ran": a test file holding no test),
    whose failure the counts, the user's tests' alone, would not show ("1 passed, 0 failed", yet no pass)."""
    said = NOTHING_RAN.search(f"{team.stdout}\n{team.stderr}")
    if team.ok or team.passed or team.failed or said is None:
        return ""
    return f"\n[sandbox] not a pass: none of the team's tests ran: \"{said.group().strip()}\""


def memory_killed(config: SandboxConfig) -> str:
    """The sentence for a run the memory limit ended: one process (runc) or the whole sandbox (gVisor)."""
    return f"killed (exit 137): most often the {config.memory_mb} MB memory limit"


def note(step: StepResult, config: SandboxConfig) -> str:
    """A plain sentence about how the sandbox ended the run, when it did."""
    if step.ended:
        return f"\n[sandbox] {step.ended}"
    if step.timed_out:
        return f"\n[sandbox] killed after the {step.duration_s:.0f}s time limit"
    if step.exit_code == KILLED:
        return f"\n[sandbox] {memory_killed(config)}"
    if step.truncated:
        return f"\n[sandbox] output over {config.max_output_bytes} bytes was cut in the middle"
    return ""
