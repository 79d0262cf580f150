"""How a problem is attempted. A mode is data: the workflow it runs and the team settings it changes, so
an ablation of a new team setting is one more entry in ``MODES``."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from agents.manager import TeamSettings
from bot.eval.problems import EvalError


class Workflow(StrEnum):
    SINGLE = "single"  # one Programmer call with the task; its code is scored
    TEAM = "team"  # the Manager's whole workflow, as a user's run


@dataclass(frozen=True)
class Mode:
    name: str
    about: str
    workflow: Workflow
    settings: Mapping[str, Any] = field(default_factory=dict)  # TeamSettings fields this mode sets
    budget: Mapping[str, Any] = field(default_factory=dict)  # Budget fields this mode sets

    def team_settings(self, base: TeamSettings) -> TeamSettings:
        """``base`` (the config's settings) with this mode's changes; check-in is always off in an eval."""
        budget = dataclasses.replace(base.budget, **self.budget)
        return dataclasses.replace(base, budget=budget, check_in=False, **self.settings)


MODES: dict[str, Mode] = {mode.name: mode for mode in (
    Mode("single", "one Programmer call with the task; its code is scored", Workflow.SINGLE),
    Mode("team", "the whole team as a user's run: plan, code, review, its own tests, fixes", Workflow.TEAM),
    Mode("team-no-review", "the team without the Optimizer's review: the code goes straight to the tests",
         Workflow.TEAM, settings={"review": False}),
    Mode("team-1-round", "the team with one round: its code is reviewed and tested once, and not fixed after",
         Workflow.TEAM, budget={"max_rounds": 1}),
)}
DEFAULT_MODES = ("single", "team")


def parse_modes(text: str) -> tuple[Mode, ...]:
    """``single,team`` as modes, in the order given, each once; ``EvalError`` names an unknown one."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise EvalError(f"--modes names no mode; choose from {', '.join(MODES)}.")
    for name in names:
        if name not in MODES:
            raise EvalError(f"Unknown mode {name!r}; the modes are {', '.join(MODES)}.")
    return tuple(MODES[name] for name in dict.fromkeys(names))
