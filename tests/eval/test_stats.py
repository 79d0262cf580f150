"""The interval and percentiles the report rests on, against published values."""

import pytest

from bot.eval.stats import Spread, percentile, wilson


@pytest.mark.parametrize(("passed", "trials", "low", "high"), [
    (0, 10, 0.0, 0.2775),  # a rate of 0 still has an upper bound
    (10, 10, 0.7225, 1.0),
    (5, 10, 0.2366, 0.7634),
    (1, 20, 0.0089, 0.2361),
    (81, 263, 0.2553, 0.3662),  # Newcombe (1998), example of the score interval
])
def test_wilson_matches_published_95_percent_intervals(passed, trials, low, high):
    got = wilson(passed, trials)
    assert got == pytest.approx((low, high), abs=5e-4)


def test_no_trials_say_nothing_about_the_rate():
    assert wilson(0, 0) == (0.0, 1.0)


def test_percentiles_are_values_that_occurred():
    values = [float(v) for v in range(1, 11)]
    assert percentile(values, 90) == 9.0 and percentile(values, 50) == 5.0 and percentile(values, 100) == 10.0
    assert percentile([7.0], 90) == 7.0 and percentile([], 90) == 0.0
    assert Spread.of([1, 2, 3, 10]) == Spread(median=2.5, p90=10, mean=4.0)
