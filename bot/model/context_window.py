"""How many tokens a model's context window holds, from what an OpenAI-compatible endpoint says.

Servers say it in different places, when they say it at all:
- model metadata: ``GET /v1/models`` entries with ``context_length`` (OpenRouter, LM Studio),
  ``max_model_len`` (vLLM), ``n_ctx`` or ``meta.n_ctx``;
- llama.cpp's own ``GET /props`` (``default_generation_settings.n_ctx``, or ``n_ctx``);
- a context-length error's numbers: "This model's maximum context length is 2048 tokens. However,
  you requested 3131 tokens (3031 in the messages, 100 in the completion)" (OpenAI, vLLM,
  llama-cpp-python), "Requested tokens (3031) exceed context window of 2048" (llama-cpp-python),
  ``{"n_prompt_tokens": 3031, "n_ctx": 2048}`` (llama.cpp).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

CONTEXT_KEYS = ("context_length", "max_model_len", "n_ctx", "context_window", "max_context_length",
                "max_input_tokens")

_IS_CONTEXT_ERROR = re.compile(
    r"context[_ ](?:length|window|size)|maximum context|exceeds? (?:the )?(?:available )?context|too many tokens"
    r"|prompt is too long|\bn_ctx\b|input (?:is )?too long", re.I)
_LIMIT = [
    re.compile(r"maximum context length is (\d+)", re.I),
    re.compile(r"context (?:window|length|size) (?:of|is) (\d+)", re.I),
    re.compile(r"\bn_ctx\W{0,3}\s*[:=]?\s*(\d+)", re.I),
    re.compile(r"context[^\d\n]{0,40}?(\d{3,7}) tokens", re.I),
]
_PROMPT = [
    re.compile(r"\((\d+) in the messages", re.I),
    re.compile(r"requested tokens \((\d+)\)", re.I),
    re.compile(r"\bn_prompt_tokens\W{0,3}\s*[:=]?\s*(\d+)", re.I),
    re.compile(r"(\d+) (?:input|prompt) tokens", re.I),
]


@dataclass(frozen=True)
class ContextError:
    """What a context-length error says: the window and the prompt's size, each None when not said."""

    limit: int | None
    prompt: int | None


def read_context_error(message: str) -> ContextError | None:
    """The numbers of a context-length error, or None when ``message`` is about something else."""
    if not _IS_CONTEXT_ERROR.search(message):
        return None
    return ContextError(_first_number(_LIMIT, message), _first_number(_PROMPT, message))


def context_from_models(listing: Mapping[str, Any], model: str) -> int | None:
    """The window ``GET /v1/models`` gives for ``model`` (its entry, or the only entry), if any."""
    entries = [e for e in listing.get("data") or [] if isinstance(e, Mapping)]
    mine = [e for e in entries if e.get("id") == model] or (entries if len(entries) == 1 else [])
    for entry in mine:
        found = _context_in(entry) or _context_in(entry.get("meta") or {})
        if found:
            return found
    return None


def context_from_props(props: Mapping[str, Any]) -> int | None:
    """The window llama.cpp's ``GET /props`` reports for its slots."""
    return _context_in(props.get("default_generation_settings") or {}) or _context_in(props)


def _context_in(mapping: Mapping[str, Any]) -> int | None:
    if not isinstance(mapping, Mapping):
        return None
    for key in CONTEXT_KEYS:
        value = mapping.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _first_number(patterns: list[re.Pattern[str]], text: str) -> int | None:
    for pattern in patterns:
        match = pattern.search(text)
        if match:
            return int(match.group(1))
    return None
