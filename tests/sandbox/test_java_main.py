"""Java without JUnit (the registry's eclipse-temurin image has none): each test class's main() is the test, on real
Docker, in an image made here from the offline Java image with JUnit taken out. The code ending the JVM with success
in the middle of a test is not the test passing; a test's own main ending with System.exit(its verdict) still is."""

from __future__ import annotations

import dataclasses
import io

import pytest

from agents.types import FileSet, TestJob, TestStatus
from bot.sandbox import DockerSandbox
from bot.sandbox.languages import DEFAULT_LANGUAGES
from tests.sandbox.conftest import configured

pytestmark = pytest.mark.docker

WITHOUT_JUNIT = "codegen-chat-test/java-without-junit:bookworm"
CODE = ("public class Calc {\n    static int sub(int a, int b) {\n        if (a == 99) System.exit(0);\n"
        "        return a + b;\n    }\n}\n")
# Calls the code's sub(99, ...), which ends the JVM with 0 before the check of sub(5, 3), which fails.
EXITS_EARLY = ("public class CalcTest {\n    public static void main(String[] args) {\n        Calc.sub(99, 1);\n"
               "        assert Calc.sub(5, 3) == 2 : \"sub\";\n    }\n}\n")
# A main that counts its failures and ends with System.exit(failures), here through a helper of its class: its
# verdict, not an early end.
OWN_EXIT = ("public class CalcTest {\n    static void finish(int failures) { System.exit(failures); }\n"
            "    public static void main(String[] args) {\n        int failures = 0;\n"
            "        if (Calc.sub(5, 3) != 2) failures++;\n        finish(failures);\n    }\n}\n")
# The same through a helper class of the test's own file (a second, non-public class in CalcTest.java).
HELPER_EXIT = ("public class CalcTest {\n    public static void main(String[] args) {\n        int failures = 0;\n"
               "        if (Calc.sub(5, 3) != 2) failures++;\n        Check.done(failures);\n    }\n}\n\n"
               "class Check {\n    static void done(int failures) { System.exit(failures); }\n}\n")


@pytest.fixture(scope="module")
def without_junit(docker_client):
    base = DEFAULT_LANGUAGES["java"].offline_image
    dockerfile = f"FROM {base}\nRUN rm -f /usr/share/java/junit4.jar\n".encode()
    docker_client.images.build(fileobj=io.BytesIO(dockerfile), tag=WITHOUT_JUNIT, rm=True, pull=False)
    yield WITHOUT_JUNIT
    docker_client.images.remove(WITHOUT_JUNIT)


@pytest.fixture
async def sandbox(docker_client, without_junit, monkeypatch):
    monkeypatch.setitem(DEFAULT_LANGUAGES, "java", dataclasses.replace(DEFAULT_LANGUAGES["java"],
                                                                       offline_image=without_junit))
    async with DockerSandbox(configured(setup_network=False), client=docker_client) as box:
        yield box


@pytest.mark.parametrize("user", [False, True], ids=["team", "user"])
async def test_code_that_ends_the_jvm_with_0_mid_test_does_not_pass(sandbox, user):
    files = FileSet({"Calc.java": CODE, "CalcTest.java": EXITS_EARLY})
    report = await sandbox.run(TestJob("java", files, authoritative=("CalcTest.java",) if user else ()))
    assert report.status is TestStatus.FAILED, report.output(10_000)
    assert "CalcTest: the JVM was ended (System.exit in the code or a thread) before its main() returned" \
        in report.stderr, report.output(10_000)


@pytest.mark.parametrize("user", [False, True], ids=["team", "user"])
async def test_code_that_halts_the_jvm_with_0_mid_test_does_not_pass(sandbox, user):
    """Runtime.halt(0) runs no shutdown hook: the launcher never saw main() return."""
    files = FileSet({"Calc.java": CODE.replace("System.exit(0)", "Runtime.getRuntime().halt(0)"),
                     "CalcTest.java": EXITS_EARLY})
    report = await sandbox.run(TestJob("java", files, authoritative=("CalcTest.java",) if user else ()))
    assert report.status is TestStatus.FAILED, report.output(10_000)
    assert "CalcTest: the JVM ended with 0 before its main() returned (Runtime.halt in the code or a thread)" \
        in report.stderr, report.output(10_000)


# A test class that is not public, in a package: the java command runs its main() all the same.
IN_A_PACKAGE = ("package calc;\n\nclass CalcTest {\n    public static void main(String[] args) {\n"
                "        assert Calc.sub(5, 3) == 2 : \"sub\";\n    }\n}\n")


@pytest.mark.parametrize("test", [OWN_EXIT, HELPER_EXIT, EXITS_EARLY.replace("Calc.sub(99, 1);\n", "")],
                         ids=["own-exit", "helper-exit", "returns"])
@pytest.mark.parametrize("user", [False, True], ids=["team", "user"])
async def test_a_main_that_ends_with_its_verdict_or_returns_still_passes(sandbox, test, user):
    files = FileSet({"Calc.java": CODE.replace("a + b", "a - b"), "CalcTest.java": test})
    report = await sandbox.run(TestJob("java", files, authoritative=("CalcTest.java",) if user else ()))
    assert (report.status, report.passed) == (TestStatus.PASSED, 1), report.output(10_000)
    broken = await sandbox.run(TestJob("java", files.merged({"Calc.java": CODE.replace("(a == 99)", "(false)")}),
                                       authoritative=("CalcTest.java",) if user else ()))
    assert broken.status is TestStatus.FAILED, broken.output(10_000)


@pytest.mark.parametrize("user", [False, True], ids=["team", "user"])
async def test_a_test_class_that_is_not_public_runs_as_the_java_command_runs_it(sandbox, user):
    code = "package calc;\n\n" + CODE.replace("if (a == 99) System.exit(0);\n        return a + b;", "return a - b;")
    files = FileSet({"calc/Calc.java": code, "calc/CalcTest.java": IN_A_PACKAGE})
    report = await sandbox.run(TestJob("java", files, authoritative=("calc/CalcTest.java",) if user else ()))
    assert report.status is TestStatus.PASSED, report.output(10_000)
