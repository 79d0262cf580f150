"""What goes wrong with a repository, as the project's own errors (each message one sentence for a person).

    CheckInError (agents.errors)
     └── RepoError            fetching, reading, committing or pushing a repository failed
          ├── GitFailed       git itself refused (bot.repos.git), in git's words
          ├── TooLarge        over [repos] max_bytes or max_files
          └── PushRefused     the branch moved under the bot, or is not one the bot may push to
"""

from __future__ import annotations

from agents.errors import CheckInError


class RepoError(CheckInError):
    """A repository could not be fetched, read or written; the message says why in a sentence."""


class PushRefused(RepoError):
    """The bot will not (or could not) push: someone else's commits on its branch, or a protected branch."""


class TooLarge(RepoError):
    """More files or bytes than ``[repos] max_files`` / ``max_bytes`` allow."""
