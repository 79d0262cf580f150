"""Code blocks in chat: too long to read inline, a block becomes an attached file; inline, it is captioned
with the file it holds.

A code block whose body is longer than the platform's limit is taken out of the text and replaced by a
line naming the file that is attached instead. The file is the turn's own file when the block names one
(``python path=src/app.py``), else a snippet named after the block's language. Names are flat (chat
platforms have no folders) and distinct within the turn. A block that stays names its file in a caption
above it, and keeps only its language after the fence (chat platforms show anything more as code).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from agents.fences import Block, segments
from agents.language import BUILT_IN, Languages
from bot.checkin.files import flat_name, unique_name

# Languages a snippet may be in that the team does not write code in (``agents.language`` knows those).
OTHER_EXTENSIONS = {"json": "json", "yaml": "yaml", "toml": "toml", "ruby": "rb", "kotlin": "kt", "csharp": "cs",
                    "sql": "sql", "markdown": "md", "html": "html", "css": "css"}


@dataclass(frozen=True)
class Inlined:
    """A text with its long code blocks swapped for notes, and the files to attach in their place."""

    text: str
    files: dict[str, str] = field(default_factory=dict)  # attached name -> content, in order


def inline_or_attach(markdown: str, max_inline_chars: int, own_files: Mapping[str, str] = {},
                     languages: Languages = BUILT_IN) -> Inlined:
    """``markdown`` with each code block longer than ``max_inline_chars`` replaced by a note; ``own_files``
    (path -> content) are the turn's files, attached whole when a block names one of them. An unnamed block
    is named by its fence's language, as ``languages`` know it."""
    out: list[str] = []
    files: dict[str, str] = {}
    for segment in segments(markdown):
        if isinstance(segment, str) or len(segment.body) <= max_inline_chars:
            out.append(segment if isinstance(segment, str) else segment.source)
            continue
        path = segment.fence.path
        name = unique_name(flat_name(path) if path else _snippet_name(segment, len(files) + 1, languages),
                           set(map(str.lower, files)))
        files[name] = own_files.get(path) or segment.body
        out.append(f"📎 `{path or name}` ({segment.line_count:,} lines) is attached below.\n")
    return Inlined("".join(out), files)


def _snippet_name(block: Block, number: int, languages: Languages) -> str:
    return f"snippet-{number}.{extension(block.fence.language, languages)}"


def extension(language: str, languages: Languages = BUILT_IN) -> str:
    """The file extension for a code block's language, ``txt`` when unknown."""
    known = languages.extension(language).lstrip(".")
    return known or OTHER_EXTENSIONS.get(languages.normalise(language), "txt")


def captioned(markdown: str) -> str:
    """``markdown`` with each code block that names its file captioned with it: ``📄 `app.py```` above a
    fence that keeps only the language."""
    out: list[str] = []
    for segment in segments(markdown):
        if isinstance(segment, str) or not segment.fence.path:
            out.append(segment if isinstance(segment, str) else segment.source)
            continue
        fence = segment.fence
        _, _, rest = segment.source.partition("\n")
        out.append(f"📄 `{fence.path}`\n{fence.indent}{fence.marker}{fence.language}\n{rest}")
    return "".join(out)


def flat_files(files: Mapping[str, str]) -> dict[str, str]:
    """``files`` (path -> content) under flat, distinct names, as a chat platform attaches them."""
    named: dict[str, str] = {}
    for path, content in files.items():
        named[unique_name(flat_name(path), set(map(str.lower, named)))] = content
    return named
