"""Whom a ``[repos."owner/name"]`` table's ``users`` and ``co_authors`` name, on which platform.

A person is an id on one platform, and the same id on another may be someone else: a GitHub login or a web
sign-in proxy's user name is chosen by whoever registers it, so ``U0123ABCD`` can be a GitHub login as well as
a Slack member. An entry written ``platform:id`` ("slack:U0123ABCD", "github:ada", "web:ada@example.com",
"discord:80351110224678912") names that platform's person alone. A bare entry names only an id its platform
assigns (Slack's, Discord's) or the terminal's own user: never a GitHub login or a web sign-in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

# Platforms whose user ids no one picks: Slack's and Discord's are given by the platform; the terminal's is the
# account running the bot on its own machine.
ASSIGNED_IDS = frozenset({"slack", "discord", "terminal"})


def names(entry: str, platform: str, user: str) -> bool:
    """Whether a ``users`` or ``co_authors`` entry names ``user`` of ``platform``."""
    if entry == f"{platform}:{user}":
        return True
    return entry == user and platform in ASSIGNED_IDS


def listed(entries: Iterable[str], platform: str, user: str) -> bool:
    return any(names(entry, platform, user) for entry in entries)


def co_author(co_authors: Mapping[str, str], platform: str, user: str) -> str:
    """The ``Name <email>`` a ``co_authors`` table gives the person, or ""."""
    return next((who for entry, who in co_authors.items() if names(entry, platform, user)), "")
