"""Slack's markup (``bot.chat.thread.Markup``): Markdown from the models and the renderer turned into
Slack's mrkdwn, with nothing in it that Slack would read as a mention, a broadcast or a link the author
did not write as one."""

from __future__ import annotations

import re
from urllib.parse import quote

from agents.fences import inert, segments
from bot.chat.links import Link, deceptive, definitions_in, links
from bot.safety.inert import in_written_order

_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
_WEB = re.compile(r"(?i)^(?:https?://|mailto:)\S")
_SLOT = re.compile("\ue000(\\d+)\ue001")  # where a finished Slack link goes back after the inline rules ran
# Slack's special sequences: <@U…> mentions, <!here>/<!channel>/<!subteam^…> broadcasts, <#C…> channels.
_SPECIAL = re.compile(r"<([!@#][^<>]*)>")


def escape(text: str) -> str:
    """Slack reads ``&``, ``<`` and ``>`` as markup; model output must show them as written."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def neutral(mrkdwn: str, allowed_user: str | None = "") -> str:
    """``mrkdwn`` with every mention and broadcast escaped but one of ``allowed_user`` (None: of any user,
    for a message only its recipient sees). What the bot's markup builds has none; this is the last word
    for every text the Slack thread sends, whatever built it."""
    def kept(match: re.Match[str]) -> str:
        inner = match.group(1)
        user = inner[1:].split("|", 1)[0] if inner.startswith("@") else None
        if user is not None and (allowed_user is None or (allowed_user and user == allowed_user)):
            return match.group()
        return escape(match.group())
    return _SPECIAL.sub(kept, mrkdwn)


def to_mrkdwn(markdown: str) -> str:
    """Slack's dialect: ``*bold*``, headings as bold lines, ``<url|text>`` links, and every code block
    fenced with ``` and no info string (Slack would show ``python path=x.py`` as the first line of the
    code), closed even when the text ended inside it."""
    markdown = markdown.replace("\ue000", "").replace("\ue001", "")
    definitions = definitions_in(markdown)
    out: list[str] = []
    for segment in segments(markdown):
        if isinstance(segment, str):
            out.append(_prose(segment, definitions))
        else:
            closing = "```\n" if segment.closed and segment.source.endswith("\n") else "```"
            body = inert(escape(segment.body))  # Slack closes a block at any ```, even in a longer fence's body
            body = body if body.endswith("\n") or not body else body + "\n"
            out.append(f"{segment.fence.indent}```\n{body}{segment.fence.indent}{closing}")
    return "".join(out)


def _prose(source: str, definitions: dict[str, str]) -> str:
    """Prose with its links taken out first (so no rule below reaches into them), then put back in Slack's form."""
    pieces, slots, position = [], [], 0
    for link in links(source, definitions):
        pieces.append(escape(source[position:link.start]))
        if _WEB.match(link.target.strip()):
            slots.append(_slack_link(link))
            pieces.append(f"\ue000{len(slots) - 1}\ue001")
        else:
            pieces.append(escape(source[link.start:link.end]))  # not a web address: shown as written
        position = link.end
    pieces.append(escape(source[position:]))
    text = "\n".join(_inline(line) for line in "".join(pieces).split("\n"))
    return _SLOT.sub(lambda m: slots[int(m.group(1))], text)


def _slack_link(link: Link) -> str:
    """``<url|text>``: the target with nothing Slack reads as the end of the URL or the start of the text
    (``|``, ``<``, ``>``, spaces) left in it; a deceptive one as its text and its target."""
    target = quote(link.target.strip(), safe="/:?#[]@!$&'()*+,;=%~.-_")
    text = escape(" ".join(link.text.split()))
    if deceptive(link.text, link.target):
        return f"{text} (<{target}>)"
    return f"<{target}|{text}>" if text else f"<{target}>"


def _inline(line: str) -> str:
    heading = _HEADING.match(line)
    if heading:
        line = f"**{heading.group(1)}**"
    return _BOLD.sub(r"*\1*", line)


class SlackMarkup:
    def text(self, markdown: str) -> str:
        return to_mrkdwn(in_written_order(markdown))

    def mention(self, user_id: str) -> str:
        return f"<@{user_id}>"
