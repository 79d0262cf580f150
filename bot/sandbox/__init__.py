"""Tests run in hardened Docker containers, for any language (see ``sandbox.py`` for one run's steps).

    DockerSandbox          one run's tests in a fresh, locked-down container
    DockerSandboxOnDemand  the same, loaded when a run first needs it (``on_demand.py``)
    sandbox_checks         what ``codegen-chat doctor`` reports

``DockerSandbox`` and ``sandbox_checks`` load the Docker SDK, so they are imported when first named: a command
that tests nothing yet starts without it.
"""

from typing import Any

from bot.sandbox.on_demand import DockerSandboxOnDemand


def __getattr__(name: str) -> Any:
    if name == "DockerSandbox":
        from bot.sandbox.sandbox import DockerSandbox

        return DockerSandbox
    if name == "sandbox_checks":
        from bot.sandbox.doctor import sandbox_checks

        return sandbox_checks
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["DockerSandbox", "DockerSandboxOnDemand", "sandbox_checks"]
