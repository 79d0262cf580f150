"""Scripted replies for a whole team run, shared by tests, fakes and benchmarks.

``ScriptedModel`` is an in-process ``ChatModel`` (no HTTP) answering from the same scripts,
for tests of code above the model and for the orchestration benchmarks.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict, deque
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from agents.errors import ModelError, ReplyCut
from agents.types import Message, TestJob, TestReport, TestStatus, Usage

PLAN = "1. Write intf.py with find_intf(obj) walking dicts and lists.\n2. Test nested cases.\nLANGUAGE: python"

CODE = '''Here is the implementation.

```python path=intf.py
def find_intf(obj):
    """All (key, value) pairs whose key is 'intf', at any depth."""
    found = []
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key == "intf":
                found.append((key, value))
            found.extend(find_intf(value))
    elif isinstance(obj, list):
        for item in obj:
            found.extend(find_intf(item))
    return found
```
'''

BUGGY_CODE = CODE.replace("found.extend(find_intf(value))", "pass")

TESTS = '''```python path=test_intf.py
from intf import find_intf

def test_nested():
    assert sorted(find_intf({"a": {"intf": 1}, "intf": 2})) == [("intf", 1), ("intf", 2)]

def test_lists():
    assert find_intf([{"intf": "x"}, {"b": [{"intf": "y"}]}]) == [("intf", "x"), ("intf", "y")]
```
'''

WRONG_TESTS = TESTS.replace('[("intf", "x"), ("intf", "y")]', '[("intf", "x")]')

APPROVE = "The code is correct and handles nesting.\nVERDICT: APPROVE"
CHANGES = "find_intf does not recurse into dict values.\nVERDICT: CHANGES"
FIX_CODE = "The code stops at the first level.\nDECISION: fix_code"
FIX_TESTS = "test_lists expects one match but the task asks for all.\nDECISION: fix_tests"
README = "# find_intf\n\nFinds every `intf` key at any depth.\n\nRun the tests: `pytest`\n"


def happy_path() -> dict[str, list[str]]:
    """Plan, code, approve, tests, check-in: passes in one round."""
    return {"planner": [PLAN], "programmer": [CODE], "optimizer": [APPROVE], "tester": [TESTS], "checkin": [README]}


@dataclass(frozen=True)
class Cut:
    """A scripted reply that stops at its token limit: the text, then ``ReplyCut``."""

    text: str


class ScriptedModel:
    """An in-process ChatModel answering each role from its script (instant unless ``delay`` is set).
    A script item is a reply's text, a ``Cut`` reply, or an exception the call raises before any text.

    A role asked once more than its script says is answered with a ``ModelError`` naming it, so a test cannot
    pass on a reply it never wrote (a canned approval, say). ``fallback`` (a role -> reply table such as
    ``TEAM_DEFAULTS``) answers such calls instead, for tests that mean "and then the usual team"."""

    def __init__(self, script: dict[str, list[Any]] | None = None, delay: float = 0.0, chunk: int = 64,
                 fallback: dict[str, str] | None = None) -> None:
        self.queues: dict[str, deque[Any]] = defaultdict(deque, {k: deque(v) for k, v in (script or {}).items()})
        self.delay, self.chunk, self.fallback = delay, chunk, fallback or {}
        self.calls: list[tuple[str, list[Message]]] = []  # (role, messages) per call, in order
        self.temperatures: list[tuple[str, float | None]] = []  # (role, the call's own temperature or None) per call
        self.chunks_sent = 0

    @property
    def prompts(self) -> list[tuple[str, int]]:
        """(role, prompt characters) per call."""
        return [(role, sum(len(m.content) for m in messages)) for role, messages in self.calls]

    def user_prompt(self, role: str, nth: int = 0) -> str:
        """What the ``nth`` call of ``role`` was asked (its user message)."""
        return [messages for r, messages in self.calls if r == role][nth][1].content

    def model_name(self, role: str) -> str:
        return "scripted"

    async def stream(self, role: str, messages: Sequence[Message],
                     temperature: float | None = None) -> AsyncIterator[str | Usage]:
        prompt_chars = sum(len(m.content) for m in messages)
        self.temperatures.append((role, temperature))
        self.calls.append((role, list(messages)))
        if self.delay:
            await asyncio.sleep(self.delay)
        item = self.queues[role].popleft() if self.queues[role] else self._unscripted(role)
        if isinstance(item, Exception):
            raise item
        text = item.text if isinstance(item, Cut) else item
        for start in range(0, len(text), self.chunk):
            self.chunks_sent += 1
            yield text[start:start + self.chunk]
        if isinstance(item, Cut):
            raise ReplyCut(f"The {role}'s reply reached its limit before it ended.", Usage(prompt_chars // 4, len(text) // 4))
        yield Usage(prompt_chars // 4, len(text) // 4)


    def _unscripted(self, role: str) -> Any:
        if role in self.fallback:
            return self.fallback[role]
        return ModelError(f"the scripted model has nothing scripted for the {role} (call {self._count(role)})")

    def _count(self, role: str) -> int:
        return sum(r == role for r, _ in self.calls)


# The usual team's replies, for a ScriptedModel's ``fallback``: every role answers as on the happy path.
TEAM_DEFAULTS = {"planner": PLAN, "programmer": CODE, "optimizer": APPROVE, "tester": TESTS, "checkin": README,
                 "manager": FIX_CODE}


class ScriptedSandbox:
    """A Sandbox double: decides pass/fail by looking at the files, never executing them."""

    def __init__(self, verdict=None, delay: float = 0.0) -> None:  # type: ignore[no-untyped-def]
        self.jobs: list[TestJob] = []
        self.verdict = verdict or _looks_right
        self.delay = delay

    async def run(self, job: TestJob) -> TestReport:
        self.jobs.append(job)
        if self.delay:
            await asyncio.sleep(self.delay)
        return self.verdict(job)


def _looks_right(job: TestJob) -> TestReport:
    """Passes when the code recurses and the tests expect every match (mirrors what pytest would say)."""
    code_ok = "found.extend(find_intf(value))" in job.files.get("intf.py", "")
    tests_ok = '[("intf", "x"), ("intf", "y")]' in job.files.get("test_intf.py", "")
    if code_ok and tests_ok:
        return TestReport(TestStatus.PASSED, 0, 0.1, 2, 0, "2 passed in 0.01s")
    failing = "test_nested" if not code_ok else "test_lists"
    return TestReport(TestStatus.FAILED, 1, 0.1, 1, 1, f"FAILED test_intf.py::{failing} - AssertionError\n1 failed, 1 passed")
