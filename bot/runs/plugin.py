"""What a chat platform tells the composition root about itself, so adding one is its own package plus one
line in the registry (``codegen_chat/platforms.py``): its config section, the secrets it reads, how it
serves, what ``doctor`` checks, and whether its HTTP server carries the health endpoints."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from bot.config.doctor_types import CheckResult
from bot.config.sections import Config, Secrets
from bot.runs.service import Service

Serve = Callable[[Service, Config, Secrets], Coroutine[Any, Any, None]]  # runs until cancelled
DoctorChecks = Callable[[Config, Secrets], Awaitable[list[CheckResult]]]
HealthAddress = Callable[[Config], "tuple[str, int] | None"]


def _no_server(config: Config) -> tuple[str, int] | None:
    return None


@dataclass(frozen=True)
class PlatformPlugin:
    name: str  # its section in config.toml, and the platform runs are recorded under
    serve: Serve
    doctor_checks: DoctorChecks
    secrets: tuple[str, ...] = ()  # the environment variables it reads, as `doctor` names them
    # Where its own HTTP server listens in this config when it can answer /healthz and /readyz there too
    # (one port to expose), else None.
    health_address: HealthAddress = _no_server
    doctor_even_when_off: bool = False  # `doctor` reports its settings whether or not it is enabled

    def enabled(self, config: Config) -> bool:
        return bool(getattr(config, self.name).enabled)
