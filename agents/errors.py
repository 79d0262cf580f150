"""Errors of the team's domain.

    CodegenError                 root of everything this project raises on purpose
    ├── RunFailed                the run cannot go on; its message is for a person
    │   ├── ModelError           the model endpoint failed (after retries), refused, or answered nonsense
    │   │   ├── PromptTooLong    the prompt does not fit the model's context (the Manager trims, tries once more)
    │   │   ├── EmptyReply       HTTP 200 and not a word (the Manager trims, tries once more)
    │   │   ├── ReplyCut         the reply hit max_tokens or the size cap before it ended
    │   │   └── ReplyDropped     the server ended the reply because another request reached it (asked again)
    │   ├── AgentReplyError      an agent's reply stayed unreadable after a format reminder
    │   ├── SandboxError         tests could not be run at all
    │   └── BudgetExhausted      rounds, tokens or wall time ran out (carries which)
    ├── CheckInError             publishing failed; the run falls back, its files are kept
    └── UserInputError           the caller erred (empty task, unreadable attachment...)

``ConfigError`` (in ``bot.config.sections``) also derives from ``CodegenError``.
"""

from __future__ import annotations

from agents.types import Usage


class CodegenError(Exception):
    """Root of all errors raised on purpose. ``str(error)`` is one clear sentence for a person."""


class RunFailed(CodegenError):
    pass


class ModelError(RunFailed):
    pass


class PromptTooLong(ModelError):
    """The prompt does not fit the model's context window; sizes in tokens (``context`` None when unknown)."""

    def __init__(self, message: str, prompt_tokens: int, context: int | None = None) -> None:
        super().__init__(message)
        self.prompt_tokens, self.context = prompt_tokens, context


class EmptyReply(ModelError):
    """The endpoint answered (HTTP 200) with no text at all."""

    def __init__(self, message: str, prompt_tokens: int, context: int | None = None) -> None:
        super().__init__(message)
        self.prompt_tokens, self.context = prompt_tokens, context


class ReplyCut(ModelError):
    """The reply stopped at its token limit (``finish_reason: length``) or at the size cap, not at its end.
    Raised after the text that did arrive; ``usage`` is what the call consumed."""

    def __init__(self, message: str, usage: Usage, context: int | None = None) -> None:
        super().__init__(message)
        self.usage, self.context = usage, context


class ReplyDropped(ModelError):
    """The server ended a reply under way because another request reached it (it serves one at a time);
    the client now sends it one request at a time, so asking again is worth it. ``usage``: what was spent."""

    def __init__(self, message: str, usage: Usage) -> None:
        super().__init__(message)
        self.usage = usage


class AgentReplyError(RunFailed):
    pass


class SandboxError(RunFailed):
    pass


class WorkspaceError(RunFailed):
    """The repository the run works in could not give the team its files (too large, unreachable)."""


class BudgetExhausted(RunFailed):
    pass


class CheckInError(CodegenError):
    pass


class UserInputError(CodegenError):
    pass
