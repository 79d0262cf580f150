"""What a failed GitHub call means: wait and try again, or give up with one sentence for a person.

Kept apart from the calls themselves so the rules (which statuses are transient, which headers say how long
to wait, which message names the missing scope) read in one place.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

import requests
from github.GithubException import GithubException

from agents.errors import CheckInError
from bot.model.retry_after import retry_after_seconds

SCOPE_HINT = (
    "GITHUB_TOKEN needs the gist scope (classic token) or the Gists read and write permission "
    "(fine-grained token)"
)
RATE_LIMIT_STATUSES = (403, 429)
# Added to a rate-limit reset time, because GitHub's clock and ours differ by a little.
CLOCK_SKEW_S = 1.0

# The failures a retry can cure; anything else is a bug of ours and should surface as one.
CallFailure = (GithubException, requests.RequestException)


@dataclass(frozen=True)
class Transient:
    """Worth another try after ``wait_s``; ``give_up`` is the sentence to use when tries run out."""

    wait_s: float
    reason: str
    give_up: str


def judge(error: Exception, attempt: int, backoff_s: float, max_wait_s: float, api_url: str,
          subject: str = "the Gist", hint: str = SCOPE_HINT) -> Transient | CheckInError:
    """Whether ``error`` (the ``attempt``-th failure, from 0) is worth waiting out, and for how long. ``subject``
    names what was being published, ``hint`` what the token needs for it."""
    if isinstance(error, requests.RequestException):
        backoff = _backoff(attempt, backoff_s, max_wait_s)
        if isinstance(error, requests.Timeout):
            why = f"GitHub at {api_url} did not answer in time"
        else:
            why = f"GitHub is unreachable at {api_url} ({type(error).__name__})"
        return Transient(backoff, why, f"{why}, even after retrying")
    assert isinstance(error, GithubException)
    return _judge_status(error.status, _lower(error.headers), _message(error), attempt, backoff_s, max_wait_s,
                         subject, hint)


def _judge_status(
    status: int, headers: Mapping[str, str], message: str, attempt: int, backoff_s: float, max_wait_s: float,
    subject: str = "the Gist", hint: str = SCOPE_HINT,
) -> Transient | CheckInError:
    if status == 401:
        return CheckInError(f"GitHub rejected GITHUB_TOKEN as bad credentials (wrong, expired or revoked): {hint}")
    if status in RATE_LIMIT_STATUSES and _rate_limited(headers, message):
        return _rate_limit(headers, attempt, backoff_s, max_wait_s)
    if status in (403, 404):
        # GitHub answers 404 rather than 403 when a classic token lacks the scope, to hide what exists.
        return CheckInError(f"GitHub refused {subject} ({status} {message or 'Forbidden'}): {hint}")
    if status >= 500:
        wait = retry_after_seconds(headers) or _backoff(attempt, backoff_s, max_wait_s)
        why = f"GitHub answered {status} {message}".rstrip()
        return Transient(min(wait, max_wait_s), why, f"{why}, even after retrying")
    return CheckInError(f"GitHub refused {subject} ({status} {message or 'no reason given'})")


def _rate_limit(headers: Mapping[str, str], attempt: int, backoff_s: float, max_wait_s: float) -> Transient | CheckInError:
    """Wait as GitHub asks (``retry-after``, else until ``x-ratelimit-reset``), unless that is too long."""
    wait = retry_after_seconds(headers)
    reset = _float(headers.get("x-ratelimit-reset"))
    if wait is None and reset is not None and headers.get("x-ratelimit-remaining") == "0":
        wait = max(0.0, reset - time.time()) + CLOCK_SKEW_S
    if wait is None:
        wait = _backoff(attempt, backoff_s, max_wait_s)
    if wait > max_wait_s:
        until = datetime.fromtimestamp(time.time() + wait, UTC).strftime("%H:%M UTC")
        return CheckInError(f"GitHub's rate limit for GITHUB_TOKEN is used up until about {until}")
    why = "GitHub's rate limit was hit"
    return Transient(wait, why, f"{why} again after waiting")


def _rate_limited(headers: Mapping[str, str], message: str) -> bool:
    return (
        headers.get("x-ratelimit-remaining") == "0"
        or "retry-after" in headers
        or "rate limit" in message.lower()
    )


def _backoff(attempt: int, backoff_s: float, max_wait_s: float) -> float:
    return float(min(backoff_s * 2**attempt, max_wait_s))


def _float(value: str | None) -> float | None:
    try:
        return None if value is None else float(value)
    except ValueError:
        return None


def _lower(headers: Mapping[str, str] | None) -> dict[str, str]:
    return {k.lower(): str(v) for k, v in (headers or {}).items()}


def _message(error: GithubException) -> str:
    data = error.data
    return str(data.get("message", "")) if isinstance(data, dict) else ""
