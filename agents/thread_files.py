"""The files in a message people wrote in a thread: its fenced code read as a model's reply is read
(``agents.file_replies``), so "main.py above" finds the block that is ``main.py``.

A block becomes a file only when it names one (its info string, a label above it, a first-line comment)
or when the thread or the request names the file it clearly is (an unnamed Flask app when the request
says "main.py above"); an unnamed block nobody names stays in the message as quoted code. In the message
text a block that became a file is replaced by a line saying so, so the model reads it once.
"""

from __future__ import annotations

from dataclasses import dataclass

from agents import file_names
from agents.fences import Block, segments
from agents.file_replies import FileContext, ReplyFormatError, parse_files
from agents.language import BUILT_IN, Languages

CONFIG_FILES = frozenset({"go.mod", "Cargo.toml", "package.json"})  # known by their content alone


@dataclass(frozen=True)
class MessageFiles:
    files: dict[str, str]  # path -> content
    text: str  # the message with each block that became a file replaced by a line naming it
    blocks: int  # code blocks in the message


def files_in_message(text: str, mentioned: str, languages: Languages = BUILT_IN) -> MessageFiles:
    """The files ``text`` holds; ``mentioned``: the rest of the thread and the request, whose file
    names count as naming an unnamed block; ``languages``: the ones the run knows (the config's too)."""
    parts = segments(text)
    blocks = [p for p in parts if isinstance(p, Block)]
    if not blocks:
        return MessageFiles({}, text, 0)
    try:
        reply = parse_files(text, FileContext(mentioned=mentioned, languages=languages))
    except ReplyFormatError:
        return MessageFiles({}, text, len(blocks))
    named = set(file_names.mentioned_files(f"{text}\n{mentioned}", languages)) | CONFIG_FILES
    files = {path: body for path, body in reply.files.items() if path in named or path.rsplit("/", 1)[-1] in named}
    return MessageFiles(files, _with_blocks_named(parts, files), len(blocks))


def _with_blocks_named(parts: list[str | Block], files: dict[str, str]) -> str:
    by_content = {body.strip(): path for path, body in files.items()}
    out = []
    for part in parts:
        if isinstance(part, Block):
            path = _file_of(part, by_content)
            out.append(f"[code block: given as the file {path}]\n" if path else part.source)
        else:
            out.append(part)
    return "".join(out)


def _file_of(block: Block, by_content: dict[str, str]) -> str:
    body = block.body.strip()
    if body in by_content:
        return by_content[body]
    _, _, rest = block.body.partition("\n")  # the file's name may have been its first line, dropped from it
    return by_content.get(rest.strip(), "")
