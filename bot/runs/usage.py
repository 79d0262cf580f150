"""A run's usage and cost, computed once, in the core, and carried on the events.

Every event of a run passes through its ``RunUsage`` before any sink sees it: a finished turn gets its
cost at the configured ``[prices]`` of its model, and the final event (the Manager's own, or the one the
runner writes when a run is stopped or breaks) gets the run's totals. The store records and the
renderers show what the events carry, so every final reply, stopped and failed runs included, shows the
run's real figures.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from agents.events import RunFinished, TurnFinished
from agents.types import Usage
from bot.config.sections import Price
from bot.runs.runner import E


def priced(usage: Usage, price: Price | None) -> Usage:
    """``usage`` with its cost at ``price`` (dollars per million tokens); free when no price is set."""
    if price is None:
        return dataclasses.replace(usage, cost_usd=0.0)
    cost = (usage.prompt_tokens * price.input_per_million + usage.completion_tokens * price.output_per_million) / 1e6
    return dataclasses.replace(usage, cost_usd=cost)


class RunUsage:
    """The usage of one run so far; call it on each event to get the event as sinks should see it."""

    def __init__(self, prices: Mapping[str, Price]) -> None:
        self._prices = prices
        self.total = Usage()

    def __call__(self, event: E) -> E:
        """``bot.runs.runner.Stamp``: the event with what this run's usage adds to it."""
        if isinstance(event, TurnFinished):
            usage = priced(event.usage, self._prices.get(event.model))
            self.total += usage
            return dataclasses.replace(event, usage=usage)
        if isinstance(event, RunFinished):
            return dataclasses.replace(event, usage=self.total)
        return event
