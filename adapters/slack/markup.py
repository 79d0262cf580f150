"""Slack's markup (``bot.chat.thread.Markup``): Markdown from the models and the renderer turned into
Slack's mrkdwn."""

from __future__ import annotations

import re

from agents.fences import inert, segments

_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^)\s]+)\)")


def escape(text: str) -> str:
    """Slack reads ``&``, ``<`` and ``>`` as markup; model output must show them as written."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def to_mrkdwn(markdown: str) -> str:
    """Slack's dialect: ``*bold*``, headings as bold lines, ``<url|text>`` links, and every code block
    fenced with ``` and no info string (Slack would show ``python path=x.py`` as the first line of the
    code), closed even when the text ended inside it."""
    out: list[str] = []
    for segment in segments(escape(markdown)):
        if isinstance(segment, str):
            out.append("\n".join(_inline(line) for line in segment.split("\n")))
        else:
            closing = "```\n" if segment.closed and segment.source.endswith("\n") else "```"
            body = inert(segment.body)  # Slack closes a block at any ```, even in a longer fence's body
            body = body if body.endswith("\n") or not body else body + "\n"
            out.append(f"{segment.fence.indent}```\n{body}{segment.fence.indent}{closing}")
    return "".join(out)


def _inline(line: str) -> str:
    heading = _HEADING.match(line)
    if heading:
        line = f"**{heading.group(1)}**"
    line = _BOLD.sub(r"*\1*", line)
    # The link target was escaped with the rest; a Slack link wants the raw URL between < and >.
    return _LINK.sub(lambda m: f"<{m.group(2).replace('&amp;', '&')}|{m.group(1)}>", line)


class SlackMarkup:
    def text(self, markdown: str) -> str:
        return to_mrkdwn(markdown)

    def mention(self, user_id: str) -> str:
        return f"<@{user_id}>"
