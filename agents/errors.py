"""Errors of the team's domain.

    CodegenError                 root of everything this project raises on purpose
    ├── RunFailed                the run cannot go on; its message is for a person
    │   ├── ModelError           the model endpoint failed (after retries) or refused
    │   ├── AgentReplyError      an agent's reply stayed unreadable after a format reminder
    │   ├── SandboxError         tests could not be run at all
    │   └── BudgetExhausted      rounds, tokens or wall time ran out (carries which)
    ├── CheckInError             publishing failed; the run falls back, its files are kept
    └── UserInputError           the caller erred (empty task, unreadable attachment...)

``ConfigError`` (in ``bot.config``) also derives from ``CodegenError``.
"""

from __future__ import annotations


class CodegenError(Exception):
    """Root of all errors raised on purpose. ``str(error)`` is one clear sentence for a person."""


class RunFailed(CodegenError):
    pass


class ModelError(RunFailed):
    pass


class AgentReplyError(RunFailed):
    pass


class SandboxError(RunFailed):
    pass


class BudgetExhausted(RunFailed):
    pass


class CheckInError(CodegenError):
    pass


class UserInputError(CodegenError):
    pass
