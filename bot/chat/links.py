"""Links a person can trust: a link whose text reads like an address shows where it really goes.

Slack, Discord and the web page all show a Markdown link as its text only. When a model writes
``[https://github.com/acme/app](https://evil.example/login)``, a reader sees GitHub and clicks
elsewhere. The rule (``deceptive``): a link whose visible text names an address (a URL, or a domain such
as ``github.com``) other than its target's host is shown with its target beside it:
``text (https://evil.example/login)``. A link whose text is plain words (``[the Gist](...)``), or names
the target's own host, is left as it is.

The rule is applied to every spelling a Markdown renderer makes a link of (``links`` finds them as
CommonMark reads them): inline links with a target in ``<...>``, with parentheses or a title, and
reference links (``[text][label]``, ``[text][]``, ``[label]``) with their ``[label]: target`` line.
Code blocks and code spans are never touched. Slack's own ``<url|text>`` is built by its markup from these
same links (``adapters.slack.markup``), and the web page applies the same rule in its own renderer
(``adapters/web/static/app.js``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from agents.fences import segments

_ADDRESS = re.compile(r"(?i)(?:[a-z][a-z0-9+.-]*://)?((?:[a-z0-9-]+\.)+[a-z]{2,})\b")
# A reference definition, also inside a quote or a list item (a renderer reads it there too).
_DEFINITION = re.compile(r"""(?m)^(?:[ \t]*(?:>|[-*+]|\d+[.)])[ \t]*)* {0,3}\[([^\]\n]+)\]:[ \t]*\n?[ \t]*(<[^<>\n]*>|\S+)""")
_TITLE_CLOSE = {'"': '"', "'": "'", "(": ")"}


@dataclass(frozen=True)
class Link:
    """A link in prose: where its source starts and ends, the text it shows, where it goes."""

    start: int
    end: int
    text: str
    target: str


def deceptive(text: str, target: str) -> bool:
    """Whether ``text`` names an address that is not ``target``'s host (nor a domain above it)."""
    named = {found.lower() for found in _ADDRESS.findall(text)}
    try:
        host = (urlsplit(target.strip()).hostname or "").lower()
    except ValueError:  # an address urlsplit cannot read (a bad IPv6 literal) names no host we could trust
        host = ""
    return bool(named) and not all(name == host or host.endswith("." + name) for name in named)


def unmasked(markdown: str) -> str:
    """``markdown`` with every deceptive link written as its text and its target."""
    if "[" not in markdown:
        return markdown
    parts = segments(markdown)
    definitions = _definitions("".join(p for p in parts if isinstance(p, str)))
    return "".join(_unmask(part, definitions) if isinstance(part, str) else part.source for part in parts)


def definitions_in(markdown: str) -> dict[str, str]:
    """The reference definitions (``[label]: target``) in the prose of ``markdown``, by normalised label."""
    return _definitions("".join(p for p in segments(markdown) if isinstance(p, str)))


def _unmask(prose: str, definitions: Mapping[str, str]) -> str:
    out: list[str] = []
    position = 0
    for link in links(prose, definitions):
        out.append(prose[position:link.start])
        inner = _unmask(link.text, definitions)  # a link inside the text is what a renderer shows
        if deceptive(link.text, link.target):
            out.append(f"{inner} ({link.target})")
        else:
            source = prose[link.start:link.end]
            out.append(source.replace(link.text, inner, 1) if inner != link.text else source)
        position = link.end
    out.append(prose[position:])
    return "".join(out)


def links(prose: str, definitions: Mapping[str, str] | None = None) -> Iterator[Link]:
    """The links in ``prose`` (no code blocks in it), outermost first, as a CommonMark renderer finds them."""
    refs = _definitions(prose) if definitions is None else definitions
    index, size = 0, len(prose)
    while index < size:
        char = prose[index]
        if char == "\\":
            index += 2
        elif char == "`":
            index = _after_code_span(prose, index)
        elif char == "[":
            link = _link_at(prose, index, refs)
            if link is None:
                index += 1
            else:
                yield link
                index = link.end
        else:
            index += 1


def _link_at(prose: str, start: int, refs: Mapping[str, str]) -> Link | None:
    close = _closing_bracket(prose, start)
    if close is None:
        return None
    text = prose[start + 1:close]
    after = close + 1
    if prose.startswith("(", after):
        inline = _inline_target(prose, after + 1)
        if inline is not None:
            return Link(start, inline[1], text, inline[0])
    if prose.startswith("[", after):
        label_close = _closing_bracket(prose, after)
        if label_close is not None:
            label = prose[after + 1:label_close] or text
            reference = refs.get(_label(label))
            if reference is not None:
                return Link(start, label_close + 1, text, reference)
    if _is_definition(prose, start, after):
        return None
    shortcut = refs.get(_label(text))
    return Link(start, after, text, shortcut) if shortcut is not None else None


def _closing_bracket(prose: str, start: int) -> int | None:
    depth, index = 0, start
    while index < len(prose):
        char = prose[index]
        if char == "\\":
            index += 2
            continue
        if char == "`":
            index = _after_code_span(prose, index)
            continue
        if char == "\n" and prose.startswith("\n", index + 1):
            return None  # a blank line ends the paragraph, and any link text in it
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return None


def _inline_target(prose: str, index: int) -> tuple[str, int] | None:
    """The target of ``(target "title")`` starting after its ``(``, and where the link ends."""
    index = _skip_space(prose, index)
    if prose.startswith("<", index):
        end = prose.find(">", index + 1)
        if end < 0 or any(c in prose[index + 1:end] for c in "<\n"):
            return None
        target, index = prose[index + 1:end], end + 1
    else:
        begin, depth = index, 0
        while index < len(prose):
            char = prose[index]
            if char == "\\" and index + 1 < len(prose):
                index += 2
                continue
            if char.isspace() or (char == ")" and depth == 0):
                break
            depth += {"(": 1, ")": -1}.get(char, 0)
            index += 1
        target = re.sub(r"\\(.)", r"\1", prose[begin:index])
    index = _skip_space(prose, index)
    if index < len(prose) and prose[index] in _TITLE_CLOSE and index > 0 and prose[index - 1].isspace():
        end = prose.find(_TITLE_CLOSE[prose[index]], index + 1)
        if end < 0:
            return None
        index = _skip_space(prose, end + 1)
    return (target, index + 1) if prose.startswith(")", index) else None


def _skip_space(prose: str, index: int) -> int:
    while index < len(prose) and prose[index] in " \t\n":
        index += 1
    return index


def _after_code_span(prose: str, index: int) -> int:
    run = len(prose[index:]) - len(prose[index:].lstrip("`"))
    fence = "`" * run
    end = prose.find(fence, index + run)
    while end >= 0 and prose.startswith("`", end + run):  # a longer run does not close this span
        end = prose.find(fence, end + run + 1)
    return index + run if end < 0 else end + run


def _is_definition(prose: str, start: int, after: int) -> bool:
    line_start = prose.rfind("\n", 0, start) + 1
    return prose.startswith(":", after) and not prose[line_start:start].strip(" \t>-*+.)0123456789")


def _definitions(prose: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for match in _DEFINITION.finditer(prose):
        target = match.group(2)
        found.setdefault(_label(match.group(1)), target[1:-1] if target.startswith("<") else target)
    return found


def _label(label: str) -> str:
    return " ".join(label.split()).casefold()
