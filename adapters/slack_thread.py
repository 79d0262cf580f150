"""One Slack thread the bot writes to (posts, edits, file snippets), and the check-in fallback that
attaches a run's files to it. Every text is redacted before it leaves the process."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from agents.errors import CheckInError
from agents.types import CheckInResult, Publication
from bot.chat.words import attached_files
from bot.checkin.files import flat_name
from bot.redact import Redactor

log = logging.getLogger(__name__)

MAX_FILES_PER_UPLOAD = 10  # files.completeUploadExternal takes a batch; keep each one small
STOP_ACTION = "codegen_stop"


class Thread:
    def __init__(self, client: AsyncWebClient, channel: str, thread_ts: str, redact: Redactor) -> None:
        self.client, self.channel, self.thread_ts = client, channel, thread_ts
        self._redact = redact

    async def post(self, text: str, blocks: list[dict[str, Any]] | None = None) -> str:
        """Post a reply in the thread; returns its ts (the handle for later edits)."""
        response = await self.client.chat_postMessage(
            channel=self.channel, thread_ts=self.thread_ts, text=self._redact(text),
            blocks=self._clean(blocks), unfurl_links=False, unfurl_media=False,
        )
        return str(response["ts"])

    async def update(self, ts: str, text: str, blocks: list[dict[str, Any]] | None = None) -> None:
        # blocks=[] (not None) drops earlier blocks, such as a Stop button that no longer applies.
        await self.client.chat_update(channel=self.channel, ts=ts, text=self._redact(text),
                                      blocks=self._clean(blocks) if blocks is not None else [])

    async def ephemeral(self, user: str, text: str) -> None:
        await self.client.chat_postEphemeral(channel=self.channel, user=user, thread_ts=self.thread_ts,
                                             text=self._redact(text))

    async def upload(self, files: Mapping[str, str], comment: str = "") -> list[str]:
        """Share ``files`` (path -> text) in the thread as snippets; returns the new file ids."""
        ids: list[str] = []
        items = [{"filename": flat_name(path), "title": path,
                  "content": self._redact(content)} for path, content in files.items()]
        for start in range(0, len(items), MAX_FILES_PER_UPLOAD):
            response = await self.client.files_upload_v2(
                file_uploads=items[start:start + MAX_FILES_PER_UPLOAD], channel=self.channel,
                thread_ts=self.thread_ts, initial_comment=self._redact(comment) if comment and not start else None,
            )
            ids.extend(str(f["id"]) for f in response.get("files") or [])
        return ids

    async def permalink(self, file_id: str) -> str:
        response = await self.client.files_info(file=file_id)
        return str((response.get("file") or {}).get("permalink") or "")

    def _clean(self, blocks: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
        if not blocks:
            return None
        return [_redact_block(block, self._redact) for block in blocks]


def _redact_block(value: Any, redact: Redactor) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _redact_block(v, redact) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_block(v, redact) for v in value]
    return value


def status_blocks(text: str, run_id: str) -> list[dict[str, Any]]:
    """A status line with the Stop button that cancels ``run_id``."""
    return [
        {"type": "section", "text": {"type": "mrkdwn", "text": text}},
        {"type": "actions", "elements": [{
            "type": "button", "action_id": STOP_ACTION, "value": run_id, "style": "danger",
            "text": {"type": "plain_text", "text": "Stop"},
        }]},
    ]


class ThreadPublisher:
    """``agents.protocols.Publisher`` that attaches the run's files to its thread (when no Gist is set
    up, or GitHub fails)."""

    def __init__(self, thread: Thread) -> None:
        self._thread = thread

    async def publish(self, publication: Publication) -> CheckInResult:
        try:
            ids = await self._thread.upload(attached_files(publication), comment=f"The files of run `{publication.run_id}`:")
            link = await self._thread.permalink(ids[0]) if ids else ""
        except (SlackApiError, SlackClientError) as error:
            log.warning("attaching the files of run %s failed: %s", publication.run_id, error)
            raise CheckInError("Slack refused the file upload, so the files could not be attached to the thread.") from None
        return CheckInResult(location=link or "the files are attached in this thread", kind="attachments")
