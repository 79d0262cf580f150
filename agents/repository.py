"""What the team does differently in a repository: which of its files to read whole, how its own tests
judge a change (tests failing before the change are named, never blamed, never counted for it), and which
files the team may not write (the repository's existing tests, and the test configuration that reaches them,
are authoritative; its CI configuration would run with the repository's secrets)."""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Collection, Iterable

from agents.failures import failing_tests
from agents.types import FileSet, TestReport, TestStatus

MAX_NAMED_FILES = 20  # files read whole because the task or the plan names them
MAX_NAMED_MISSING = 10


def named_files(text: str, paths: Collection[str]) -> list[str]:
    """The repository's files that ``text`` names: by path, or by a file name only one path has."""
    words = set(re.findall(r"[\w./-]+", text))
    words |= {w.rstrip(".,:;)") for w in words}
    by_name: dict[str, list[str]] = {}
    for path in paths:
        by_name.setdefault(posixpath.basename(path), []).append(path)
    found = [p for p in sorted(paths) if p in words]
    found += [same[0] for name, same in sorted(by_name.items()) if len(same) == 1 and name in words
              and "." in name and same[0] not in found]
    return found[:MAX_NAMED_FILES]


def baseline_failures(report: TestReport) -> tuple[str, ...]:
    """The tests the unchanged repository fails (empty when they pass or none can be named)."""
    return () if report.ok else tuple(failing_tests(report))


def baseline_ran(report: TestReport) -> tuple[str, ...]:
    """The tests the unchanged repository ran to the end, by the runner's own report (empty without one)."""
    return report.ran if report.status in (TestStatus.PASSED, TestStatus.FAILED) else ()


def files_holding_tests(ran: Iterable[str], paths: Collection[str]) -> frozenset[str]:
    """The files of ``paths`` that hold the tests a runner's report names, whatever their names: each test is
    ``classname::name``, pytest's classname being the test's file as a dotted path (``.py`` dropped) with its
    class after it (``billing.tests.TestCents``), so the file is the longest such path that is one of ``paths``.
    A doctest is named after what it documents (``billing.money.cents``) and lives in the code: it names no file."""
    by_dotted = {path.removesuffix(".py").replace("/", "."): path for path in paths}
    found = set()
    for test in ran:
        classname, _, name = test.partition("::")
        if "." not in name.partition("[")[0] and (path := _file_of(classname, by_dotted)):
            found.add(path)
    return frozenset(found)


def _file_of(classname: str, by_dotted: dict[str, str]) -> str:
    parts = classname.split(".")
    for end in range(len(parts), 0, -1):
        if path := by_dotted.get(".".join(parts[:end])):
            return path
    return ""


def judged(report: TestReport, already_failing: tuple[str, ...], ran_before: tuple[str, ...] = ()) -> TestReport:
    """The report with the tests that failed before the change set apart: when they are the only failures,
    and some other test passed, the change passes (those tests are named in the report, not counted).
    A test that ran before the change (``ran_before``, by the runner's own report) and not after it was
    switched off by the change (a pytest.ini or conftest.py of the team's, addopts, collect_ignore...): each
    counts as failed, so no pass rests on the repository's tests not running. The names are not kept."""
    ran_after = set(report.ran)
    report = _judged(dataclasses.replace(report, ran=()), already_failing)
    missing = [name for name in ran_before if name not in ran_after]
    if not missing or report.status not in (TestStatus.PASSED, TestStatus.FAILED):
        return report
    shown = ", ".join(missing[:MAX_NAMED_MISSING]) + (f" and {len(missing) - MAX_NAMED_MISSING} more"
                                                      if len(missing) > MAX_NAMED_MISSING else "")
    said = (f"not a pass: {len(missing)} of the repository's tests ran before the change and did not run after "
            f"it ({shown}); the change switched them off (test configuration such as pytest.ini, conftest.py, "
            "addopts or collect_ignore): leave the repository's test configuration as it is")
    return dataclasses.replace(report, status=TestStatus.FAILED, failed=(report.failed or 0) + len(missing),
                               stderr=f"{report.stderr}\n{said}".lstrip("\n"))


def _judged(report: TestReport, already_failing: tuple[str, ...]) -> TestReport:
    if not already_failing:
        return report
    failing = failing_tests(report) if not report.ok else []
    still = tuple(name for name in already_failing if name in failing)
    if report.status is TestStatus.FAILED and failing and set(failing) <= set(already_failing) and report.passed:
        return dataclasses.replace(report, status=TestStatus.PASSED, failed=0, already_failing=still)
    return dataclasses.replace(report, already_failing=still)


# CI configuration runs with the repository's secrets once pushed: the team never writes it. Each entry is where
# a CI service (or a host building deploy previews) reads its configuration, from the top of the tree.
CI_PATHS = (".github/workflows/", ".github/actions/", ".gitlab-ci.yml", ".gitlab/", ".circleci/", ".buildkite/",
            "buildkite.yml", "buildkite.yaml", "buildkite.json", "azure-pipelines.yml", "azure-pipelines.yaml",
            ".azure-pipelines/", ".travis.yml", "bitbucket-pipelines.yml", ".drone.yml", ".drone.yaml",
            ".drone.jsonnet", ".drone.star", ".woodpecker.yml", ".woodpecker.yaml", ".woodpecker/", ".gitea/workflows/",
            ".forgejo/workflows/", "appveyor.yml", ".appveyor.yml", ".semaphore/", ".tekton/", "buildspec.yml",
            "buildspec.yaml", "cloudbuild.yaml", "cloudbuild.yml", "cloudbuild.json", "codemagic.yaml", ".cirrus.yml",
            ".cirrus.yaml", ".cirrus.star", "bitrise.yml", "bitrise.yaml", "codeship-steps.yml", "codeship-steps.json",
            "codeship-services.yml", ".teamcity/", "bamboo-specs/", ".harness/",
            ".builds/", ".build.yml",  # SourceHut
            ".zuul.yaml", ".zuul.yml", "zuul.yaml", "zuul.yml", ".zuul.d/", "zuul.d/",
            "netlify.toml", "vercel.json")
CI_NAMES = ("Jenkinsfile",)  # wherever it lies: a Jenkins job may name any path


def is_ci(path: str) -> bool:
    return (any(path == ci or path.startswith(ci) for ci in CI_PATHS)
            or posixpath.basename(path).startswith(CI_NAMES))


# Files that decide which tests run and how they are judged (a conftest.py can skip or rewrite any test below
# it; pytest.ini deselects; a jest config ignores paths): written where an existing test lies below them, they
# would let a change pass by weakening the repository's tests rather than by passing them.
TEST_CONFIG_NAMES = frozenset({"conftest.py", "pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg", ".mocharc.js",
                               ".mocharc.json", ".mocharc.yml", ".mocharc.yaml", ".mocharc.cjs", "karma.conf.js"})
TEST_CONFIG_PREFIXES = ("jest.config.", "vitest.config.", "jest.setup.", "vitest.setup.")


def configures_tests(path: str, tests: Collection[str]) -> bool:
    """Whether ``path`` is test-runner configuration that reaches one of ``tests`` (in its folder or below)."""
    name = posixpath.basename(path)
    if name not in TEST_CONFIG_NAMES and not name.startswith(TEST_CONFIG_PREFIXES):
        return False
    folder = posixpath.dirname(path)
    return any(not folder or test.startswith(f"{folder}/") for test in tests)


# Files beside the tests that hold what they check against (Jest's snapshots and manual mocks, Go's testdata, golden
# files): rewritten, they would let a change pass by changing what the repository's tests expect.
TEST_DATA_FOLDERS = ("__snapshots__/", "__fixtures__/", "__mocks__/", "testdata/", "test_data/", "test-data/")
TEST_DATA_SUFFIXES = (".snap", ".golden")


def is_test_data(path: str) -> bool:
    lowered = path.lower()
    return (lowered.startswith(TEST_DATA_FOLDERS) or any(f"/{folder}" in lowered for folder in TEST_DATA_FOLDERS)
            or lowered.endswith(TEST_DATA_SUFFIXES))


def without_protected(written: FileSet, protected: Collection[str]) -> tuple[FileSet, list[str], list[str]]:
    """The files written, less the repository's existing tests, the test configuration that reaches them and
    any CI configuration; and the ones dropped (tests and their configuration, CI)."""
    tests = sorted(p for p in written if p in protected or configures_tests(p, protected))
    ci = sorted(p for p in written if is_ci(p) and p not in protected)
    return written.without([*tests, *ci]), tests, ci
