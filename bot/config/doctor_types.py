"""What a ``codegen-chat doctor`` check reports. Each area of the bot contributes its own checks."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.config.sections import Config, Secrets


@dataclass(frozen=True)
class CheckResult:
    name: str
    ok: bool
    detail: str
    fix: str = ""  # how to fix it, when not ok
    required: bool = True  # a failed optional check warns but does not fail doctor


DoctorCheck = Callable[[Config, Secrets], Awaitable[list[CheckResult]]]
