"""How the bot's log lines look, and what they say they belong to.

``CODEGEN_LOG_FORMAT=text`` (the default) writes lines for a person; ``json`` writes one JSON object per
line for a log collector: time, level, logger, message, and the run id, platform, thread and agent the
line belongs to where known. Those four travel in a ``contextvars`` context, so a run's task (and the
worker threads it starts with ``asyncio.to_thread``) tag every line without passing them around.
Secrets are masked in both formats by ``bot.safety.redact``.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncGenerator, Iterable, Iterator, Mapping, Sequence
from contextlib import aclosing, contextmanager, suppress
from contextvars import ContextVar
from datetime import UTC, datetime
from types import MappingProxyType

from agents.protocols import ChatModel
from agents.types import Message, Usage
from bot.config.sections import ConfigError
from bot.safety.redact import install_log_redaction

LEVEL_ENV = "CODEGEN_LOG_LEVEL"
FORMAT_ENV = "CODEGEN_LOG_FORMAT"
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
FORMATS = ("text", "json")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
CONTEXT_FIELDS = ("run_id", "platform", "thread", "agent")

_EMPTY: Mapping[str, str] = MappingProxyType({})
_context: ContextVar[Mapping[str, str]] = ContextVar("codegen_log_context", default=_EMPTY)


def configure_logging(secrets: Iterable[str], env: Mapping[str, str] | None = None) -> None:
    """Set up the root logger from the environment; a bad value is a ``ConfigError`` naming the variable."""
    env = os.environ if env is None else env
    level = env.get(LEVEL_ENV, "WARNING").strip().upper() or "WARNING"
    if level not in LEVELS:
        raise ConfigError(f"{LEVEL_ENV}: must be one of {', '.join(LEVELS)}, got {level.lower()!r}")
    style = env.get(FORMAT_ENV, "text").strip().lower() or "text"
    if style not in FORMATS:
        raise ConfigError(f"{FORMAT_ENV}: must be text or json, got {style!r}")
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if style == "json" else logging.Formatter(TEXT_FORMAT))
    handler.addFilter(ContextFilter())
    logging.basicConfig(level=level, handlers=[handler], force=True)
    install_log_redaction(secrets)  # after the handler exists: it masks on every root handler


@contextmanager
def log_context(**fields: str) -> Iterator[None]:
    """Tag every line logged inside the block (and in tasks started from it) with ``fields``."""
    token = _context.set(_merged(fields))
    try:
        yield
    finally:
        with suppress(ValueError):  # an async generator closed from another task: its context is gone anyway
            _context.reset(token)


def tag_logs(**fields: str) -> None:
    """Tag the rest of the current task's lines with ``fields`` (a task has its own copy of the context)."""
    _context.set(_merged(fields))


def current_context() -> Mapping[str, str]:
    return _context.get()


def _merged(fields: Mapping[str, str]) -> Mapping[str, str]:
    unknown = set(fields) - set(CONTEXT_FIELDS)
    if unknown:
        raise ValueError(f"unknown log context field(s): {', '.join(sorted(unknown))}")
    return MappingProxyType({**_context.get(), **{k: str(v) for k, v in fields.items() if v}})


RECORD_FIELD = "codegen_context"  # not "thread": a LogRecord has its own (the OS thread's id)


class ContextFilter(logging.Filter):
    """Copies the context onto each record as the handler receives it (in the thread that logged)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, RECORD_FIELD):
            setattr(record, RECORD_FIELD, _context.get())
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line. A traceback goes in ``exception`` as text, never across lines."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, str] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        line.update(getattr(record, RECORD_FIELD, _EMPTY))
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line["exception"] = record.exc_text
        return json.dumps(line, ensure_ascii=False)


class AgentTaggedModel:
    """A ``ChatModel`` whose calls log with the calling agent's name: the Manager's work runs in a task of
    its own, so the agent is tagged where the model is called rather than where events are read."""

    def __init__(self, model: ChatModel) -> None:
        self._model = model

    def model_name(self, role: str) -> str:
        return self._model.model_name(role)

    async def stream(self, role: str, messages: Sequence[Message],
                     temperature: float | None = None) -> AsyncGenerator[str | Usage, None]:
        with log_context(agent=role):
            async with aclosing(self._model.stream(role, messages, temperature)) as pieces:
                async for piece in pieces:
                    yield piece
