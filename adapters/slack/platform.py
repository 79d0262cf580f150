"""Slack as the core sees it: its markup, how its threads are drawn, and who may use the bot there."""

from __future__ import annotations

from adapters.slack.markup import SlackMarkup
from bot.access import AccessRules
from bot.chat.thread import ChatPlatform, ThreadStyle
from bot.config import SlackConfig

PLATFORM = "slack"


def platform(settings: SlackConfig) -> ChatPlatform:
    return ChatPlatform(
        PLATFORM, SlackMarkup(),
        ThreadStyle(max_message_chars=settings.max_message_chars, update_interval_s=settings.update_interval_s,
                    max_inline_code_chars=settings.upload_files_over_chars, detail=settings.thread_detail),
        AccessRules.of("slack", channels=settings.allowed_channels, users=settings.allowed_users,
                       direct_messages=settings.direct_messages),
    )
