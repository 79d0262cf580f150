"""The web chat as the core sees it: its name, its markup and how its threads are drawn."""

from __future__ import annotations

import re

from bot.chat.thread import ChatPlatform, thread_style
from bot.config.sections import WebConfig
from bot.safety.inert import in_written_order

PLATFORM = "web"

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!<>|~])")


class WebMarkup:
    """The page renders Markdown itself, as untrusted input (sanitised in the browser, no raw HTML), so the
    renderer's Markdown goes to it unchanged."""

    def text(self, markdown: str) -> str:
        return in_written_order(markdown)

    def mention(self, user_id: str) -> str:
        escaped = _MARKDOWN_SPECIAL.sub(r"\\\1", user_id)
        return f"**{escaped}**"


def platform(settings: WebConfig) -> ChatPlatform:
    return ChatPlatform(PLATFORM, WebMarkup(), thread_style(settings, settings.inline_code_max_chars))
