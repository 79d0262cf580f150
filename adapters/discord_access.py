"""Who may use the bot where: the ``[discord]`` allowlists of guilds, channels and roles.

Pure checks on ids, so a refusal costs no API call and no model call. Empty lists allow everyone.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bot.config import DiscordConfig

NO_DMS = "The bot works in server channels only, not in direct messages."
WRONG_GUILD = "The bot is not enabled in this server."
WRONG_CHANNEL = "The bot is not enabled in this channel."
WRONG_ROLE = "You need one of the roles allowed to use the bot."


@dataclass(frozen=True)
class Place:
    """Where a request came from and who sent it, as plain ids."""

    guild_id: int | None
    channel_id: int  # for a thread: its parent channel, so allowing a channel allows its threads
    role_ids: frozenset[int]


def refusal(config: DiscordConfig, place: Place) -> str | None:
    """The sentence telling the user why not, or ``None`` when the request is allowed."""
    if place.guild_id is None:
        return NO_DMS
    if config.allowed_guilds and place.guild_id not in config.allowed_guilds:
        return WRONG_GUILD
    if config.allowed_channels and place.channel_id not in config.allowed_channels:
        return WRONG_CHANNEL
    if config.allowed_roles and not place.role_ids & set(config.allowed_roles):
        return WRONG_ROLE
    return None


def place_of(guild_id: int | None, channel_id: int, parent_id: int | None, role_ids: Iterable[int]) -> Place:
    return Place(guild_id, parent_id or channel_id, frozenset(role_ids))
