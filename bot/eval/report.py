"""The report of an eval: per mode, pass@1 with its 95% interval and what a problem cost; per pair of
modes, what one solved that the other did not. Built from the results file alone, so a finished, an
interrupted and a resumed eval all report the same way."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import permutations

from bot.eval.results import EvalMeta, Result
from bot.eval.stats import Spread, wilson


@dataclass(frozen=True)
class ModeLine:
    mode: str
    finished: int  # problems attempted and scored in this mode
    passed: int
    low: float  # the 95% Wilson interval of the pass rate
    high: float
    tokens: Spread
    cost: Spread  # US dollars
    calls: Spread
    wall: Spread  # seconds
    errors: int = 0  # attempts that ended in error (they count as not passed)
    estimated: bool = False  # some token counts are estimates

    @property
    def rate(self) -> float:
        return self.passed / self.finished if self.finished else 0.0


@dataclass(frozen=True)
class Difference:
    """Problems ``better`` solved and ``worse`` did not, among those both attempted."""

    better: str
    worse: str
    problems: tuple[str, ...]


@dataclass(frozen=True)
class Report:
    suite: str
    problems: int
    modes: tuple[ModeLine, ...]
    differences: tuple[Difference, ...]
    missing: int = 0  # attempts not run yet (an eval stopped before the end)
    models: dict[str, str] = field(default_factory=dict)

    @property
    def priced(self) -> bool:
        return any(line.cost.mean > 0 for line in self.modes)


def build_report(meta: EvalMeta, results: Sequence[Result]) -> Report:
    ids = set(meta.problems)
    by_mode = {mode: {r.problem: r for r in results if r.mode == mode and r.problem in ids} for mode in meta.modes}
    lines = tuple(_line(mode, list(by_mode[mode].values())) for mode in meta.modes)
    differences = []
    for better, worse in permutations(meta.modes, 2):
        both = [pid for pid in meta.problems if pid in by_mode[better] and pid in by_mode[worse]]
        solved = tuple(pid for pid in both if by_mode[better][pid].passed and not by_mode[worse][pid].passed)
        differences.append(Difference(better, worse, solved))
    missing = len(meta.problems) * len(meta.modes) - sum(line.finished for line in lines)
    return Report(meta.suite, len(meta.problems), lines, tuple(differences), missing, dict(meta.models))


def _line(mode: str, results: list[Result]) -> ModeLine:
    passed = sum(r.passed for r in results)
    low, high = wilson(passed, len(results))
    return ModeLine(
        mode=mode, finished=len(results), passed=passed, low=low, high=high,
        tokens=Spread.of([r.tokens for r in results]), cost=Spread.of([r.cost_usd for r in results]),
        calls=Spread.of([r.model_calls for r in results]), wall=Spread.of([r.wall_s for r in results]),
        errors=sum(r.status == "error" for r in results), estimated=any(r.estimated for r in results),
    )
