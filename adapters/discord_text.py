"""Text shaping particular to Discord: thread names, the bot's mention, long code blocks turned into files.

(Splitting at the message limit is shared with Slack, in ``adapters.chat_text``.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from adapters.chat_text import FENCE_LINE
from agents.language import EXTENSIONS, normalise
from bot.checkin.files import flat_name

THREAD_NAME_LIMIT = 100  # Discord's limit on a channel or thread name
DEFAULT_THREAD_NAME = "codegen run"
_PATH = re.compile(r"\bpath=(\S+)")
# Languages a snippet may be in that the team does not write code in (``agents.language`` knows those).
_OTHER_EXTENSIONS = {"json": "json", "yaml": "yaml", "toml": "toml", "ruby": "rb", "kotlin": "kt", "csharp": "cs",
                     "sql": "sql"}


@dataclass(frozen=True)
class CodeFile:
    name: str
    content: str


def thread_name(task: str) -> str:
    """The task's first line, cut to what Discord allows."""
    first = next((line.strip() for line in task.splitlines() if line.strip()), "")
    first = re.sub(r"<@[!&]?\d+>", "", first).strip()  # mentions read badly in a thread list
    if len(first) > THREAD_NAME_LIMIT:
        first = first[: THREAD_NAME_LIMIT - 1].rstrip() + "…"
    return first or DEFAULT_THREAD_NAME


def without_mention(text: str, user_id: int, role_id: int | None = None) -> str:
    """The message with the bot's mention taken out: the user (both forms) and the bot's own role."""
    text = re.sub(rf"<@!?{user_id}>", "", text)
    return (re.sub(rf"<@&{role_id}>", "", text) if role_id else text).strip()


def collapse_long_code(text: str, max_chars: int, files: dict[str, str]) -> tuple[str, list[CodeFile]]:
    """``text`` with each code block longer than ``max_chars`` replaced by a one-line note, and the files
    to attach instead: the turn's own file when the block names its ``path=``, else the block itself."""
    out: list[str] = []
    attached: list[CodeFile] = []
    block: list[str] | None = None
    opening: re.Match[str] | None = None
    for line in text.splitlines(keepends=True):
        match = FENCE_LINE.match(line.rstrip("\n"))
        if block is None:
            if match:
                block, opening = [], match
            else:
                out.append(line)
            continue
        assert opening is not None
        if match and _closes(match, opening):
            out.append(_emit(opening, block, max_chars, files, attached))
            block = None
        else:
            block.append(line)
    if block is not None and opening is not None:  # an unterminated block at the end
        out.append(_emit(opening, block, max_chars, files, attached, closed=False))
    return "".join(out), attached


def _closes(match: re.Match[str], opening: re.Match[str]) -> bool:
    marker, opened = match["marker"], opening["marker"]
    return marker[0] == opened[0] and len(marker) >= len(opened) and not match["info"].strip()


def _extension(language: str) -> str:
    """The file extension for a code block's language, ``txt`` when unknown."""
    name = normalise(language)
    known = next((ext.lstrip(".") for ext, lang in EXTENSIONS.items() if lang == name), None)
    return known or _OTHER_EXTENSIONS.get(name, "txt")


def _emit(opening: re.Match[str], lines: list[str], max_chars: int, files: dict[str, str],
          attached: list[CodeFile], closed: bool = True) -> str:
    body = "".join(lines)
    if len(body) <= max_chars:
        return opening.group(0) + "\n" + body + (opening["marker"] + "\n" if closed else "")
    path_match = _PATH.search(opening["info"])
    path = path_match.group(1) if path_match else ""
    if path and path in files:
        item = CodeFile(flat_name(path), files[path])  # Discord file names hold no folders
    else:
        language = (opening["info"].split() or [""])[0]
        item = CodeFile(f"snippet-{len(attached) + 1}.{_extension(language)}", body)
    attached.append(item)
    lines_count = body.count("\n") + (0 if body.endswith("\n") else 1)
    return f"📎 `{path or item.name}` ({lines_count} lines) is attached below.\n"
