"""Who may use the bot where: a chat platform's allowlists, checked by the service for every request and
every Stop press. Pure checks on ids, so a refusal costs no API call and no model call."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

NO_DIRECT_MESSAGES = "This bot does not take direct messages; use it in a channel where it is enabled."
WRONG_SERVER = "The bot is not enabled in this server."
WRONG_CHANNEL = "The bot is not enabled in this channel; use one where it is, or ask an admin to add this one."
WRONG_ROLE = "You need one of the roles allowed to use the bot."


@dataclass(frozen=True)
class Place:
    """Where a request (or a Stop press) comes from and who sent it, in the platform's own ids."""

    user: str
    channel: str = ""  # for a thread, its parent channel: allowing a channel allows its threads
    server: str = ""  # a Discord guild; empty where the platform has none
    roles: frozenset[str] = frozenset()
    direct: bool = False  # a direct message with the bot


@dataclass(frozen=True)
class AccessRules:
    """A platform's allowlists; an empty one allows everyone (servers: unless ``every_server`` is off).
    ``section`` names the config section an admin edits, for the refusal that only an admin can lift."""

    section: str = ""
    servers: frozenset[str] = frozenset()
    channels: frozenset[str] = frozenset()  # direct messages are not in a channel: ``direct_messages`` rules them
    users: frozenset[str] = frozenset()
    roles: frozenset[str] = frozenset()
    direct_messages: bool = True
    every_server: bool = True  # with no ``servers`` listed; False: then no server is served (Discord's default)

    @classmethod
    def of(cls, section: str, *, servers: Iterable[object] = (), channels: Iterable[object] = (),
           users: Iterable[object] = (), roles: Iterable[object] = (), direct_messages: bool = True,
           every_server: bool = True) -> AccessRules:
        """Rules from a config section's lists, whatever type its ids have."""
        def ids(values: Iterable[object]) -> frozenset[str]:
            return frozenset(map(str, values))

        return cls(section, ids(servers), ids(channels), ids(users), ids(roles), direct_messages, every_server)


def refusal(rules: AccessRules, place: Place) -> str | None:
    """Why this person may not use the bot here, in a sentence for them; None when they may."""
    if place.direct and not rules.direct_messages:
        return NO_DIRECT_MESSAGES
    if (rules.servers or not rules.every_server) and place.server not in rules.servers:
        return WRONG_SERVER
    if not place.direct and rules.channels and place.channel not in rules.channels:
        return WRONG_CHANNEL
    if rules.users and place.user not in rules.users:
        return f"You are not on this bot's list of users; ask an admin to add you ({rules.section}.allowed_users)."
    if rules.roles and not place.roles & rules.roles:
        return WRONG_ROLE
    return None
