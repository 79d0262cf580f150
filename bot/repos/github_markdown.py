"""Text the bot writes on GitHub (a pull request's body) made quiet: it pings nobody, hides no link, runs no HTML.

GitHub renders a pull request's description as Markdown with some HTML, and acts on what it reads there:
``@name`` and ``@org/team`` notify those people, an ``<a href>`` or a Markdown link can show one address and
go to another, and an HTML comment hides text from the reader. The body quotes the task, the Planner's plan
(model text) and the repository's test names, so ``quiet`` applies one rule to all of it, outside code:
mentions are broken with an invisible character (as Renovate and Dependabot do), ``<`` and ``&`` are written
as entities (no tag, no comment, no mention spelled with an entity), an image (``![alt](url)``) is shown as its
link (GitHub would fetch it, and it could show anything: a "tests passing" badge), and a deceptive link shows its
target (``bot.chat.links``). Code blocks and code spans are left as written: GitHub acts on nothing inside them.
Anywhere, a character that reorders the text (a bidi override or isolate) is shown escaped, so nothing reads
otherwise than it is.
"""

from __future__ import annotations

import re

from agents.fences import segments
from bot.chat.links import unmasked
from bot.safety.inert import in_written_order

# GitHub's mention: '@' after the start or any character but a letter, digit or underscore (a '-', '.', '/' or
# another '@' included), then a login (or org/team). A web address is left whole: GitHub links it, and reads no
# mention inside a link.
_MENTION = re.compile(r"(?<![\w`])@(?=[A-Za-z0-9])")
_WEB_ADDRESS = re.compile(r"(?i)\b(?:https?://|www\.)[\w-]+(?:\.[\w-]+)+(?:[/?#][^\s<]*)?")  # as GitHub links one
_CODE_SPAN = re.compile(r"(`+)(?:.|\n)*?(?<!`)\1(?!`)")
ZERO_WIDTH_SPACE = "&#8203;"
# Marks every comment the bot writes, so none of them is ever read as a request (whoever's token wrote it).
MARKER = "<!-- codegen-chat -->"


def quiet(markdown: str) -> str:
    """``markdown`` as a pull request may show it: no mention, no HTML, no link that hides where it goes."""
    parts = segments(unmasked(in_written_order(markdown)))  # the bidi overrides in code too: a reader is misled there
    return "".join(_quiet_prose(part) if isinstance(part, str) else part.source for part in parts)


def comment(markdown: str) -> str:
    """A comment the bot writes on a pull request: quiet, and marked as the bot's."""
    return f"{quiet(markdown)}\n\n{MARKER}"


def code(text: str) -> str:
    """``text`` as one code span, whatever backticks it holds (a fence longer than any run inside)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _quiet_prose(prose: str) -> str:
    out, position = [], 0
    for span in _CODE_SPAN.finditer(prose):
        out.append(_quiet_text(prose[position:span.start()]))
        out.append(span.group())
        position = span.end()
    out.append(_quiet_text(prose[position:]))
    return "".join(out)


def _quiet_text(text: str) -> str:
    """Prose with no mention and no tag. ``&`` is written as an entity too: GitHub decodes ``&#64;name`` (or
    ``&commat;``) before it looks for mentions, so an entity could spell one."""
    out, position = [], 0
    for address in _WEB_ADDRESS.finditer(text):
        out.append(_unmentioned(text[position:address.start()]))
        out.append(address.group().replace("&", "&amp;"))
        position = address.end()
    out.append(_unmentioned(text[position:]))
    return "".join(out)


def _unmentioned(text: str) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace("![", "&#33;[")  # an image: its link
    return _MENTION.sub("@" + ZERO_WIDTH_SPACE, text)
