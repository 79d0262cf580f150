"""Tests run in hardened Docker containers, for any language (see ``sandbox.py`` for one run's steps)."""

from bot.sandbox.doctor import sandbox_checks
from bot.sandbox.sandbox import DockerSandbox

__all__ = ["DockerSandbox", "sandbox_checks"]
