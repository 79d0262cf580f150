"""Markdown as GitHub shows it, with what a model or a person wrote kept inert. Outside code, ``@name`` would
ping someone (or the bot itself) and HTML would render (an image fetched from anywhere, a folded section hiding
text), so both are broken with an invisible character or an entity; code is left as written, where GitHub shows
it literally anyway. One rule for every text the bot posts to GitHub: comments, pull request descriptions, reviews."""

from __future__ import annotations

import re

_CODE = re.compile(r"(```[\s\S]*?(?:```|$)|`[^`\n]*`)")
_MENTION = re.compile(r"(?<![\w.+-])@(?=[A-Za-z0-9])")  # as GitHub links them: not inside an address
WORD_JOINER = "\u2060"


def inert_markdown(markdown: str) -> str:
    pieces = _CODE.split(markdown)
    for at in range(0, len(pieces), 2):  # the even pieces are outside code
        pieces[at] = _MENTION.sub("@" + WORD_JOINER, pieces[at].replace("<", "&lt;"))
    return "".join(pieces)
