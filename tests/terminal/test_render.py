"""The terminal's drawing of a run's turns."""

from __future__ import annotations

import io

from adapters.terminal.render import Renderer
from agents.events import TextDelta, TurnFinished, TurnStarted
from agents.types import Usage


async def test_a_turn_the_runs_end_cut_short_says_so_under_its_text():
    out = io.StringIO()
    renderer = Renderer(out, color=False)
    await renderer(TurnStarted("r1", "planner", 1))
    await renderer(TextDelta("r1", "planner", "Reading the task closely.\nNow the"))
    await renderer(TurnFinished("r1", "planner", 1, "Reading the task closely.\nNow the",
                                usage=Usage(120, 8, estimated=True), duration_s=2.0, cut_short=True))
    await renderer(TurnStarted("r1", "programmer", 1))
    await renderer(TurnFinished("r1", "programmer", 1, "done", usage=Usage(10, 2), duration_s=1.0))
    lines = out.getvalue().splitlines()
    planner_footer = lines[lines.index("Now the") + 1]
    assert "cut short" in planner_footer, out.getvalue()
    assert "cut short" not in lines[-1], out.getvalue()
