"""Slack events in, runs of the team out. Bolt acknowledges each event before these handlers run, so
everything here may take its time; none of it decides how the team works (that is ``bot.service``)."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from typing import Any

import aiohttp
from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncBoltContext, AsyncBoltRequest
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack_access import Incoming, incoming, mentions, refusal, task_text
from adapters.slack_files import read_shared_files
from adapters.slack_text import SlackMarkup, escape
from adapters.slack_thread import STOP_ACTION, SlackThread
from agents.errors import UserInputError
from bot.chat.thread import ChatPlatform, ThreadStyle
from bot.config import Config, SlackConfig
from bot.service import ChatRequest, Service
from bot.store import Store

log = logging.getLogger(__name__)

PLATFORM = "slack"
SHUTDOWN_GRACE_S = 10.0  # how long a stopping bot waits for its threads to say their runs stopped
INTERNAL_ERROR = "Something went wrong on the bot's side before the team could start; the details are in its log."


class SlackBot:
    def __init__(self, service: Service, store: Store, config: Config, client: AsyncWebClient,
                 downloads: aiohttp.ClientSession) -> None:
        self._service, self._store, self._config = service, store, config
        self._settings = config.slack
        self._client, self._downloads = client, downloads
        self._platform = platform(config.slack)

    def register(self, app: AsyncApp) -> None:
        app.event("app_mention")(self.on_event)
        app.event("message")(self.on_event)
        app.action(STOP_ACTION)(self.on_stop)

    # -- messages -----------------------------------------------------------------------------

    async def on_event(self, event: dict[str, Any], context: AsyncBoltContext, request: AsyncBoltRequest) -> None:
        message = incoming(event)
        bot_user = context.bot_user_id or ""
        if message is None or message.user == bot_user:
            return
        if not await self._addressed(message, event.get("type") == "app_mention", bot_user):
            return
        # One key per message: Slack's retries of an event, and the app_mention + message pair that
        # one mention produces, must start one run. Redeliveries of an event never seen still count.
        if not await self._store.first_sighting(f"slack:{message.channel}:{message.ts}"):
            retry = (request.headers.get("x-slack-retry-num") or ["0"])[0]
            log.debug("message %s already taken (event redelivery %s); ignored", message.ts, retry)
            return
        try:
            await self._take(message, bot_user)
        except Exception:
            log.exception("taking Slack message %s in %s failed", message.ts, message.channel)
            with contextlib.suppress(Exception):  # Slack itself may be what failed; the log has it all
                await self._thread(message).post(INTERNAL_ERROR)

    async def _addressed(self, message: Incoming, mention_event: bool, bot_user: str) -> bool:
        if mention_event or message.direct or mentions(message.text, bot_user):
            return True
        # The store knows every thread a run was started in, across restarts, without asking Slack.
        return message.in_thread and await self._store.has_conversation(PLATFORM, message.thread_key)

    async def _take(self, message: Incoming, bot_user: str) -> None:
        thread = self._thread(message)
        why_not = refusal(self._settings, message.channel, message.user, message.direct)
        if why_not:
            await thread.ephemeral(message.user, why_not)
            return
        try:
            request = await self._request(message, bot_user)
        except UserInputError as error:
            await thread.post(escape(str(error)))
            return
        await self._start(thread, request)

    async def _request(self, message: Incoming, bot_user: str) -> ChatRequest:
        """The checked request, before anything shows in the thread: the cheap refusals (an empty task, a
        full queue) come before any file is downloaded."""
        request = ChatRequest(PLATFORM, message.thread_key, message.user, task_text(message.text, bot_user))
        self._service.check(request)
        if not message.files:
            return request
        attachments = await read_shared_files(list(message.files), self._client, self._downloads,
                                              self._settings.api_url, self._config.input.max_attachment_bytes)
        request = dataclasses.replace(request, attachments=attachments)
        self._service.check(request)  # the files' count and names
        return request

    async def _start(self, thread: SlackThread, request: ChatRequest) -> None:
        try:
            await self._service.start(request, thread, self._platform)
        except UserInputError as error:  # the queue filled up since the check
            await thread.post(escape(str(error)))

    async def shutdown(self, grace_s: float = SHUTDOWN_GRACE_S) -> None:
        """Stop this bot's runs and give their threads a moment to say so."""
        await self._service.stop_all(PLATFORM, grace_s)

    # -- the Stop button ----------------------------------------------------------------------

    async def on_stop(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        user = str(body.get("user", {}).get("id", ""))
        channel = str(body.get("channel", {}).get("id", ""))
        posted = body.get("message") or {}
        thread = SlackThread(self._client, channel, str(posted.get("thread_ts") or posted.get("ts") or ""))
        run_id = str((body.get("actions") or [{}])[0].get("value", ""))
        starter = self._service.starter(run_id) or user
        why_not = refusal(self._settings, channel, user, channel.startswith("D"))
        if why_not:
            await thread.ephemeral(user, why_not)
        elif starter != user:
            await thread.ephemeral(user, f"Only <@{starter}> (who started this run) can stop it.")
        elif not self._service.cancel(run_id):
            await thread.ephemeral(user, f"Run `{run_id}` is not running any more.")
        else:
            log.info("run %s stopped by %s", run_id, user)

    def _thread(self, message: Incoming) -> SlackThread:
        return SlackThread(self._client, message.channel, message.thread_ts)


def platform(settings: SlackConfig) -> ChatPlatform:
    """Slack as the run renderer draws in it."""
    return ChatPlatform(PLATFORM, SlackMarkup(), ThreadStyle(
        max_message_chars=settings.max_message_chars, update_interval_s=settings.update_interval_s,
        max_inline_code_chars=settings.upload_files_over_chars))
