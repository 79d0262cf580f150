"""The ``ChatThread`` of a pull request: its conversation (issue comments), or one review thread (replies under
its first comment). Every comment the bot writes carries ``MARKER``, so it is never read back as a request. A
pull request has no buttons: the status comment says how to stop a run instead (``@BOT stop``). A run's files go
to one comment of folded sections, edited as newer versions come (a pull request is no place for a comment per
turn), as long as GitHub's comment limit allows."""

from __future__ import annotations

from collections.abc import Mapping

from adapters.github.api import Posted, PullRequestApi
from adapters.github.events import MARKER
from agents.errors import CheckInError
from bot.chat.progress import Progress
from bot.chat.thread import MessageGone
from bot.config.sections import GITHUB_COMMENT_LIMIT
from bot.safety.inert import in_written_order

REVIEW_REPLY = "r"  # a message id naming a reply in a review thread; a plain number is a conversation comment


class GitHubThread:
    def __init__(self, api: PullRequestApi, repository: str, number: int, review_thread: int = 0,
                 bot_login: str = "") -> None:
        self._api, self._repository, self._number = api, repository, number
        self._review_thread = review_thread  # 0: the conversation
        self._stop_hint = f"\n\n<sub>Reply `@{bot_login} stop` to stop it.</sub>" if bot_login else ""
        self._files: dict[str, str] = {}  # every file uploaded so far, its newest version
        self._files_comment: Posted | None = None

    async def post(self, text: str, stop: str = "", progress: Progress | None = None) -> str:
        return self._message_id(await self._post(self._body(text, stop)))

    async def edit(self, message_id: str, text: str, stop: str = "", progress: Progress | None = None) -> None:
        """``message_id`` says which kind of comment it is, so the pull request's thread found again after a
        restart (``Service.online``) can end a run whose status went into a review thread."""
        body = self._body(text, stop)
        if message_id.startswith(REVIEW_REPLY):
            edited = await self._api.edit_reply(self._repository, int(message_id.removeprefix(REVIEW_REPLY)), body)
        else:
            edited = await self._api.edit_comment(self._repository, int(message_id), body)
        if not edited:
            raise MessageGone(message_id)

    async def upload(self, files: Mapping[str, str], comment: str) -> str:
        shown = {**self._files, **files}
        # Shown in a comment only (the branch holds them exact): nothing in them may read otherwise than it is.
        sections = [f"<details><summary><code>{_escaped(name)}</code></summary>\n\n{_fenced(in_written_order(content))}"
                    "\n</details>"
                    for name, content in shown.items()]
        text = "\n\n".join([comment, *sections])
        if len(self._body(text, "")) > GITHUB_COMMENT_LIMIT:
            raise CheckInError(f"The files are {len(text):,} characters, more than one GitHub comment holds "
                               f"({GITHUB_COMMENT_LIMIT:,})")
        if self._files_comment is not None:
            try:
                await self.edit(self._message_id(self._files_comment), text)
            except MessageGone:  # someone deleted it: the files go in a new one
                self._files_comment = None
        if self._files_comment is None:
            self._files_comment = await self._post(self._body(text, ""))
        self._files = shown
        return self._files_comment.url

    async def working(self, text: str) -> None:
        return None  # a pull request shows no passing status: the status comment says who is at work

    async def _post(self, body: str) -> Posted:
        if self._review_thread:
            return await self._api.reply(self._repository, self._number, self._review_thread, body)
        return await self._api.comment(self._repository, self._number, body)

    def _message_id(self, posted: Posted) -> str:
        return f"{REVIEW_REPLY}{posted.id}" if self._review_thread else str(posted.id)

    def _body(self, text: str, stop: str) -> str:
        return f"{text}{self._stop_hint if stop else ''}\n\n{MARKER}"


def _fenced(content: str) -> str:
    """``content`` in a code fence longer than any run of backticks in it, so nothing in it closes the fence."""
    ticks = 3
    while "`" * ticks in content:
        ticks += 1
    return f"{'`' * ticks}\n{content}\n{'`' * ticks}"


def _escaped(name: str) -> str:
    return name.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
