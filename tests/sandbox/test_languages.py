"""Every default language, against real Docker: right counts when correct, the failing test named when not."""

from __future__ import annotations

import pytest

from agents.types import TestJob, TestStatus
from bot.sandbox.languages import DEFAULT_LANGUAGES
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
