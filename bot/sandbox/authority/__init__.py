"""The user's tests, run so that nothing the team writes can reconfigure them, and judged per file.

A job may name the user's test files (``TestJob.authoritative``). For a built-in language they then run
in a pass of their own, before the team's tests, with only the user's test files and the code present
(the team's test files are not there yet), through a command this package builds rather than the
configured one: a fixed runner configuration from outside the work dir, no plugin, hook or config file
from the files or the installed dependencies (see each language's module for how). The pass counts as
passed only from what the runner reports per test: every user test file has at least one test that ran
and passed, none failed or errored, and none was skipped from outside the user's own file.

Limits, said plainly in the README: the code under test runs in the same process as the user's tests,
so it can still lie (exit early, patch the runner, print a fake report); what is guaranteed is that no
configuration the team writes changes which of the user's tests run or how their results are counted.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from agents.language import BUILT_IN

REPORT_DIR = "/tmp/.authority"  # recreated by every user pass; outside the work dir the files land in
MARK = "@@codegen-authority"
REPORT_SEPARATOR = "@@codegen-report"


@dataclass
class FileResult:
    """What one user test file's tests did."""

    passed: int = 0
    failed: int = 0
    foreign_skips: list[str] = field(default_factory=list)  # where a skip came from, outside the file
    ran: bool = False  # the runner reached the file at all


@dataclass(frozen=True)
class Verdict:
    """The user pass, judged: counts, and each reason the user's tests do not count as passed."""

    passed: int
    failed: int
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def judge(results: Mapping[str, FileResult], extra: Sequence[str] = ()) -> Verdict:
    """Every file must have run, with at least one pass, no failure and no skip from outside it."""
    problems = list(extra)
    failed = len(extra)  # a broken run counts as one failure, so the summary never reads "0 failed"
    for path, result in results.items():
        if result.failed:
            problems.append(f"{path}: {result.failed} of its tests failed")
        elif result.foreign_skips:
            problems.append(f"{path}: a test was skipped from outside the file ({result.foreign_skips[0]})")
        elif not result.passed:
            problems.append(f"{path}: none of its tests ran and passed")
        else:
            continue
        failed += max(result.failed, 1)
    return Verdict(sum(r.passed for r in results.values()), failed, tuple(problems))


class Authority:
    """How one language runs the user's test files. Subclasses fill in the three steps."""

    # The report the runner writes (read back after the pass), or '' when the marked output is the report.
    report_path = ""

    def report_paths(self, user: Sequence[str]) -> list[str]:
        """Every report the pass writes, each sealed by the sandbox (``bot.sandbox.judge``); ``verdict`` gets
        them joined by ``REPORT_SEPARATOR`` lines, in this order."""
        del user
        return [self.report_path] if self.report_path else []

    def refusal(self, files: Mapping[str, str], user: Sequence[str]) -> str:
        """Why the team's files would switch the user's tests off, or ''. Checked before anything runs."""
        del files, user
        return ""

    def pass_files(self, files: Mapping[str, str], user: Sequence[str]) -> dict[str, str]:
        """The files present for the user pass: everything but the team's own test files (named as the built-in
        languages name them: only a built-in language has an authority)."""
        mine = set(user)
        return {p: c for p, c in files.items() if p in mine or not BUILT_IN.looks_like_test(p)}

    def command(self, user: Sequence[str], files: Mapping[str, str], workdir: str, token: str) -> str:
        raise NotImplementedError

    # The team's pass (the configured test command) may be guarded too: files the sandbox adds to it, the
    # environment it runs with, and why its output, read with ``token``, proves no pass ('' when it does) for the
    # files it ran over.
    def team_refusal(self, files: Mapping[str, str]) -> str:
        """Why the team's pass cannot run with these test files (the user's are not among them), or ''."""
        del files
        return ""

    def team_files(self, files: Mapping[str, str]) -> dict[str, str]:
        del files
        return {}

    def team_env(self, token: str) -> dict[str, str]:
        del token
        return {}

    def team_problem(self, stdout: str, stderr: str, token: str, files: Mapping[str, str]) -> str:
        del stdout, stderr, token, files
        return ""

    def verdict(self, user: Sequence[str], files: Mapping[str, str], stdout: str, report: str,
                token: str, workdir: str) -> Verdict:
        raise NotImplementedError

    def display(self, stdout: str) -> str:
        """The pass's output as a person (and the team) should read it."""
        return stdout

    def shown(self, stdout: str, token: str) -> str:
        return without_marks(self.display(stdout), token)


# -- the marked-output protocol: each user file's run is framed by lines only this pass prints -------

def framed(index: int, command: str, token: str) -> str:
    """``command`` between a begin and an end line carrying its exit code."""
    return f'echo "{MARK} {token} begin {index}"; {command}; echo "{MARK} {token} end {index} $?"'


def sections(stdout: str, token: str) -> dict[int, tuple[str, int | None]]:
    """Each framed run's output and exit code (None when its end line never came)."""
    found: dict[int, tuple[str, int | None]] = {}
    pattern = re.compile(rf"^{re.escape(MARK)} {re.escape(token)} (begin|end) (\d+)(?: (\d+))?$", re.M)
    start: dict[int, int] = {}
    for match in pattern.finditer(stdout):
        index = int(match.group(2))
        if match.group(1) == "begin":
            start[index] = match.end() + 1  # after the line's newline
            found[index] = (stdout[start[index]:], None)
        elif index in start:
            found[index] = (stdout[start[index]:match.start()], int(match.group(3)))
    return found


def without_marks(stdout: str, token: str) -> str:
    return re.sub(rf"^{re.escape(MARK)} {re.escape(token)} .*\n?", "", stdout, flags=re.M)


def quoted(paths: Sequence[str], prefix: str = "") -> str:
    return " ".join(shlex.quote(prefix + path) for path in paths)
