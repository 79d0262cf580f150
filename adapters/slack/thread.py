"""One Slack thread as the run renderer writes to it (``bot.chat.thread.ChatThread``).

Messages go out with ``chat.postMessage`` and change with ``chat.update``; the Stop button is a Block
Kit action; files are snippets. Where the app has Slack's agent features (the ``assistant:write`` scope,
Agents & AI Apps turned on), the run's status message is a streamed message whose plan display shows each
step as a task (``chat.startStream`` / ``appendStream`` / ``stopStream``, through slack_sdk's
``chat_stream``), and who is at work shows as the thread's status (``assistant.threads.setStatus``).
Where the workspace or the thread does not allow them, the same status is a message kept current with
``chat.update``, and a stream that Slack ended early continues that way.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.models.messages.chunk import BlocksChunk, Chunk, PlanUpdateChunk, TaskUpdateChunk
from slack_sdk.web.async_chat_stream import AsyncChatStream
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.markup import escape, neutral
from agents.errors import CheckInError
from bot.chat.progress import ACTIVE, DONE, Progress, Step
from bot.chat.split import split_message
from bot.chat.thread import MessageGone
from bot.safety.inert import in_written_order

log = logging.getLogger(__name__)

MAX_FILES_PER_UPLOAD = 10  # files.completeUploadExternal takes a batch; keep each one small
STOP_ACTION = "codegen_stop"
SECTION_CHARS = 3000  # Slack's limit on a section block's text
TASK_STATES = {ACTIVE: "in_progress", DONE: "complete"}  # anything else: "error"
READ_STEP = "read"  # the plan's first task: what the bot read of the thread
# Refusals that say the workspace (not this one thread) does not let the app use a feature; a Slack that
# does not know the method at all (an older Enterprise Grid, a Slack-compatible server) is one too.
WORKSPACE_REFUSALS = frozenset({"missing_scope", "not_allowed_token_type", "feature_not_enabled", "not_allowed",
                                "team_not_enabled", "access_denied", "unknown_method"})
_MARKUP = re.compile(r"\*\*|`")


@dataclass
class SlackFeatures:
    """What one workspace lets the app use, learned as it goes: a workspace-wide refusal turns a feature
    off for this process, so each run does not try again."""

    streaming: bool = True
    thread_status: bool = True


@dataclass
class _Stream:
    """The status message while it streams, and the tasks it shows."""

    stream: AsyncChatStream
    shown: dict[str, Step] = field(default_factory=dict)
    title: str = ""


class SlackThread:
    def __init__(self, client: AsyncWebClient, channel: str, thread_ts: str, features: SlackFeatures | None = None,
                 user: str = "", team: str = "", interval_s: float = 0.0) -> None:
        self.client, self.channel, self.thread_ts = client, channel, thread_ts
        self._interval_s = interval_s  # the edit pace: the last edit after a stream stops keeps it too
        self._features = features or SlackFeatures(streaming=False, thread_status=False)
        self._user, self._team = user, team  # who the run is for: Slack streams to a person in a channel
        self._streams: dict[str, _Stream] = {}

    async def post(self, text: str, stop: str = "", progress: Progress | None = None) -> str:
        if progress is not None and self._features.streaming:
            ts = await self._start_stream(progress, stop)
            if ts:
                return ts
        text = neutral(text, self._user)
        response = await self.client.chat_postMessage(
            channel=self.channel, thread_ts=self.thread_ts, text=text, blocks=_blocks(text, stop),
            unfurl_links=False, unfurl_media=False,
        )
        return str(response["ts"])

    async def edit(self, message_id: str, text: str, stop: str = "", progress: Progress | None = None) -> None:
        streaming = self._streams.get(message_id)
        if streaming is not None and progress is not None and await self._stream_progress(message_id, streaming, progress):
            return
        # blocks=[] (not None) drops earlier blocks, such as a Stop button that no longer applies.
        text = neutral(text, self._user)
        try:
            await self.client.chat_update(channel=self.channel, ts=message_id, text=text, blocks=_blocks(text, stop) or [])
        except SlackApiError as error:
            if error.response.get("error") == "message_not_found":
                raise MessageGone(message_id) from None
            raise

    async def working(self, text: str) -> None:
        """The thread's status under its last message ("Programmer is writing…"); empty clears it."""
        if not self._features.thread_status:
            return
        try:
            await self.client.assistant_threads_setStatus(channel_id=self.channel, thread_ts=self.thread_ts,
                                                          status=neutral(text, self._user))
        except SlackApiError as error:
            self._refused("thread status", error, "thread_status")

    async def upload(self, files: Mapping[str, str], comment: str) -> str:
        """The files as snippets in the thread, in batches; the link to the first."""
        items = [{"filename": name, "title": name, "content": content} for name, content in files.items()]
        ids: list[str] = []
        try:
            for start in range(0, len(items), MAX_FILES_PER_UPLOAD):
                response = await self.client.files_upload_v2(
                    file_uploads=items[start:start + MAX_FILES_PER_UPLOAD], channel=self.channel,
                    thread_ts=self.thread_ts, initial_comment=neutral(comment, self._user) if comment and not start else None,
                )
                ids.extend(str(f["id"]) for f in response.get("files") or [])
            return await self._permalink(ids[0]) if ids else ""
        except (SlackApiError, SlackClientError) as error:
            log.warning("uploading %d file(s) to %s failed: %s", len(items), self.channel, error)
            raise CheckInError("Slack refused the file upload, so the files could not be attached to the thread.") from None

    async def ephemeral(self, user: str, text: str) -> None:
        """A message in the thread that only ``user`` sees (a mention in it notifies no one)."""
        await self.client.chat_postEphemeral(channel=self.channel, user=user, thread_ts=self.thread_ts,
                                             text=neutral(text, allowed_user=None))

    # -- the status message as a stream ---------------------------------------------------------

    async def _start_stream(self, progress: Progress, stop: str) -> str:
        """The status message as a streamed plan; its ts, or "" when Slack does not allow it here."""
        stream = await self.client.chat_stream(
            channel=self.channel, thread_ts=self.thread_ts, task_display_mode="plan",
            recipient_user_id=self._user or None, recipient_team_id=self._team or None,
        )
        streaming = _Stream(stream)
        stop_button = [BlocksChunk(blocks=_stop(stop))] if stop else []
        try:
            await stream.append(chunks=[*self._changes(streaming, progress), *stop_button])
        except SlackApiError as error:
            self._refused("streaming", error, "streaming")
            return ""
        ts = str(stream.ts or "")
        if ts:
            self._streams[ts] = streaming
        return ts

    async def _stream_progress(self, ts: str, streaming: _Stream, progress: Progress) -> bool:
        """Show what changed in the plan; at the end, stop the stream. False when the stream is gone (it
        expired, or Slack refused): the caller shows the status with ``chat.update`` instead."""
        chunks = self._changes(streaming, progress)
        try:
            if progress.finished is None:
                if chunks:
                    await streaming.stream.append(chunks=chunks)
                return True
            await streaming.stream.stop(chunks=chunks)
            await asyncio.sleep(self._interval_s)  # the chat.update that follows is this message's next edit
        except (SlackApiError, SlackClientError) as error:
            why = error.response.get("error") if isinstance(error, SlackApiError) else type(error).__name__
            log.info("the status message in %s stopped streaming (%s); it goes on as an edited message", self.thread_ts, why)
        self._streams.pop(ts, None)
        return False  # finished: chat.update takes the Stop button off and leaves the final status

    def _changes(self, streaming: _Stream, progress: Progress) -> list[Chunk]:
        title = _plain(progress.headline)
        chunks: list[Chunk] = []
        if title != streaming.title:
            streaming.title = title
            chunks.append(PlanUpdateChunk(title=title))
        read = Step(READ_STEP, progress.read[:1].upper() + progress.read[1:], DONE) if progress.read else None
        for step in ([read] if read else []) + list(progress.steps):  # what was read of the thread, done first
            if streaming.shown.get(step.key) != step:
                streaming.shown[step.key] = step
                chunks.append(TaskUpdateChunk(id=step.key, title=_plain(step.title),
                                              status=TASK_STATES.get(step.state, "error"),
                                              details=_plain(step.detail) or None))
        return chunks

    def _refused(self, feature: str, error: SlackApiError, flag: str) -> None:
        code = str(error.response.get("error") or "")
        if code in WORKSPACE_REFUSALS:
            setattr(self._features, flag, False)
            log.warning("slack: the %s is not allowed in this workspace (%s); the status message shows it instead",
                        feature, code)
        else:
            log.info("slack: no %s in thread %s (%s)", feature, self.thread_ts, code)

    async def _permalink(self, file_id: str) -> str:
        response = await self.client.files_info(file=file_id)
        return str((response.get("file") or {}).get("permalink") or "")


def _blocks(text: str, stop: str) -> list[dict[str, Any]] | None:
    """The text with the Stop button that cancels run ``stop`` under it; None without a run. A section holds at most
    3,000 characters (Slack refuses the whole message over that), so a longer text takes several, cut at lines."""
    if not stop:
        return None
    sections = split_message(text, SECTION_CHARS) or [""]
    return [*({"type": "section", "text": {"type": "mrkdwn", "text": part}} for part in sections), *_stop(stop)]


def _stop(run_id: str) -> list[dict[str, Any]]:
    return [{"type": "actions", "elements": [{
        "type": "button", "action_id": STOP_ACTION, "value": run_id, "style": "danger",
        "text": {"type": "plain_text", "text": "Stop"},
    }]}]


def _plain(markdown: str) -> str:
    """A plan's title, a task's title and details, a thread status: the renderer's Markdown without its
    emphasis, and escaped like every other text (the details quote the models)."""
    return escape(_MARKUP.sub("", in_written_order(markdown)))
