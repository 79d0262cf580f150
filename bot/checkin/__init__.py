"""The check-in: the run's result published as a GitHub Gist, or saved elsewhere when GitHub cannot be used.

    publisher_for(config, secrets, index) -> (fallback -> Publisher), one Gist publisher per process
    ├── MaskingPublisher  secrets masked in everything published, whichever publisher takes it
    ├── GistPublisher     a Gist per conversation, revised by follow-ups (GistIndex remembers which)
    ├── FallbackPublisher the Gist, else the fallback with a note saying why
    └── FolderPublisher   the terminal's fallback: a local folder
    checkin_checks(config, secrets)   what ``codegen-chat doctor`` reports

``GistPublisher`` and ``checkin_checks`` load PyGithub, so they are imported when first named: a command that
publishes nothing yet (or never) starts without it.
"""

from typing import Any

from bot.checkin.factory import publisher_for
from bot.checkin.fallback import FallbackPublisher
from bot.checkin.folder import FolderPublisher
from bot.checkin.index import GistIndex, MemoryGistIndex
from bot.checkin.masking import MaskingPublisher


def __getattr__(name: str) -> Any:
    if name == "GistPublisher":
        from bot.checkin.gist import GistPublisher

        return GistPublisher
    if name == "checkin_checks":
        from bot.checkin.doctor import checkin_checks

        return checkin_checks
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "FallbackPublisher",
    "FolderPublisher",
    "GistIndex",
    "GistPublisher",
    "MaskingPublisher",
    "MemoryGistIndex",
    "checkin_checks",
    "publisher_for",
]
