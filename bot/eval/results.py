"""An eval's folder: ``eval.json`` says what is measured, ``results.jsonl`` holds one line per problem and mode.

A line is appended (one write, flushed and synced) only when an attempt is scored, so whatever stops the
eval (Ctrl-C, a crash, a reboot) leaves every finished attempt on disk and nothing half-done; ``--resume``
runs the rest. A line cut off by a crash mid-write is skipped when read, and that attempt runs again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.eval.problems import EvalError

RESULTS_FILE = "results.jsonl"
META_FILE = "eval.json"


@dataclass(frozen=True)
class Result:
    """One problem attempted in one mode, and scored."""

    problem: str
    mode: str
    passed: bool  # the hidden tests passed
    score: str  # what the hidden tests said: "3 passed, 0 failed", "no code to test"...
    status: str  # how the attempt itself ended: passed, failed, stopped, error (team); answered, error (single)
    reason: str = ""
    language: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False  # token counts estimated from text: the server reported none
    cost_usd: float = 0.0
    model_calls: int = 0
    wall_s: float = 0.0  # the attempt, from the first model call to its final code
    score_s: float = 0.0  # the hidden tests' run in the sandbox
    score_output: str = ""  # the end of the hidden tests' output, when they did not pass
    files: dict[str, str] = field(default_factory=dict)  # the code that was scored

    @property
    def key(self) -> tuple[str, str]:
        return self.problem, self.mode

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def line(self) -> str:
        return json.dumps(dataclasses.asdict(self), ensure_ascii=False) + "\n"

    @classmethod
    def of(cls, record: dict[str, Any]) -> Result:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in record.items() if k in names})


@dataclass(frozen=True)
class EvalMeta:
    """What an eval measures, kept so ``--resume`` and ``--report`` need nothing else."""

    suite: str
    modes: tuple[str, ...]
    problems: tuple[str, ...]  # ids, in the order they run
    limit: int | None = None
    models: dict[str, str] = field(default_factory=dict)  # role -> model
    started: str = ""

    def json(self) -> str:
        return json.dumps({**dataclasses.asdict(self), "modes": list(self.modes), "problems": list(self.problems)},
                          indent=1) + "\n"


class EvalFolder:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.results_path = path / RESULTS_FILE
        self.meta_path = path / META_FILE
        self._lock = asyncio.Lock()

    def exists(self) -> bool:
        return self.meta_path.exists()

    def read_meta(self) -> EvalMeta:
        try:
            record = json.loads(self.meta_path.read_text(encoding="utf-8"))
            return EvalMeta(record["suite"], tuple(record["modes"]), tuple(record["problems"]), record.get("limit"),
                            dict(record.get("models", {})), record.get("started", ""))
        except FileNotFoundError:
            raise EvalError(f"{self.path} holds no eval ({META_FILE} is missing): name the folder an eval wrote "
                            "with --out.") from None
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise EvalError(f"{self.meta_path} cannot be read ({error}); it is not an eval this version wrote.") from None

    def write_meta(self, meta: EvalMeta) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        temporary = self.meta_path.with_suffix(".tmp")
        temporary.write_text(meta.json(), encoding="utf-8")
        os.replace(temporary, self.meta_path)

    def read_results(self) -> list[Result]:
        """Every whole line, first one per problem and mode; a torn or foreign line is skipped."""
        try:
            text = self.results_path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return []
        results: dict[tuple[str, str], Result] = {}
        for line in text.splitlines():
            try:
                result = Result.of(json.loads(line))
            except (ValueError, TypeError):
                continue
            results.setdefault(result.key, result)
        return list(results.values())

    async def append(self, result: Result) -> None:
        """Add one line, on disk before this returns; lines never interleave."""
        async with self._lock:
            await asyncio.to_thread(self._append, result.line())

    def _append(self, line: str) -> None:
        with open(self.results_path, "a+b") as out:
            if out.tell() > 0:
                out.seek(-1, os.SEEK_END)
                if out.read(1) != b"\n":  # a line a crash cut off: it stays alone on its line, and is skipped
                    line = "\n" + line
            out.write(line.encode("utf-8"))
            out.flush()
            os.fsync(out.fileno())
