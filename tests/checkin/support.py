"""Test helpers for the check-in: the token the fake GitHub accepts, publications, a sleep that records."""

from __future__ import annotations

from agents.types import FileSet, Publication, RunStatus, TestReport, TestStatus

TOKEN = "ghp_fake_token_0123456789abcdef"
PASSING = TestReport(TestStatus.PASSED, exit_code=0, passed=1, failed=0, stdout="1 passed")
FAILING = TestReport(TestStatus.FAILED, exit_code=1, passed=1, failed=2,
                     stdout="FAILED test_adder.py::test_big - assert 3 == 4\n1 passed, 2 failed")
ADDER = {"adder.py": "def add(a, b):\n    return a + b\n",
         "test_adder.py": "from adder import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"}


class SleepLog:
    """Stands in for ``asyncio.sleep``: records how long the publisher chose to wait, without waiting."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def publication(
    files: dict[str, str] | None = None,
    *,
    task: str = "Write a function that adds two numbers",
    status: RunStatus = RunStatus.PASSED,
    readme: str = "# Adder\n\nAdds two numbers. Run `pytest`.",
    report: TestReport | None = PASSING,
    conversation_key: str = "slack:C1:1700000000.0001",
    run_id: str = "run-1",
) -> Publication:
    chosen = ADDER if files is None else files
    return Publication(run_id, conversation_key, task, status, FileSet(chosen), readme, report)
