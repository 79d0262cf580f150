"""Slack as the core sees it: its markup, how its threads are drawn, and who may use the bot there."""

from __future__ import annotations

from adapters.slack.markup import SlackMarkup
from bot.chat.access import AccessRules
from bot.chat.thread import ChatPlatform, thread_style
from bot.config.sections import SlackConfig

PLATFORM = "slack"


def platform(settings: SlackConfig) -> ChatPlatform:
    access = AccessRules.of("slack", channels=settings.allowed_channels, users=settings.allowed_users,
                            direct_messages=settings.direct_messages)
    return ChatPlatform(PLATFORM, SlackMarkup(), thread_style(settings, settings.upload_files_over_chars), access)
