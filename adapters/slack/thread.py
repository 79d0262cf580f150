"""One Slack thread as the run renderer writes to it (``bot.chat.thread.ChatThread``): messages with
``chat.postMessage``/``chat.update``, the Stop button as a Block Kit action, files as snippets."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from agents.errors import CheckInError

log = logging.getLogger(__name__)

MAX_FILES_PER_UPLOAD = 10  # files.completeUploadExternal takes a batch; keep each one small
STOP_ACTION = "codegen_stop"


class SlackThread:
    def __init__(self, client: AsyncWebClient, channel: str, thread_ts: str) -> None:
        self.client, self.channel, self.thread_ts = client, channel, thread_ts

    async def post(self, text: str, stop: str = "") -> str:
        response = await self.client.chat_postMessage(
            channel=self.channel, thread_ts=self.thread_ts, text=text, blocks=_blocks(text, stop),
            unfurl_links=False, unfurl_media=False,
        )
        return str(response["ts"])

    async def edit(self, message_id: str, text: str, stop: str = "") -> None:
        # blocks=[] (not None) drops earlier blocks, such as a Stop button that no longer applies.
        await self.client.chat_update(channel=self.channel, ts=message_id, text=text, blocks=_blocks(text, stop) or [])

    async def upload(self, files: Mapping[str, str], comment: str) -> str:
        """The files as snippets in the thread, in batches; the link to the first."""
        items = [{"filename": name, "title": name, "content": content} for name, content in files.items()]
        ids: list[str] = []
        try:
            for start in range(0, len(items), MAX_FILES_PER_UPLOAD):
                response = await self.client.files_upload_v2(
                    file_uploads=items[start:start + MAX_FILES_PER_UPLOAD], channel=self.channel,
                    thread_ts=self.thread_ts, initial_comment=comment if comment and not start else None,
                )
                ids.extend(str(f["id"]) for f in response.get("files") or [])
            return await self._permalink(ids[0]) if ids else ""
        except (SlackApiError, SlackClientError) as error:
            log.warning("uploading %d file(s) to %s failed: %s", len(items), self.channel, error)
            raise CheckInError("Slack refused the file upload, so the files could not be attached to the thread.") from None

    async def ephemeral(self, user: str, text: str) -> None:
        """A message in the thread that only ``user`` sees."""
        await self.client.chat_postEphemeral(channel=self.channel, user=user, thread_ts=self.thread_ts, text=text)

    async def _permalink(self, file_id: str) -> str:
        response = await self.client.files_info(file=file_id)
        return str((response.get("file") or {}).get("permalink") or "")


def _blocks(text: str, stop: str) -> list[dict[str, Any]] | None:
    """The text with the Stop button that cancels run ``stop`` under it; None without a run."""
    if not stop:
        return None
    return [
        {"type": "section", "text": {"type": "mrkdwn", "text": text}},
        {"type": "actions", "elements": [{
            "type": "button", "action_id": STOP_ACTION, "value": stop, "style": "danger",
            "text": {"type": "plain_text", "text": "Stop"},
        }]},
    ]
