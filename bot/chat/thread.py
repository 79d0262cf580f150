"""What a chat platform gives the run renderer: a thread to write in and the markup it shows.

A platform adapter implements ``ChatThread`` (four calls into its API) and ``Markup`` (Markdown into its
dialect), and describes itself with a ``ChatPlatform``; everything else about how a run looks in a
thread is the renderer's (``bot.chat.renderer``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from bot.chat.access import AccessRules
from bot.chat.progress import Progress

FULL, COMPACT = "full", "compact"


class MessageGone(Exception):
    """The message to edit is no longer in the thread: a person deleted it."""


class ChatThread(Protocol):
    """One thread on a chat platform. Text comes in the platform's markup, already redacted and no longer
    than the platform's ``max_message_chars``; file names are flat (no folders) and distinct.

    A call that the platform refuses raises whatever its client raises; the renderer logs it and carries
    on with the run, except for ``upload``, which says why in a ``CheckInError``, and ``edit`` of a message
    that is no longer there (a person deleted it), which raises ``MessageGone``: it is not edited again.
    """

    async def post(self, text: str, stop: str = "", progress: Progress | None = None) -> str:
        """Post a message at the end of the thread; ``stop`` (a run id) puts the Stop control on it.
        Returns the message's id, for ``edit``. ``progress`` comes with the run's status message: the same
        as ``text``, as steps, for a platform that draws them itself (Slack's plan display); the others
        show ``text``."""
        ...

    async def edit(self, message_id: str, text: str, stop: str = "", progress: Progress | None = None) -> None:
        """Replace a message's text (and progress). The Stop control stays only while ``stop`` names the run."""
        ...

    async def upload(self, files: Mapping[str, str], comment: str) -> str:
        """Attach text files (name -> content) to the thread, with ``comment`` on the first message that
        carries them; returns a link to them. ``agents.errors.CheckInError`` when the platform refuses."""
        ...

    async def working(self, text: str) -> None:
        """Say who is at work right now ("Programmer is writing…") where the platform shows such a passing
        status apart from the messages (Slack's thread status, Discord's typing); empty text clears it.
        A platform without one does nothing: the status message says it too."""
        ...


class Markup(Protocol):
    """A platform's dialect of Markdown."""

    def text(self, markdown: str) -> str:
        """What the platform shows for ``markdown`` (model output included: nothing in it may ping
        anyone or run as markup the author did not mean)."""
        ...

    def mention(self, user_id: str) -> str:
        """How a person is named so the platform shows who they are."""
        ...


@dataclass(frozen=True)
class ThreadStyle:
    """How a platform wants a run drawn: its message size, how often a message may be edited, how long a
    code block may be before it goes to the thread as a file instead, and how much a thread shows:
    ``full`` (a message per turn) or ``compact`` (the status message, the files, the result)."""

    max_message_chars: int
    update_interval_s: float
    max_inline_code_chars: int
    detail: str = FULL


def thread_style(section: Any, max_inline_code_chars: int) -> ThreadStyle:
    """The style a chat platform's config section asks for: every such section names its message size,
    edit pace and detail alike (``max_message_chars``, ``update_interval_s``, ``thread_detail``)."""
    return ThreadStyle(section.max_message_chars, section.update_interval_s, max_inline_code_chars,
                       section.thread_detail)


@dataclass(frozen=True)
class ChatPlatform:
    """A chat platform as the core sees it: its name (as stored with each conversation), its markup, the
    style of its threads, and who may use the bot there."""

    name: str
    markup: Markup
    style: ThreadStyle
    access: AccessRules = field(default_factory=AccessRules)
