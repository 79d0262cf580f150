"""Renders each role's template from ``prompts/`` into chat messages, from the role's typed context
(``agents.prompt_contexts``: the context names its template and holds what the template reads).

A template has two blocks, ``system`` and ``user``; rendering uses ``StrictUndefined`` so a
variable a template needs but was not given fails loudly instead of vanishing from the prompt.

What a template is given reaches the model byte for byte: files, the task, test output and replies
keep their blank lines, trailing spaces, tabs and line endings. Only the template's own text is tidied
(the blank runs its conditionals leave are collapsed). That works by setting every value a template
prints aside while the template's text is tidied, and putting it back afterwards.
"""

from __future__ import annotations

import importlib.resources
import re
import secrets
from contextvars import ContextVar
from dataclasses import fields
from pathlib import Path

import jinja2
import jinja2.bccache

from agents.failures import digest
from agents.fences import fenced
from agents.language import BUILT_IN, Languages
from agents.prompt_contexts import DEFAULT_OUTPUT_LIMIT, PromptContext
from agents.python_files import stubs
from agents.types import Message


def default_prompt_dir() -> Path:
    return Path(str(importlib.resources.files("prompts")))


def file_block(path: str, content: str, languages: Languages = BUILT_IN) -> str:
    """A file as the team shows it to a model: its language and path on the fence, then the file exactly."""
    return fenced(content, f"{languages.of_path(path)} path={path}")


def stubs_in(files: dict[str, str]) -> list[str]:
    """The functions still to be written in the Python files shown (``name()``, a signature and a docstring)."""
    return [f"`{name}`" for path, code in files.items() if path.endswith(".py") for name in stubs(code)]


# A value set aside: "\0KEY\0N\0KEY\0", KEY being one rendering's own random key and N the value's number. One
# pattern for every rendering (a pattern per key would be compiled anew for each prompt).
_MARKED = re.compile(r"\x00([0-9a-f]{16})\x00(\d+)\x00\1\x00")


class _SetAside:
    """The values one rendering printed, each replaced by a mark its text cannot contain by chance."""

    def __init__(self) -> None:
        self._key = secrets.token_hex(8)
        self.mark = f"\x00{self._key}\x00"
        self._values: list[str] = []

    def keep(self, value: object) -> str:
        text = "" if value is None else str(value)
        # Blank text is the template's own spacing to tidy; text holding a mark is a macro's output, whose
        # own values are set aside already and whose template text is tidied like the rest.
        if not text.strip() or self.mark in text:
            return text
        self._values.append(text)
        return f"{self.mark}{len(self._values) - 1}{self.mark}"

    def restore(self, text: str) -> str:
        return _MARKED.sub(self._value, text)

    def _value(self, match: re.Match[str]) -> str:
        """A value this rendering set aside; anything else shaped like a mark is left as it is."""
        key, number = match.group(1), int(match.group(2))
        return self._values[number] if key == self._key and number < len(self._values) else match.group(0)


_rendering: ContextVar[_SetAside | None] = ContextVar("rendering", default=None)


def _finalize(value: object) -> object:
    aside = _rendering.get()
    return value if aside is None else aside.keep(value)


class _KeptTemplates(jinja2.FileSystemBytecodeCache):
    """Compiled templates kept between processes; a folder that cannot be read or written (a full disk, a
    read-only one) only means compiling again, never a failed prompt."""

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except OSError:
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError:
            pass


def _compiled_templates(directory: str | None = None) -> jinja2.BytecodeCache | None:
    """Where compiled templates are kept between processes (by default the user's own folder under the temporary
    one; keyed by each template's source), so a one-off run does not compile them again; none where it cannot
    be made."""
    try:
        return _KeptTemplates(directory)
    except (OSError, RuntimeError):  # RuntimeError: a folder of that name that another user owns
        return None


class PromptBook:
    """The role templates, rendered with the fence language of each file named by ``languages``."""

    def __init__(self, directory: Path | None = None, languages: Languages = BUILT_IN,
                 compiled_in: str | None = None) -> None:
        """``compiled_in``: the folder compiled templates are kept in (by default the user's own temporary one)."""
        self._env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(directory or default_prompt_dir()),
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=False,
            autoescape=False,
            finalize=_finalize,
            bytecode_cache=_compiled_templates(compiled_in),
        )
        self._env.globals.update(lang_of=languages.of_path, fenced=fenced, failing_output=digest,
                                 file_block=lambda path, content: file_block(path, content, languages),
                                 limit=DEFAULT_OUTPUT_LIMIT, stubs_in=stubs_in)
        # The shared macros as a global, because blocks rendered one by one skip top-level imports.
        self._env.globals["shared"] = self._env.get_template("_shared.jinja").make_module()

    def render(self, context: PromptContext) -> list[Message]:
        """The system and user messages of ``context``'s role, its values filled in."""
        template = self._env.get_template(f"{context.role}.jinja")
        aside = _SetAside()
        token = _rendering.set(aside)
        try:
            ctx = template.new_context({f.name: getattr(context, f.name) for f in fields(context)})
            system = "".join(template.blocks["system"](ctx)).strip()
            user = "".join(template.blocks["user"](ctx)).strip()
        finally:
            _rendering.reset(token)
        return [Message("system", aside.restore(_squeeze(system))), Message("user", aside.restore(_squeeze(user)))]


def _squeeze(text: str) -> str:
    """Collapse runs of blank lines the template's conditionals leave behind (values are set aside)."""
    lines, blank = [], 0
    for line in text.split("\n"):
        blank = blank + 1 if not line.strip() else 0
        if blank <= 1:
            lines.append(line)
    return "\n".join(lines)
