"""The few statistics a report needs."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

Z95 = 1.959963984540054  # the standard normal quantile of 97.5%


def wilson(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a pass rate (95% by default). Unlike the plain p ± z·se it stays inside
    [0, 1] and is honest for small samples and for rates near 0 or 1, which evals of 20 problems have."""
    if trials <= 0:
        return 0.0, 1.0
    p = successes / trials
    z2 = z * z
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = z / (1 + z2 / trials) * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials))
    return max(0.0, centre - half), min(1.0, centre + half)


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank percentile: a value that occurred, at or above ``q`` percent of them."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


@dataclass(frozen=True)
class Spread:
    """Median, 90th percentile and mean of a per-problem figure."""

    median: float = 0.0
    p90: float = 0.0
    mean: float = 0.0

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        if not values:
            return cls()
        return cls(float(statistics.median(values)), float(percentile(values, 90)), float(statistics.fmean(values)))
