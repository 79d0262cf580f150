"""Links a person can trust: a Markdown link whose text reads like an address shows where it really goes.

Slack, Discord and the web page all show ``[text](url)`` as ``text`` only. When a model writes
``[https://github.com/acme/app](https://evil.example/login)``, a reader sees GitHub and clicks
elsewhere. So a link whose visible text names an address (a URL, or a domain such as ``github.com``)
other than its target's host is shown with its target beside it: ``text (https://evil.example/login)``.
A link whose text is plain words (``[the Gist](...)``), or names the target's own host, is left as it is.
Code blocks are never touched.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from agents.fences import segments

_LINK = re.compile(r"\[([^\]\n]+)\]\(<?([^()\s<>]+)>?\)")
_ADDRESS = re.compile(r"(?i)(?:[a-z][a-z0-9+.-]*://)?((?:[a-z0-9-]+\.)+[a-z]{2,})\b")


def unmasked(markdown: str) -> str:
    """``markdown`` with every deceptive link's target shown beside its text."""
    if "](" not in markdown:
        return markdown
    return "".join(_LINK.sub(_shown, part) if isinstance(part, str) else part.source for part in segments(markdown))


def _shown(match: re.Match[str]) -> str:
    text, target = match.group(1), match.group(2)
    named = {found.lower() for found in _ADDRESS.findall(text)}
    host = (urlsplit(target).hostname or "").lower()
    if not named or all(name == host or host.endswith("." + name) for name in named):
        return match.group()
    return f"{text} ({target})"
