"""Splitting long chat messages without breaking code fences; the final summary's words."""

import re

import pytest

from agents.events import RunFinished
from agents.fences import FENCE_LINE
from agents.types import CheckInResult, RunStatus, TestReport, TestStatus, Usage
from bot.chat.split import split_message
from bot.chat.words import final_summary


def fences_balanced(piece: str) -> bool:
    return len(re.findall(r"^```", piece, re.M)) % 2 == 0


@pytest.mark.parametrize("limit", [100, 2000, 3500])
def test_every_piece_fits_and_keeps_fences_balanced(limit):
    code = "\n".join(f"    value_{i} = compute({i})  # some comment" for i in range(400))
    text = f"Here is the module.\n\n```python path=big.py\n{code}\n```\n\nAnd a closing remark."
    pieces = split_message(text, limit)
    assert len(pieces) > 1 or len(text) <= limit
    assert all(len(p) <= limit for p in pieces)
    assert all(fences_balanced(p) for p in pieces)
    assert all(p.startswith("```python path=big.py") for p in pieces[1:-1])  # reopened with the language


def test_the_text_survives_splitting():
    lines = [f"line {i}" for i in range(500)]
    text = "\n".join(lines)
    joined = "\n".join(split_message(text, 300))
    assert joined.split("\n") == lines


def test_short_text_is_one_piece():
    assert split_message("hello\n```py\nx\n```", 2000) == ["hello\n```py\nx\n```"]


def test_a_single_long_line_is_cut():
    pieces = split_message("a" * 5000, 2000)
    assert all(len(p) <= 2000 for p in pieces) and "".join(pieces) == "a" * 5000


def test_an_unterminated_block_is_closed():
    pieces = split_message("```js\nconsole.log(1)", 2000)
    assert pieces == ["```js\nconsole.log(1)\n```"]


def test_final_summary_says_status_tests_tokens_and_link():
    event = RunFinished("r1", status=RunStatus.PASSED, reason="tests passed and the review approved",
                        report=TestReport(TestStatus.PASSED, 0, 1.25, 12, 0), usage=Usage(1200, 340, 0.0123),
                        checkin=CheckInResult("https://gist.github.com/abc", "gist"))
    text = final_summary(event)
    assert text.splitlines() == [
        "Passed: tests passed and the review approved.", "Tests: 12 passed, 0 failed (1.2s)",
        "Result: https://gist.github.com/abc", "Tokens: 1,200 in / 340 out (about $0.0123)",
    ]


LONG_INFO = "python path=src/" + "deeply/nested/" * 6 + "module.py"


def without_fences(text: str) -> str:
    """The text with fence lines and line breaks taken out: what splitting must keep, in order."""
    return "".join(line for line in text.splitlines() if not FENCE_LINE.match(line))


@pytest.mark.parametrize("info", ["", "python", LONG_INFO])
@pytest.mark.parametrize("line_length", [1990, 1999, 2000, 2001, 4500])
def test_long_lines_inside_a_fence_fit_with_the_fences_around_them(info, line_length):
    text = f"Intro\n```{info}\nshort = 1\n{'x' * line_length}\n{'y' * (line_length // 2)}\nend = 2\n```\nOutro"
    pieces = split_message(text, 2000)
    assert all(len(p) <= 2000 for p in pieces), [len(p) for p in pieces]
    assert all(fences_balanced(p) for p in pieces)
    assert not any(re.fullmatch(r"```[^\n]*\n```", p) for p in pieces)  # no piece is an empty block
    assert without_fences("\n".join(pieces)) == without_fences(text)


def test_an_info_string_too_long_to_repeat_is_reopened_with_its_language_only():
    info = "python " + "x" * 900
    pieces = split_message(f"```{info}\n" + "value = 1\n" * 400 + "```", 2000)
    assert all(len(p) <= 2000 for p in pieces) and all(fences_balanced(p) for p in pieces)
    assert all(p.startswith("```python\n") for p in pieces[1:])


def test_a_closing_fence_that_does_not_fit_is_not_reopened_just_to_close():
    body = "z" * 1991
    assert split_message(f"```\n{body}\n`````", 2000) == [f"```\n{body}\n```"]
