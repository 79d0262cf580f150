"""Every default language, against real Docker: right counts when correct, the failing test named when not."""

from __future__ import annotations

import dataclasses

import pytest

from agents.types import FileSet, TestJob, TestStatus
from bot.sandbox import DockerSandbox
from bot.sandbox.languages import DEFAULT_LANGUAGES
from tests.sandbox.conftest import configured
from tests.sandbox.programs import PROGRAMS

pytestmark = pytest.mark.docker


def test_every_default_language_has_a_program():
    assert set(PROGRAMS) == set(DEFAULT_LANGUAGES)


@pytest.mark.parametrize("language", sorted(PROGRAMS))
async def test_correct_program_passes_with_counts(sandbox, language):
    report = await sandbox.run(TestJob(language, PROGRAMS[language].correct()))
    assert (report.status, report.passed, report.failed) == (TestStatus.PASSED, 3, 0), report.output()
    assert report.exit_code == 0


@pytest.mark.parametrize("language", sorted(PROGRAMS))
async def test_buggy_program_fails_naming_the_test(sandbox, language):
    program = PROGRAMS[language]
    report = await sandbox.run(TestJob(language, program.buggy()))
    assert (report.status, report.passed, report.failed) == (TestStatus.FAILED, 2, 1), report.output()
    assert program.failing_test in report.output(limit=100_000)
    assert report.exit_code != 0


JAVA_PLAIN = {
    "Calc.java": "public class Calc {\n    static int sub(int a, int b) { return a - b; }\n}\n",
    "CalcTest.java": "public class CalcTest {\n    public static void main(String[] args) {\n"
                     "        assert Calc.sub(5, 3) == 2 : \"sub\";\n    }\n}\n",
    "OtherTest.java": "public class OtherTest {\n    public static void main(String[] args) {\n"
                      "        assert 1 + 1 == 2;\n    }\n}\n",
}


@pytest.mark.parametrize(("bug", "expected"), [(False, (TestStatus.PASSED, 2, 0)), (True, (TestStatus.FAILED, 1, 1))])
async def test_java_without_junit_runs_each_test_class_with_assertions(docker_client, bug, expected):
    """The official JDK image has no JUnit: each *Test class's main() runs with -ea, one TAP line each."""
    java = DEFAULT_LANGUAGES["java"]
    no_junit = dataclasses.replace(java, test_command=java.test_command.replace("/usr/share/java/junit4.jar",
                                                                                "/nonexistent/junit4.jar"))
    files = dict(JAVA_PLAIN)
    if bug:
        files["Calc.java"] = files["Calc.java"].replace("a - b", "a + b")
    async with DockerSandbox(configured(languages={"java": no_junit}), client=docker_client) as sandbox:
        report = await sandbox.run(TestJob("java", FileSet(files)))
    assert (report.status, report.passed, report.failed) == expected, report.output()
    assert ("not ok 1 - CalcTest" in report.stdout) is bug
