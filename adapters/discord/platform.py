"""Discord as the core sees it: its markup, how its threads are drawn, who may use the bot there, and
where a request comes from (a thread counts as its parent channel)."""

from __future__ import annotations

import discord

from adapters.discord.thread import DiscordMarkup
from bot.chat.access import AccessRules, Place
from bot.chat.thread import ChatPlatform, thread_style
from bot.config.sections import DiscordConfig

PLATFORM = "discord"


def platform(config: DiscordConfig) -> ChatPlatform:
    access = AccessRules.of("discord", servers=served(config), channels=config.allowed_channels,
                            roles=config.allowed_roles, direct_messages=False,  # the bot works in servers only
                            every_server=config.any_server)
    return ChatPlatform(PLATFORM, DiscordMarkup(), thread_style(config, config.inline_code_max_chars), access)


def served(config: DiscordConfig) -> tuple[int, ...]:
    """The servers the bot serves: a public bot can be added to anyone's server, where its people would run code
    and spend the budget of a team they are not part of, so an unlisted server is never served by default."""
    return config.allowed_guilds or config.sync_guilds


def interaction_place(interaction: discord.Interaction) -> Place:
    return _place(interaction.user, interaction.guild_id, interaction.channel)


def message_place(message: discord.Message) -> Place:
    return _place(message.author, message.guild.id if message.guild else None, message.channel)


def thread_key(channel: object) -> str:
    """The conversation a message or command is in: its thread, or none yet (the bot opens one)."""
    return str(channel.id) if isinstance(channel, discord.Thread) else ""


def _place(user: discord.abc.User, guild_id: int | None, channel: object) -> Place:
    parent = channel.parent_id if isinstance(channel, discord.Thread) else None
    channel_id = getattr(channel, "id", 0)
    roles = frozenset(str(role.id) for role in user.roles) if isinstance(user, discord.Member) else frozenset()
    return Place(str(user.id), str(parent or channel_id), str(guild_id or ""), roles, direct=guild_id is None)
