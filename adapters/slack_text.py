"""Text for Slack: Markdown from the models turned into Slack's mrkdwn, the live view of a turn being
written, and long code blocks swapped for a note when their file goes to the thread as a snippet."""

from __future__ import annotations

import re
from collections.abc import Mapping

from adapters.chat_text import FENCE_LINE, split_message

_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^)\s]+)\)")
_BLOCK = re.compile(r"^[ \t]{0,3}(?P<fence>`{3,}|~{3,})[^\n]*\n(?P<body>.*?)^[ \t]{0,3}(?P=fence)[ \t]*$\n?",
                    re.MULTILINE | re.DOTALL)
ELLIPSIS = "…"


def escape(text: str) -> str:
    """Slack reads ``&``, ``<`` and ``>`` as markup; model output must show them as written."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def to_mrkdwn(markdown: str) -> str:
    """Slack's dialect: ``*bold*``, headings as bold lines, ``<url|text>`` links, and fences without
    an info string (Slack would show ``python path=x.py`` as the first line of the code)."""
    out: list[str] = []
    in_code = False
    for line in escape(markdown).split("\n"):
        fence = FENCE_LINE.match(line)
        if fence:
            in_code = not in_code
            out.append(fence["indent"] + "```")
        elif in_code:
            out.append(line)
        else:
            out.append(_inline(line))
    return "\n".join(out)


def _inline(line: str) -> str:
    heading = _HEADING.match(line)
    if heading:
        line = f"**{heading.group(1)}**"
    line = _BOLD.sub(r"*\1*", line)
    # The link target was escaped with the rest; a Slack link wants the raw URL between < and >.
    return _LINK.sub(lambda m: f"<{m.group(2).replace('&amp;', '&')}|{m.group(1)}>", line)


def pieces(markdown: str, limit: int) -> list[str]:
    """The text as Slack messages of at most ``limit`` characters, code fences kept balanced."""
    return split_message(to_mrkdwn(markdown), limit) or [""]


def live_view(markdown: str, limit: int) -> str:
    """What a message shows while its turn is still being written: the newest ``limit`` characters,
    an unclosed code block closed so Slack renders it."""
    parts = pieces(markdown, limit - len(ELLIPSIS) - 1)
    return (ELLIPSIS + "\n" + parts[-1]) if len(parts) > 1 else parts[0]


def without_blocks(markdown: str, uploaded: Mapping[str, str]) -> str:
    """``markdown`` with each code block whose content is one of ``uploaded`` (path -> content)
    replaced by a line naming the file, which the thread shows as a snippet instead."""
    def swap(match: re.Match[str]) -> str:
        body = match.group("body").strip()
        # endswith: a block may open with a "# file: path" line that is not part of the file.
        path = next((p for p, content in uploaded.items() if content.strip() and body.endswith(content.strip())), None)
        if path is None:
            return match.group(0)
        content = uploaded[path]
        lines = content.count("\n") + (not content.endswith("\n"))
        return f"_`{path}` ({lines:,} lines) is attached below as a file._\n"

    return _BLOCK.sub(swap, markdown)
