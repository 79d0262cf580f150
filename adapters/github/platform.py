"""GitHub pull requests as the core sees them: their markup, how a run is drawn in them, and the names of
their conversations and places."""

from __future__ import annotations

from adapters.github.markup import GitHubMarkup
from bot.chat.access import AccessRules
from bot.chat.thread import ChatPlatform, thread_style
from bot.config.sections import GitHubConfig

PLATFORM = "github"


def platform(settings: GitHubConfig) -> ChatPlatform:
    # Who may ask is GitHub's to say (write access to the repository), checked before the service is asked.
    return ChatPlatform(PLATFORM, GitHubMarkup(), thread_style(settings, settings.inline_code_max_chars),
                        AccessRules.of(PLATFORM))


def repository_argument(full_name: str, git_url: str) -> str:
    """The repository a pull request's run works on, given as a URL of the git host the bot works on (``[repos]
    git_url``: github.com, or a GitHub Enterprise host): never taken for a folder of the bot's machine (only its
    owner and name are read, against the ``[repos]`` allow-list)."""
    return f"{git_url.rstrip('/')}/{full_name}"
