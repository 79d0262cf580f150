"""Suites whose answers the scripted model server knows, for the eval's tests and benchmark.

Each problem asks for ``scale(x) = x * k`` in a file of its own. How the scripted model answers a
problem's Programmer prompt depends on the problem's kind:

- ``ONE_SHOT``: right at once;
- ``AFTER_FAILURE``: wrong (``x + k``) until the prompt shows a failing test run, then right;
- ``NEVER``: always wrong.

The Planner plans, the Optimizer approves, the Tester writes a test that catches ``x + k``, the Manager
sends failures back to the code. Every reply reports the same usage, so token counts are the same in
every run. Each problem's hidden test carries a marker no prompt may ever contain.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from agents.types import Message, TestJob, TestReport, TestStatus, Usage
from tests.fakes.openai_server import FakeOpenAI, Recorded, Reply

USAGE = (120, 30)  # prompt and completion tokens reported for every reply


class Kind(Enum):
    ONE_SHOT = "one-shot"
    AFTER_FAILURE = "after-failure"
    NEVER = "never"


@dataclass(frozen=True)
class Spec:
    number: int
    kind: Kind
    language: str = "python"

    @property
    def id(self) -> str:
        return f"{self.language}-{self.number}-{self.kind.value}"

    @property
    def k(self) -> int:
        return self.number + 2

    @property
    def marker(self) -> str:
        return f"HIDDEN-CHECK-{self.language.upper()}-{self.number}"

    @property
    def code_file(self) -> str:
        return _LANG[self.language]["code"].format(n=self.number)

    def task(self) -> str:
        return (f"Write scale(x) in {self.code_file}, returning x times {self.k}, for whole numbers x. "
                f"Write it in {_LANG[self.language]['name']}.")

    def code(self, right: bool) -> str:
        expression = f"x * {self.k}" if right else f"x + {self.k}"
        return _LANG[self.language]["body"].format(n=self.number, e=expression)

    def team_test(self) -> tuple[str, str]:
        spec = _LANG[self.language]
        return spec["team_test"].format(n=self.number), spec["test_body"].format(n=self.number, x=3, want=3 * self.k,
                                                                                  name="Team", note="team")

    def hidden_tests(self) -> dict[str, str]:
        spec = _LANG[self.language]
        body = spec["test_body"].format(n=self.number, x=5, want=5 * self.k, name="Hidden", note=self.marker)
        return {spec["hidden_test"].format(n=self.number): body}

    def line(self) -> str:
        return json.dumps({"id": self.id, "language": self.language, "task": self.task(),
                           "hidden_tests": self.hidden_tests()})


_LANG: dict[str, dict[str, str]] = {
    "python": {
        "name": "Python", "code": "mod{n}.py", "team_test": "test_mod{n}.py", "hidden_test": "test_secret_{n}.py",
        "body": "def scale(x):\n    return {e}\n",
        "test_body": "# {note}\nfrom mod{n} import scale\n\n\ndef test_{name}():\n    assert scale({x}) == {want}\n",
    },
    "javascript": {
        "name": "JavaScript", "code": "mod{n}.js", "team_test": "mod{n}.test.js", "hidden_test": "secret{n}.test.js",
        "body": "function scale(x) {{\n  return {e};\n}}\nmodule.exports = {{ scale }};\n",
        "test_body": ("// {note}\nconst test = require('node:test');\nconst assert = require('node:assert');\n"
                      "const {{ scale }} = require('./mod{n}.js');\n\n"
                      "test('{name}', () => {{\n  assert.strictEqual(scale({x}), {want});\n}});\n"),
    },
    "go": {
        "name": "Go", "code": "mod{n}.go", "team_test": "mod{n}_test.go", "hidden_test": "secret{n}_test.go",
        "body": "package scale\n\nfunc Scale(x int) int {{\n\treturn {e}\n}}\n",
        "test_body": ("// {note}\npackage scale\n\nimport \"testing\"\n\n"
                      "func Test{name}{n}(t *testing.T) {{\n\tif got := Scale({x}); got != {want} {{\n"
                      "\t\tt.Fatalf(\"Scale({x}) = %d, want {want}\", got)\n\t}}\n}}\n"),
    },
}
_FENCE = {"python": "python", "javascript": "javascript", "go": "go"}


def write_suite(path: Path, specs: list[Spec]) -> Path:
    path.write_text("".join(spec.line() + "\n" for spec in specs), encoding="utf-8")
    return path


class ScriptedTeam:
    """A responder for ``FakeOpenAI`` that answers every role for the problems of ``specs``."""

    def __init__(self, specs: list[Spec]) -> None:
        self.by_file = {spec.code_file: spec for spec in specs}
        self.stall_once: set[str] = set()  # problem ids whose first Planner call stalls (until the client hangs up)

    def install(self, server: FakeOpenAI) -> None:
        server.responder = self

    def __call__(self, recorded: Recorded) -> Reply:
        prompt = recorded.body["messages"][-1]["content"]
        role = recorded.agent
        spec = self._spec(prompt)
        if role == "planner" and spec.id in self.stall_once:
            self.stall_once.discard(spec.id)
            return Reply("Planning this carefully", chunk=4, stall_after=8, usage=USAGE)
        return Reply(self.answer(role, prompt), usage=USAGE)

    def answer(self, role: str, prompt: str) -> str:
        return self._text(role, self._spec(prompt), prompt)

    def _spec(self, prompt: str) -> Spec:
        for name in re.findall(r"mod\d+\.\w+", prompt):
            if name in self.by_file:
                return self.by_file[name]
        raise AssertionError(f"no scripted problem in this prompt: {prompt[:200]!r}")

    def _text(self, role: str, spec: Spec, prompt: str) -> str:
        fence = _FENCE[spec.language]
        if role == "planner":
            return f"1. Write scale in {spec.code_file}.\n2. Test it.\nLANGUAGE: {spec.language}"
        if role == "programmer":
            failing = "## Latest test run:" in prompt
            right = spec.kind is Kind.ONE_SHOT or (spec.kind is Kind.AFTER_FAILURE and failing)
            return f"```{fence} path={spec.code_file}\n{spec.code(right)}```\n"
        if role == "optimizer":
            return "The code does what the task asks.\nVERDICT: APPROVE"
        if role == "tester":
            name, body = spec.team_test()
            return f"```{fence} path={name}\n{body}```\n"
        if role == "manager":
            return "scale adds instead of multiplying.\nDECISION: fix_code"
        raise AssertionError(f"the eval must not ask the {role}")


class ScriptedEvalModel:
    """The same answers from an in-process ``ChatModel`` (no HTTP), each after ``delay`` seconds: for the
    benchmark, which measures the eval's own time around a model of known speed."""

    def __init__(self, team: ScriptedTeam, delay: float = 0.0) -> None:
        self.team, self.delay = team, delay
        self.calls = 0

    def model_name(self, role: str) -> str:
        return "scripted"

    async def stream(self, role: str, messages: Sequence[Message],
                     temperature: float | None = None) -> AsyncIterator[str | Usage]:
        self.calls += 1
        if self.delay:
            await asyncio.sleep(self.delay)
        yield self.team.answer(role, messages[-1].content)
        yield Usage(*USAGE)


class ContentSandbox:
    """A Sandbox double for the benchmark: passes a job whose code multiplies, without running anything."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.jobs = 0

    async def run(self, job: TestJob) -> TestReport:
        self.jobs += 1
        if self.delay:
            await asyncio.sleep(self.delay)
        code = [text for path, text in job.files.items() if "mod" in path and "test" not in path and "secret" not in path]
        if code and all(" * " in text for text in code):
            return TestReport(TestStatus.PASSED, 0, self.delay, 1, 0, "1 passed")
        return TestReport(TestStatus.FAILED, 1, self.delay, 0, 1, "FAILED test_mod.py::test_Team - assert 6 == 9")
