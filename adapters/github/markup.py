"""Markdown as a pull request shows it: GitHub's own Markdown, with what the model wrote kept inert. The rule
(mentions broken, HTML written as text, a link that hides its target shown with it, code left as written) is
``bot.repos.github_markdown.quiet``, the one the pull request's description is written with."""

from __future__ import annotations

from bot.repos.github_markdown import quiet


class GitHubMarkup:
    def text(self, markdown: str) -> str:
        return quiet(markdown)

    def mention(self, user_id: str) -> str:
        return f"@{user_id}"
