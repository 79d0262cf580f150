"""Team-written Python tests that would pass without testing, refused before they run (no Docker)."""

from __future__ import annotations

import pytest

from bot.sandbox.hollow import hollow_tests

TEST = "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n"


@pytest.mark.parametrize(("files", "said"), [
    ({"conftest.py": "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item):\n"
                     "    yield\n"}, "conftest.py uses hookimpl"),
    ({"tests/conftest.py": "collect_ignore_glob = ['*']\n"}, "tests/conftest.py uses collect_ignore_glob"),
    ({"conftest.py": "def pytest_collection_modifyitems(items):\n    items.clear()\n"}, "pytest_collection_modifyitems"),
    ({"test_calc.py": "pytest_plugins = ['flipper']\n" + TEST}, "test_calc.py uses pytest_plugins"),
    ({"calc.py": "def pytest_report_teststatus(report):\n    return 'passed', '.', 'PASSED'\n"},
     "calc.py uses pytest_report_teststatus"),
    ({"vendor/flip/flip.py": "def setup(config):\n    config.pluginmanager.register(object())\n"},
     "uses pluginmanager"),
    ({"conftest.py": "import os\nopen('/tmp/.results/junit.xml', 'w')\n"}, "uses junit.xml"),
    ({"test_calc.py": "import unittest\nunittest.TestCase.assertEqual = lambda *a: None\n"},
     "patches the test machinery (unittest.TestCase.assertEqual ="),
    ({"test_calc.py": "import pytest\nsetattr(pytest, 'fail', print)\n"}, "patches the test machinery (setattr(pytest"),
    ({"test_calc.py": "import unittest as u\nu.TestCase.assertEqual = lambda *a: None\n"},
     "(u.TestCase.assertEqual = ...)"),
    ({"tests/test_calc.py": "from unittest import TestCase as T\n\nT.assertTrue = print\n"}, "(T.assertTrue = ...)"),
    ({"test_calc.py": "import unittest\n\ndef test_x(monkeypatch):\n"
                      "    monkeypatch.setattr(unittest.TestCase, 'assertEqual', print)\n"}, "setattr(unittest.TestCase"),
    ({"conftest.py": "def setup(monkeypatch):\n    monkeypatch.setattr('pytest.fail', print)\n"},
     "setattr('pytest.fail'"),
    ({"conftest.py": "def pytest_configure(config):\n    config.option.keyword = 'not add'\n"},
     "(config.option.keyword = ...)"),
    ({"tests/conftest.py": "def pytest_configure(config):\n    setattr(config.option, 'markexpr', 'not slow')\n"},
     "setattr(config.option"),
    ({"test_calc.py": "def test_x(request):\n    request.config.known_args_namespace.keyword = 'x'\n"},
     "request.config.known_args_namespace.keyword = ..."),
    ({"test_calc.py": "def test_x(request):\n    request.session.shouldstop = 'enough'\n"},
     "request.session.shouldstop = ..."),
    ({"test_calc.py": "import pytest\n\ndef test_x():\n    pytest.exit('done', returncode=0)\n"},
     "pytest.exit(...) ends the test session early"),
    ({"conftest.py": "from pytest import exit as leave\n\ndef pytest_configure(config):\n    leave('x', 0)\n"},
     "leave(...) ends the test session early"),
    ({"test_calc.py": "def test_add():\n    try:\n        assert 1 == 2\n    except AssertionError:\n        pass\n"},
     "test_add catches its own assertion's failure"),
    ({"test_calc.py": "def test_add():\n    try:\n        assert 1 == 2\n    except:\n        print('no')\n"},
     "test_add catches"),
    ({"test_x.py": "class TestX:\n    def test_a(self):\n        try:\n            for i in range(3):\n"
                   "                assert i < 0\n        except (ValueError, Exception):\n            return\n"},
     "test_a catches"),
])
def test_team_files_that_switch_the_judgement_off_are_named(files, said):
    assert said in hollow_tests(files, user=())


@pytest.mark.parametrize("files", [
    {"test_calc.py": TEST, "conftest.py": "import pytest\n\n@pytest.fixture\ndef two():\n    return 2\n"},
    {"conftest.py": "def pytest_configure(config):\n    config.addinivalue_line('markers', 'slow: slow')\n"},
    {"test_calc.py": "import pytest\n\ndef test_raises():\n    with pytest.raises(ValueError):\n        int('x')\n"},
    {"test_calc.py": "def test_add():\n    try:\n        assert 1 == 1\n    except AssertionError:\n        raise\n"},
    {"test_calc.py": "import pytest\n\ndef test_add():\n    try:\n        assert f()\n    except Exception as e:\n"
                     "        pytest.fail(str(e))\n"},
    {"test_calc.py": "def test_parse():\n    try:\n        int('x')\n    except ValueError:\n        pass\n    assert True\n"},
    {"test_calc.py": "def test_broken(:\n"},  # pytest reports it
    {"test_calc.py": "from unittest import mock\n\ndef test_x():\n    with mock.patch('calc.now', return_value=3):\n"
                     "        assert 1\n"},
    {"test_calc.py": "import unittest\n\nclass T(unittest.TestCase):\n    def setUp(self):\n"
                     "        self.maxDiff = None\n"},
    {"test_calc.py": "def test_x(monkeypatch):\n    monkeypatch.setattr('calc.time', lambda: 0)\n"},
    {"test_app.py": "from app import App\n\ndef test_x():\n    app = App()\n    app.config.debug = True\n"
                    "    config = {}\n    assert app.run(config)\n"},
    {"calc.py": "import unittest\nunittest.main\n"},  # code may use unittest; only test files are checked for patching
])
def test_plain_tests_fixtures_and_markers_are_allowed(files):
    assert hollow_tests(files, user=()) == ""


def test_the_users_own_files_are_never_checked():
    swallowing = "def test_add():\n    try:\n        assert 1 == 2\n    except AssertionError:\n        pass\n"
    assert hollow_tests({"test_calc.py": swallowing}, user=["test_calc.py"]) == ""
    assert hollow_tests({"test_calc.py": swallowing, "test_team.py": swallowing}, user=["test_calc.py"]) != ""


def test_a_file_judged_before_is_judged_again_by_its_path_and_its_text():
    """A run's test runs see most files unchanged, so a verdict is kept per file; the path is part of it (the same
    text is a test file in one place and a helper in another) and so is every character of the text."""
    swallowing = "def test_add():\n    try:\n        assert 1 == 2\n    except AssertionError:\n        pass\n"
    for _ in range(2):
        assert hollow_tests({"helpers.py": swallowing}, user=()) == ""
        assert "test_add catches its own assertion" in hollow_tests({"test_calc.py": swallowing}, user=())
        assert hollow_tests({"test_calc.py": swallowing.replace("pass", "raise")}, user=()) == ""
    big = swallowing + "#" * 70_000 + "\n"  # past the size whose verdict is kept: judged each time, the same
    assert "test_add" in hollow_tests({"test_big.py": big}, user=()) and "test_add" in hollow_tests({"test_big.py": big}, user=())
