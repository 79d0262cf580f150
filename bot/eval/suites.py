"""Which suite a name means: ``humaneval``, or the path of a JSONL file of tasks."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agents.language import Languages
from bot.config.sections import InputConfig
from bot.eval.humaneval import NAME as HUMANEVAL
from bot.eval.humaneval import read_humaneval
from bot.eval.jsonl_suite import read_jsonl_suite
from bot.eval.problems import EvalError, Suite


async def load_suite(name: str, languages: Languages, limits: InputConfig | None = None,
                     max_job_bytes: int | None = None) -> Suite:
    """The suite ``name`` means, read in a worker thread; ``EvalError`` when it cannot be used. A JSONL suite's
    tasks must also be within ``limits`` (a user's request's) and leave room in a sandbox job of ``max_job_bytes``."""
    if name.strip().lower() == HUMANEVAL:
        suite = await asyncio.to_thread(read_humaneval)
    else:
        suite = await asyncio.to_thread(read_jsonl_suite, Path(name), languages, limits, max_job_bytes)
    missing = sorted(suite.languages - languages.names)
    if missing:
        raise EvalError(f"The suite needs the language {missing[0]!r}, which the sandbox does not have.")
    return suite
