"""Runs one blocking PyGithub call in a worker thread, retrying what ``faults.judge`` calls transient.

PyGithub's own retrying is switched off (see ``gist.github_client``): it sleeps inside the worker thread,
where a wait cannot be capped per call, logged as ours, or turned into a clear reason to fall back.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from agents.errors import CheckInError
from bot.checkin.faults import SCOPE_HINT, CallFailure, judge
from bot.config.sections import CheckinConfig

T = TypeVar("T")
log = logging.getLogger(__name__)

Sleep = Callable[[float], Awaitable[None]]
Redact = Callable[[str], str]


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int
    backoff_s: float
    max_wait_s: float
    api_url: str
    subject: str = "the Gist"  # what the calls publish, for the sentence when they fail
    hint: str = SCOPE_HINT  # what the token needs for them

    @classmethod
    def from_config(cls, config: CheckinConfig) -> RetryPolicy:
        return cls(config.max_retries, config.backoff_s, config.max_wait_s, config.github_api_url)


async def call_github(
    call: Callable[[], T], policy: RetryPolicy, redact: Redact, sleep: Sleep = asyncio.sleep
) -> T:
    """``call()``'s result; a ``CheckInError`` (its text passed through ``redact``) once it cannot succeed."""
    attempt = 0
    while True:
        try:
            return await asyncio.to_thread(call)
        except CallFailure as error:
            verdict = judge(error, attempt, policy.backoff_s, policy.max_wait_s, policy.api_url, policy.subject,
                            policy.hint)
        if isinstance(verdict, CheckInError):
            raise CheckInError(redact(str(verdict)))
        if attempt >= policy.max_retries:
            raise CheckInError(redact(verdict.give_up))
        attempt += 1
        log.warning(
            "%s; retry %d of %d in %.1fs", redact(verdict.reason), attempt, policy.max_retries, verdict.wait_s
        )
        await sleep(verdict.wait_s)
