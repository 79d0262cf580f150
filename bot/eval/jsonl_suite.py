"""A suite of your own tasks: a JSONL file, one task per line.

    {"id": "slugify", "language": "python",
     "task": "Write slugify(text) in slug.py: lower case, words joined by '-'.",
     "hidden_tests": {"test_slug.py": "from slug import slugify\\n\\ndef test_words():\\n    ..."},
     "starter_files": {"slug.py": "def slugify(text: str) -> str:\\n    ...\\n"}}

``id``, ``language``, ``task`` and ``hidden_tests`` are required; ``starter_files`` is optional. Blank
lines are skipped. Every problem with the line it came from is named in the error, so a suite of
hundreds of tasks is fixed one line at a time.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agents.language import Language, Languages
from agents.paths import UnsafePath, clash, project_path
from agents.types import FileSet
from bot.config.sections import InputConfig
from bot.eval.problems import EvalError, Problem, Suite
from bot.safety.local_files import Use, read_regular_file
from bot.safety.text import not_text

MAX_SUITE_BYTES = 500_000_000
SUITE_FILE = Use("suites", "name the JSONL file of tasks in it")  # for the sentences refusing what is no file
REQUIRED = ("id", "language", "task", "hidden_tests")
FIELDS = (*REQUIRED, "starter_files")


def read_jsonl_suite(path: Path, languages: Languages, limits: InputConfig | None = None,
                     max_job_bytes: int | None = None) -> Suite:
    """The tasks in ``path``, each checked; ``EvalError`` names the file and line of the first bad one.
    ``languages`` are the ones the sandbox runs (they know a task's language and how its hidden tests are named).
    ``limits`` are the ones a user's request meets (``[input]``): a task the bot would refuse is refused here,
    a hidden test being a file the user gives. ``max_job_bytes`` is what the sandbox takes in one job
    (``sandbox.max_upload_bytes``): the hidden tests and starter files must leave room for the team's code."""
    if not path.exists():
        raise EvalError(f"No suite {path}: name `humaneval`, or the path of a JSONL file of tasks "
                        "(the README's eval section describes the format).")
    if path.is_dir():
        raise EvalError(f"{path} is a folder; {SUITE_FILE.instead}.")
    try:
        text = read_regular_file(str(path), MAX_SUITE_BYTES, SUITE_FILE).decode("utf-8-sig")  # a BOM some editors write
    except UnicodeDecodeError:
        raise EvalError(f"{path} is not UTF-8 text; a suite is a JSONL file, one JSON object per line.") from None
    problems: list[Problem] = []
    first_line: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        problem = _problem(_where(path, number), line, languages, limits, max_job_bytes)
        if problem.id in first_line:
            raise EvalError(f"{_where(path, number)}: id {problem.id!r} is already used on line {first_line[problem.id]}; "
                            "every task needs its own id.")
        first_line[problem.id] = number
        problems.append(problem)
    if not problems:
        raise EvalError(f"{path} holds no tasks: write one JSON object per line.")
    return Suite(str(path), tuple(problems))


def _where(path: Path, number: int) -> str:
    return f"{os.fspath(path)} line {number}"


def _problem(where: str, line: str, languages: Languages, limits: InputConfig | None,
             max_job_bytes: int | None) -> Problem:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        raise EvalError(f"{where}: not valid JSON ({error.msg} at column {error.colno}).") from None
    except RecursionError:
        raise EvalError(f"{where}: not a task (arrays or objects nested deeper than any task needs).") from None
    if not isinstance(record, dict):
        raise EvalError(f"{where}: expected one JSON object per line, got {_kind(record)}.")
    _all_text(where, record)
    unknown = sorted(set(record) - set(FIELDS))
    if unknown:
        raise EvalError(f"{where}: unknown field {unknown[0]!r} (the fields are {', '.join(FIELDS)}).")
    missing = [name for name in REQUIRED if name not in record]
    if missing:
        raise EvalError(f"{where}: the field {missing[0]!r} is missing (required: {', '.join(REQUIRED)}).")
    problem_id = _text(where, record, "id")
    language = _language(where, _text(where, record, "language"), languages)
    hidden = _files(where, record, "hidden_tests")
    if not hidden:
        raise EvalError(f"{where}: hidden_tests holds no file; give at least one test file.")
    for name in hidden:
        if not languages.looks_like_test(name):
            raise EvalError(f"{where}: hidden test {name!r} is not named like a test file, so no test runner "
                            f"would find it; name it like {_test_examples(languages.get(language))}.")
    starter = _files(where, record, "starter_files") if "starter_files" in record else FileSet()
    both = sorted(set(hidden) & set(starter))
    if both:
        raise EvalError(f"{where}: {both[0]!r} is both a starter file and a hidden test; rename one.")
    problem = clash([*hidden, *starter])
    if problem:
        raise EvalError(f"{where}: {problem}.")
    task = _text(where, record, "task")
    if limits is not None:
        _within(where, task, hidden, starter, limits)
    if max_job_bytes is not None:
        _room_left(where, hidden.merged(starter), max_job_bytes)
    return Problem(problem_id, language, _task(task, language, languages), hidden, starter)


def _all_text(where: str, record: dict[str, Any]) -> None:
    """Every string of the record is Unicode text: a JSON escape may spell half a UTF-16 pair, which would pass
    here and fail after the model was called (``bot.safety.text``)."""
    for field_name, value in record.items():
        strings = value.items() if isinstance(value, dict) else [("", value)]
        for name, text in strings:
            for part in (name, text):
                problem = not_text(part) if isinstance(part, str) else ""
                if problem:
                    within = f"{field_name}: {name!a}" if name else field_name
                    raise EvalError(f"{where}: {within} is not all text ({problem}); write the character itself.")


def _within(where: str, task: str, hidden: FileSet, starter: FileSet, limits: InputConfig) -> None:
    """The limits a user's request meets (``[input]``)."""
    if len(task) > limits.max_task_chars:
        raise EvalError(f"{where}: the task is {len(task):,} characters long; the limit is "
                        f"{limits.max_task_chars:,} (input.max_task_chars).")
    if len(starter) > limits.max_attachments:
        raise EvalError(f"{where}: {len(starter)} starter files; the limit is {limits.max_attachments} "
                        "(input.max_attachments).")
    for kind, files in (("hidden test", hidden), ("starter file", starter)):
        for name, text in files.items():
            size = _size(text)
            if size > limits.max_attachment_bytes:
                raise EvalError(f"{where}: {kind} {name!r} is {size:,} bytes; the limit is "
                                f"{limits.max_attachment_bytes:,} (input.max_attachment_bytes).")


def _room_left(where: str, given: FileSet, max_job_bytes: int) -> None:
    size = sum(_size(text) for text in given.values())
    if size >= max_job_bytes:
        raise EvalError(f"{where}: the hidden tests and starter files are {size:,} bytes, more than the sandbox takes "
                        f"in one job ({max_job_bytes:,} bytes, sandbox.max_upload_bytes), with no room for the code.")


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _text(where: str, record: Mapping[str, Any], name: str) -> str:
    value = record[name]
    if not isinstance(value, str) or not value.strip():
        got = "only blanks" if isinstance(value, str) and value else "an empty string" if value == "" else _kind(value)
        raise EvalError(f"{where}: {name!r} must be a non-empty string, got {got}.")
    return value.strip()


def _language(where: str, name: str, known: Languages) -> str:
    language = known.normalise(name)
    if language not in known:
        raise EvalError(f"{where}: the sandbox has no language {name!r} (it has {', '.join(sorted(known.names))}); "
                        f"add [sandbox.languages.{language}] to config.toml to test in it.")
    return language


def _files(where: str, record: Mapping[str, Any], name: str) -> FileSet:
    value = record[name]
    if not isinstance(value, dict):
        raise EvalError(f"{where}: {name!r} must be an object of file path to file text, got {_kind(value)}.")
    files: dict[str, str] = {}
    for raw, content in value.items():
        try:
            path = project_path(raw)
        except UnsafePath as error:
            raise EvalError(f"{where}: {name}: {error}.") from None
        if not isinstance(content, str):
            raise EvalError(f"{where}: {name}: the text of {raw!r} must be a string, got {_kind(content)}.")
        files[path] = content
    return FileSet(files)


def _task(task: str, language: str, languages: Languages) -> str:
    """The task as the team reads it: a task that does not say its language gets one line that does, so
    the Planner picks the language the hidden tests are written in."""
    described = languages.get(language)
    if described is None or languages.named_in(task) == language:
        return task
    return f"{task}\n\nWrite it in {described.display_name}."


def _test_examples(language: Language | None) -> str:
    """How test files are named, for the language of the task when it says (else the common conventions)."""
    if language and language.test_files:
        return " or ".join(language.test_files)
    return "test_x.py, x_test.go, x.test.js or XTest.java"


def _kind(value: object) -> str:
    names = {str: "a string", int: "a number", float: "a number", bool: "true/false", list: "a list",
             dict: "an object", type(None): "null"}
    return names.get(type(value), type(value).__name__)
