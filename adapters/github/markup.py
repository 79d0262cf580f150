"""Markdown as a pull request shows it: GitHub's own Markdown, with what the model wrote kept inert (mentions
broken, no HTML; the rule is ``bot.safety.github_markdown``, shared with the pull request's description)."""

from __future__ import annotations

from bot.safety.github_markdown import WORD_JOINER, inert_markdown

__all__ = ["WORD_JOINER", "GitHubMarkup"]


class GitHubMarkup:
    def text(self, markdown: str) -> str:
        return inert_markdown(markdown)

    def mention(self, user_id: str) -> str:
        return f"@{user_id}"
