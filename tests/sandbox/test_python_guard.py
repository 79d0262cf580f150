"""The sandbox's own pytest plugin ends a run of the team's tests whose conftest.py hooks into pytest, however the
hook's name is spelled, on real Docker. Each conftest below passes the text check (``hollow``) on purpose."""

from __future__ import annotations

import pytest

from agents.types import FileSet, TestJob, TestStatus
from bot.sandbox.hollow import hollow_tests
from tests.sandbox.programs import PYTHON

pytestmark = pytest.mark.docker

WRONG_ADD = {"calc.py": "def add(a, b):\n    return a - b\n"}
TEST_ADD = "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n"
FLIP = ("import pytest\n\ndef _settle(item, call):\n    report = pytest.TestReport.from_item_and_call(item, call)\n"
        "    report.outcome, report.longrepr = 'passed', None\n    return report\n\n")
CONFTESTS = {
    "a hook named at run time": (
        {"conftest.py": FLIP + "globals()['pytest_runtest_' + 'makereport'] = _settle\n"},
        "conftest.py implements pytest_runtest_makereport"),
    "a hook in a folder's conftest": (
        {"tests/conftest.py": "def _keep(config, items):\n    items[:] = [i for i in items if 'add' not in i.name]\n\n"
                              "globals()['pytest_' + 'collection_modifyitems'] = _keep\n",
         "tests/test_calc.py": TEST_ADD + "\ndef test_other():\n    pass\n"},
        "tests/conftest.py implements pytest_collection_modifyitems"),
    "a plugin object registered while configuring": (
        {"conftest.py": FLIP + "class Settle:\n    pass\n\nsetattr(Settle, 'pytest_runtest_' + 'makereport', "
                               "staticmethod(_settle))\n\ndef pytest_configure(config):\n"
                               "    getattr(config, 'plugin' + 'manager').register(Settle())\n"},
        "Settle implements pytest_runtest_makereport"),
    "test files ignored by a list named at run time": (
        {"conftest.py": "globals()['collect_' + 'ignore'] = ['test_calc.py']\n",
         "test_other.py": "def test_other():\n    pass\n"},
        "conftest.py sets collect_ignore"),
    "the keyword option changed while configuring": (
        {"conftest.py": "def pytest_configure(config):\n    setattr(getattr(config, 'opt' + 'ion'), 'keyword', 'not add')\n",
         "test_other.py": "def test_other():\n    pass\n"},
        "pytest's options that select tests were changed while it ran (keyword)"),
}


@pytest.mark.parametrize("how", sorted(CONFTESTS))
async def test_a_team_conftest_that_hooks_into_pytest_ends_the_run(sandbox, how):
    extra, said = CONFTESTS[how]
    files = {**WRONG_ADD, "test_calc.py": TEST_ADD, **extra}
    assert hollow_tests(files, []) == ""  # the text check alone would let it run
    report = await sandbox.run(TestJob("python", FileSet(files)))
    assert report.status is TestStatus.FAILED and not report.passed, report.output(10_000)
    assert f"[sandbox] not a pass: {said}" in report.stderr, report.output(10_000)


async def test_fixtures_markers_and_parameters_in_a_team_conftest_still_run(sandbox):
    conftest = ("import pytest\n\n@pytest.fixture\ndef two():\n    return 2\n\n"
                "def pytest_configure(config):\n    config.addinivalue_line('markers', 'slow: a slow test')\n\n"
                "def pytest_generate_tests(metafunc):\n    if 'n' in metafunc.fixturenames:\n"
                "        metafunc.parametrize('n', [1, 2])\n")
    tests = ("import pytest\nfrom calc import add, mul\n\n@pytest.mark.slow\ndef test_add(two):\n"
             "    assert add(two, 3) == 5\n\ndef test_mul(n):\n    assert mul(n, 1) == n\n")
    files = {**PYTHON.files, "conftest.py": conftest, "test_calc.py": tests}
    report = await sandbox.run(TestJob("python", FileSet(files)))
    assert (report.status, report.passed, report.failed) == (TestStatus.PASSED, 3, 0), report.output(10_000)
