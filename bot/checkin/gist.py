"""``GistPublisher``: a run's files as a GitHub Gist, revised in place by follow-ups of the same conversation."""

from __future__ import annotations

import asyncio
import logging
import math
import threading
from collections.abc import Callable
from typing import TypeVar

from github import Auth, Github, InputFileContent
from github.Gist import Gist
from github.GithubException import UnknownObjectException

from agents.types import CheckInResult, Publication
from bot.checkin.files import README_NAME, Layout, gist_layout
from bot.checkin.index import GistIndex
from bot.checkin.readme import compose_readme, description
from bot.checkin.retry import RetryPolicy, Sleep, call_github
from bot.config.sections import CheckinConfig
from bot.safety.redact import Redactor

USER_AGENT = "codegen-chat"
T = TypeVar("T")
log = logging.getLogger(__name__)


def github_client(config: CheckinConfig, token: str) -> Github:
    """PyGithub pointed at ``github_api_url`` (GitHub Enterprise too), with no retrying of its own."""
    return Github(
        auth=Auth.Token(token),
        base_url=config.github_api_url.rstrip("/"),
        timeout=max(1, math.ceil(config.timeout_s)),  # PyGithub insists on an int
        retry=None,  # ``call_github`` retries, with capped waits that never hold a thread for long
        seconds_between_requests=None,
        seconds_between_writes=config.write_interval_s or None,
        user_agent=USER_AGENT,
    )


class GistPublisher:
    """Publishes to GitHub as the owner of ``token``; secret Gists unless ``config.public``."""

    def __init__(self, config: CheckinConfig, token: str, index: GistIndex, *, sleep: Sleep = asyncio.sleep) -> None:
        self._config = config
        self._client = github_client(config, token)
        self._index = index
        self._policy = RetryPolicy.from_config(config)
        self._redact = Redactor([token])
        self._sleep = sleep
        # GitHub asks that one token's requests be made one at a time (secondary rate limits): publications
        # take turns. The client also shares one connection object, so even a call left running in its thread
        # by a cancelled publication must finish before the next one starts.
        self._turn = asyncio.Lock()
        self._client_lock = threading.Lock()

    async def publish(self, publication: Publication) -> CheckInResult:
        layout = gist_layout(publication.files, self._config.max_file_bytes)
        files = {**layout.files, README_NAME: compose_readme(publication, layout.renamed, layout.skipped)}
        async with self._turn:
            gist = await self._revise_or_create(publication.conversation_key, description(publication), files)
        await self._remember(publication.conversation_key, gist.id)
        return CheckInResult(location=gist.html_url, kind="gist", note=_note(gist, layout))

    async def _revise_or_create(self, conversation_key: str, text: str, files: dict[str, str]) -> Gist:
        gist_id = await self._index.gist_for(conversation_key) if conversation_key else None
        gist = await self._revise(gist_id, text, files) if gist_id else None
        return gist or await self._create(text, files)

    async def _create(self, text: str, files: dict[str, str]) -> Gist:
        user = self._client.get_user()  # lazy: no request until the POST
        inputs = {name: InputFileContent(content) for name, content in files.items()}
        return await self._call(lambda: user.create_gist(self._config.public, inputs, text))

    async def _revise(self, gist_id: str, text: str, files: dict[str, str]) -> Gist | None:
        """The edited Gist, or ``None`` when it is gone (deleted, or the token now belongs to someone else)."""
        gist = await self._call(lambda: _existing(self._client, gist_id))
        if gist is None:
            return None
        # Files of the last revision that this one no longer has are deleted (``None``), so the Gist is the
        # current project and its history still shows the old files.
        changes: dict[str, InputFileContent | None] = {name: None for name in gist.files if name not in files}
        changes.update({name: InputFileContent(content) for name, content in files.items()})
        edited = await self._call(lambda: _edited(gist, text, changes))
        return gist if edited else None

    async def _remember(self, conversation_key: str, gist_id: str) -> None:
        if not conversation_key:
            return
        try:
            await self._index.remember(conversation_key, gist_id)
        except Exception:  # the Gist is published; forgetting it only means the next follow-up starts a new one
            log.warning("could not remember Gist %s for %s", gist_id, conversation_key, exc_info=True)

    async def _call(self, call: Callable[[], T]) -> T:
        def alone() -> T:
            with self._client_lock:
                return call()

        return await call_github(alone, self._policy, self._redact, self._sleep)


def _existing(client: Github, gist_id: str) -> Gist | None:
    try:
        return client.get_gist(gist_id)  # not lazy: this GETs the Gist, which lists its current files
    except UnknownObjectException:
        return None


def _edited(gist: Gist, text: str, changes: dict[str, InputFileContent | None]) -> bool:
    try:
        gist.edit(description=text, files=changes)
    except UnknownObjectException:  # deleted since we looked
        return False
    return True


def _note(gist: Gist, layout: Layout) -> str:
    notes = []
    revisions = len(gist.history or [])
    if revisions > 1:
        notes.append(f"revision {revisions} of this conversation's Gist")
    if layout.skipped:
        count = len(layout.skipped)
        notes.append(f"{count} file{'s' if count > 1 else ''} left out (the Gist's README says why)")
    return "; ".join(notes)
