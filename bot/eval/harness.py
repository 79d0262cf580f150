"""Runs an eval: every problem in every mode not yet in the results, a few attempts at once.

Attempts go problem by problem, every mode of one problem before the next, so an eval stopped half-way
still compares its modes on the same problems. Each attempt's line is written as soon as it is scored.
Ctrl-C cancels the attempts under way (their containers are removed, their model streams closed) and
leaves the results file as it stands; an outage (``EvalHalted``) stops the eval the same way.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Sequence

from bot.eval.attempts import Parts, attempt, score
from bot.eval.modes import Mode
from bot.eval.problems import Problem
from bot.eval.progress import Progress
from bot.eval.results import EvalFolder, Result


def still_to_run(problems: Sequence[Problem], modes: Sequence[Mode], done: Sequence[Result]) -> list[tuple[Problem, Mode]]:
    finished = {result.key for result in done}
    return [(problem, mode) for problem in problems for mode in modes if (problem.id, mode.name) not in finished]


async def run_eval(units: Sequence[tuple[Problem, Mode]], parts: Parts, folder: EvalFolder, concurrency: int,
                   progress: Progress, redact: Callable[[str], str] = str) -> None:
    """Attempt and score each unit, appending its result; ``EvalHalted`` when an outage stops it."""
    pending = iter(units)

    async def worker() -> None:
        for problem, mode in pending:  # shared: each unit is taken by one worker
            result = await _one(problem, mode, parts, redact)
            await folder.append(result)
            progress.finished(result)

    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(max(1, min(concurrency, len(units)))):
                group.create_task(worker())
    except ExceptionGroup as failed:
        raise failed.exceptions[0] from None


async def _one(problem: Problem, mode: Mode, parts: Parts, redact: Callable[[str], str]) -> Result:
    tried = await attempt(problem, mode, parts, f"eval-{secrets.token_hex(4)}")
    scored = await score(problem, tried.files, parts.sandbox, parts.clock)
    return Result(
        problem=problem.id, mode=mode.name, passed=scored.passed, score=redact(scored.summary),
        status=tried.status, reason=redact(tried.reason), language=problem.language,
        prompt_tokens=tried.usage.prompt_tokens, completion_tokens=tried.usage.completion_tokens,
        estimated=tried.usage.estimated, cost_usd=tried.usage.cost_usd, model_calls=tried.model_calls,
        wall_s=round(tried.wall_s, 3), score_s=round(scored.duration_s, 3), score_output=redact(scored.output),
        files={path: redact(text) for path, text in tried.files.items()},
    )
