"""Renders each role's template from ``prompts/`` into chat messages.

A template has two blocks, ``system`` and ``user``; rendering uses ``StrictUndefined`` so a
variable a template needs but was not given fails loudly instead of vanishing from the prompt.
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path
from typing import Any

import jinja2

from agents.language import EXTENSIONS
from agents.types import Message

DEFAULT_OUTPUT_LIMIT = 4000  # characters of test output shown to a model


def default_prompt_dir() -> Path:
    return Path(str(importlib.resources.files("prompts")))


def lang_of(path: str) -> str:
    """The fence language for a path ('python' for a .py file), or '' when unknown."""
    dot = path.rfind(".")
    return EXTENSIONS.get(path[dot:].lower(), "") if dot >= 0 else ""


class PromptBook:
    def __init__(self, directory: Path | None = None) -> None:
        self._env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(directory or default_prompt_dir()),
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=False,
            autoescape=False,
        )
        self._env.globals.update(lang_of=lang_of, limit=DEFAULT_OUTPUT_LIMIT)
        # The shared macros as a global, because blocks rendered one by one skip top-level imports.
        self._env.globals["shared"] = self._env.get_template("_shared.jinja").make_module()

    def render(self, role: str, **context: Any) -> list[Message]:
        """The system and user messages for ``role`` with ``context`` filled in."""
        template = self._env.get_template(f"{role}.jinja")
        ctx = template.new_context(context)
        system = "".join(template.blocks["system"](ctx)).strip()
        user = "".join(template.blocks["user"](ctx)).strip()
        return [Message("system", _squeeze(system)), Message("user", _squeeze(user))]


def _squeeze(text: str) -> str:
    """Collapse runs of blank lines the template's conditionals leave behind."""
    lines, blank = [], 0
    for line in text.splitlines():
        blank = blank + 1 if not line.strip() else 0
        if blank <= 1:
            lines.append(line)
    return "\n".join(lines)
