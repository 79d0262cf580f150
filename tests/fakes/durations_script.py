"""A realistic scripted run, for the benchmarks and for tests of prompt economy: a small module and its tests.

The task: parse and format durations such as "1h 30m". The replies are what a capable chat model writes
for it, mostly code: a plan of about 1,200 characters, a Programmer's reply of one sentence and a whole
module of about 60 lines, a Tester's reply of about 15 pytest tests, reviews and triage of two or three
sentences with their verdict or decision line, and a short README. ``fix_rounds(n)`` makes the code wrong
``n`` times (a different slip each round) before it is right, so the tests fail ``n`` times, then pass.
"""

from __future__ import annotations

import difflib
import itertools

TASK = ("Write a Python module durations.py with parse_duration(text) that turns strings such as '1h 30m', "
        "'90s' or '2d4h' into seconds, and format_duration(seconds) that turns seconds back into that form. "
        "Reject bad input with ValueError.")

PLAN = """Files: durations.py (the module) and test_durations.py (pytest).

1. `parse_duration(text: str) -> int`
   - Accept one or more `<number><unit>` parts, units d (86400 s), h (3600), m (60), s (1), case-insensitive.
   - Parts may be separated by spaces or written together: "1h 30m", "1h30m", "2d4h".
   - Each unit at most once, largest first; "30m 1h" is an error.
   - Leading and trailing whitespace is ignored; an empty or blank string is an error.
   - Numbers are whole and non-negative; a sign, a decimal point or a missing unit is an error.
   - Return the total in seconds as an int.
   - Raise ValueError with a message that quotes the input for anything else.
2. `format_duration(seconds: int) -> str`
   - The inverse: "1h 30m" for 5400, "0s" for 0, parts joined by one space, zero parts left out.
   - Reject negative numbers and non-integers (bool included) with ValueError / TypeError.
3. Tests: round trips, each unit alone, combined forms with and without spaces, case, whitespace, every
   error case above, and format_duration(0).

Edge cases to keep in mind: "0s" parses to 0; "1d0h" is allowed; very large numbers stay exact ints.
LANGUAGE: python"""

CODE = '''"""Durations written as "1h 30m": parsing to seconds and back."""

import re

UNITS = {"d": 86_400, "h": 3_600, "m": 60, "s": 1}
ORDER = "dhms"
_PART = re.compile(r"(\\d+)\\s*([a-z])", re.IGNORECASE)


def parse_duration(text: str) -> int:
    """Seconds in a duration such as "1h 30m", "90s" or "2d4h"."""
    if not isinstance(text, str):
        raise TypeError(f"expected a string, got {type(text).__name__}")
    body = text.strip()
    if not body:
        raise ValueError(f"empty duration: {text!r}")
    total, position, last = 0, 0, -1
    for match in _PART.finditer(body):
        gap = body[position:match.start()]
        if gap.strip():
            raise ValueError(f"not a duration: {text!r}")
        unit = match.group(2).lower()
        if unit not in UNITS:
            raise ValueError(f"unknown unit {unit!r} in {text!r}")
        rank = ORDER.index(unit)
        if rank <= last:
            raise ValueError(f"units out of order or repeated in {text!r}")
        last = rank
        total += int(match.group(1)) * UNITS[unit]
        position = match.end()
    if position != len(body) or last < 0:
        raise ValueError(f"not a duration: {text!r}")
    return total


def format_duration(seconds: int) -> str:
    """The shortest "1h 30m" form of a whole number of seconds."""
    if isinstance(seconds, bool) or not isinstance(seconds, int):
        raise TypeError(f"expected an int, got {type(seconds).__name__}")
    if seconds < 0:
        raise ValueError(f"negative duration: {seconds}")
    parts = []
    for unit in ORDER:
        count, seconds = divmod(seconds, UNITS[unit])
        if count:
            parts.append(f"{count}{unit}")
    return " ".join(parts) or "0s"
'''

TESTS = '''import pytest

from durations import format_duration, parse_duration


@pytest.mark.parametrize("text, seconds", [
    ("90s", 90), ("5m", 300), ("2h", 7200), ("1d", 86400), ("0s", 0),
])
def test_each_unit_alone(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["1h 30m", "1h30m", "1H30M", "  1h 30m  ", "1h   30m"])
def test_combined_forms(text):
    assert parse_duration(text) == 5400


def test_days_and_hours_together():
    assert parse_duration("2d4h") == 2 * 86400 + 4 * 3600


def test_large_numbers_stay_exact():
    assert parse_duration("100000000000d") == 100000000000 * 86400


@pytest.mark.parametrize("text", ["", "   ", "90", "1x", "-5m", "1.5h", "30m 1h", "1h 1h", "h", "1h and 5m", "1h30"])
def test_bad_input_is_rejected(text):
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize("seconds, text", [(5400, "1h 30m"), (0, "0s"), (86401, "1d 1s"), (59, "59s")])
def test_format(seconds, text):
    assert format_duration(seconds) == text


@pytest.mark.parametrize("seconds", [0, 1, 59, 60, 3599, 3600, 86399, 90061, 10**9])
def test_round_trip(seconds):
    assert parse_duration(format_duration(seconds)) == seconds


def test_format_rejects_negative_numbers():
    with pytest.raises(ValueError):
        format_duration(-1)


@pytest.mark.parametrize("value", [1.5, "60", True, None])
def test_format_rejects_what_is_no_int(value):
    with pytest.raises(TypeError):
        format_duration(value)
'''

# Five different slips, one per round (each fails some of the tests above).
SLIPS = [
    ('UNITS = {"d": 86_400, "h": 3_600, "m": 60, "s": 1}', 'UNITS = {"d": 86_400, "h": 3_600, "m": 6, "s": 1}'),
    ("if rank <= last:", "if rank < last:"),
    ('return " ".join(parts) or "0s"', 'return " ".join(parts)'),
    ("if isinstance(seconds, bool) or not isinstance(seconds, int):", "if not isinstance(seconds, int):"),
    ("if position != len(body) or last < 0:", "if last < 0:"),
]

REVIEWS_OF_SLIPS = [
    "The parsing loop checks order and gaps correctly, and format_duration leaves zero parts out. Error "
    "messages quote the input as the plan asks.\nVERDICT: APPROVE",
] * 5
APPROVE = ("parse_duration rejects gaps, repeats and unknown units, and format_duration is its inverse; the "
           "type checks cover bool. Nothing to change.\nVERDICT: APPROVE")

TRIAGE = [
    "test_each_unit_alone and the round trips fail on minutes: the code multiplies minutes by 6, not 60. "
    "The tests expect what the task asks.\nDECISION: fix_code",
    "'1h 1h' is accepted: a repeated unit passes the order check because it compares with <. The test is "
    "right; the code must refuse a unit that is not strictly after the previous one.\nDECISION: fix_code",
    "format_duration(0) returns an empty string; the plan says '0s'. The code is wrong.\nDECISION: fix_code",
    "format_duration(True) returns '1s' instead of raising TypeError: bool is an int subclass and the "
    "code no longer excludes it. Fix the code.\nDECISION: fix_code",
    "Trailing text after the last part ('1h and 5m' fails differently, '90' is read as no part) is no "
    "longer rejected because the code stopped checking that the whole string was consumed.\nDECISION: fix_code",
]

README = """# durations

`parse_duration("1h 30m")` gives 5400 seconds; `format_duration(5400)` gives `"1h 30m"`. Units are days
(`d`), hours (`h`), minutes (`m`) and seconds (`s`), largest first, with or without spaces. Anything else
raises `ValueError` (or `TypeError` for a value that is no string or int).

## Use it

```python
from durations import format_duration, parse_duration
```

## Run the tests

```
pip install pytest
pytest -q
```
"""


def code_reply(code: str, note: str) -> str:
    return f"{note}\n\n```python path=durations.py\n{code}```\n"


def wrong_code(round_index: int) -> str:
    old, new = SLIPS[round_index % len(SLIPS)]
    assert old in CODE, old
    return CODE.replace(old, new)


def diff_reply(before: str, after: str, note: str) -> str:
    """A fix written as a model asked for a diff writes it: a unified diff with three lines of context."""
    diff = "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        "a/durations.py", "b/durations.py"))
    return f"{note}\n\n```diff\n{diff}```\n"


# A diff made against a version the team never had (its context names a line the module does not hold).
STALE_DIFF = diff_reply(CODE.replace("import re\n", "import re\nimport sys\n"), CODE, "Fixed the failing case.")


def fix_rounds(rounds: int, diffs: bool = False, failed_diff: bool = False) -> dict[str, list[str]]:
    """The whole run's replies per role: the code wrong ``rounds`` times, then right. With ``diffs`` every fix
    after the first version is a diff of the version before (``[team] fix_replies = "diff"``). With
    ``failed_diff`` the first fix is a diff that does not apply, and it and every fix after it come whole when
    asked again (a model that cannot write diffs, under ``fix_replies = "auto"``)."""
    versions = [wrong_code(i) for i in range(rounds)] + [CODE]
    programmer = [code_reply(versions[0], "Here is durations.py.")]
    for before, after in itertools.pairwise(versions):
        note = "Fixed the failing case."
        if failed_diff and len(programmer) == 1:
            programmer.append(STALE_DIFF)
        programmer.append(diff_reply(before, after, note) if diffs else code_reply(after, note))
    return {
        "planner": [PLAN],
        "programmer": programmer,
        "optimizer": [REVIEWS_OF_SLIPS[i % len(REVIEWS_OF_SLIPS)] for i in range(rounds)] + [APPROVE],
        "tester": [f"```python path=test_durations.py\n{TESTS}```\n"],
        "manager": [TRIAGE[i % len(TRIAGE)] for i in range(rounds)],
        "checkin": [README],
    }
