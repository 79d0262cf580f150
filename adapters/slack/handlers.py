"""Slack events in, calls to the service out. Bolt acknowledges each event before these handlers run, so
everything here may take its time; none of it decides which messages to take, who may do what, or how a
run looks (that is ``bot.runs.service`` and ``bot.chat.renderer``)."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from typing import Any

import aiohttp
from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.files import read_shared_files
from adapters.slack.markup import escape
from adapters.slack.messages import Incoming, arrival_of, incoming
from adapters.slack.platform import PLATFORM, platform
from adapters.slack.thread import STOP_ACTION, SlackFeatures, SlackThread
from agents.errors import UserInputError
from bot.chat.access import Place
from bot.chat.thread import ChatPlatform
from bot.config.sections import Config
from bot.runs.service import Prepared, Service

log = logging.getLogger(__name__)

SHUTDOWN_GRACE_S = 10.0  # how long a stopping bot waits for its threads to say their runs stopped
INTERNAL_ERROR = "Something went wrong on the bot's side before the team could start; the details are in its log."


class SlackBot:
    def __init__(self, service: Service, config: Config, client: AsyncWebClient, downloads: aiohttp.ClientSession) -> None:
        self._service, self._config = service, config
        self._client, self._downloads = client, downloads
        self._platform = platform(config.slack)
        self._features = SlackFeatures()  # the agent features, until the workspace says no

    @property
    def platform(self) -> ChatPlatform:
        return self._platform

    def register(self, app: AsyncApp) -> None:
        app.event("app_mention")(self.on_event)
        app.event("message")(self.on_event)
        app.action(STOP_ACTION)(self.on_stop)

    async def on_event(self, event: dict[str, Any], context: AsyncBoltContext) -> None:
        message = incoming(event)
        bot_user = context.bot_user_id or ""
        if message is None or message.user == bot_user:
            return
        thread = SlackThread(self._client, message.channel, message.thread_ts, self._features, message.user,
                             context.team_id or "")
        try:
            await self._take(message, thread, bot_user, event.get("type") == "app_mention")
        except UserInputError as error:
            await thread.post(escape(str(error)))
        except Exception:
            log.exception("taking Slack message %s in %s failed", message.ts, message.channel)
            with contextlib.suppress(Exception):  # Slack itself may be what failed; the log has it all
                await thread.post(INTERNAL_ERROR)

    async def _take(self, message: Incoming, thread: SlackThread, bot_user: str, mention_event: bool) -> None:
        arrival = arrival_of(message, bot_user, mention_event)

        async def prepare() -> Prepared:
            request = arrival.request(PLATFORM)
            if message.files:  # downloaded only once the cheap refusals are behind
                attachments = await read_shared_files(list(message.files), self._client, self._downloads,
                                                      self._config.slack.api_url, self._config.input.max_attachment_bytes)
                request = dataclasses.replace(request, attachments=attachments)
            return Prepared(request, thread)

        taken = await self._service.take(arrival, self._platform, prepare)
        if taken.refusal:
            await thread.ephemeral(message.user, taken.refusal)

    async def on_stop(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        user = str(body.get("user", {}).get("id", ""))
        channel = str(body.get("channel", {}).get("id", ""))
        posted = body.get("message") or {}
        thread = SlackThread(self._client, channel, str(posted.get("thread_ts") or posted.get("ts") or ""))
        run_id = str((body.get("actions") or [{}])[0].get("value", ""))
        why_not = self._service.stop(run_id, Place(user, channel, direct=channel.startswith("D")), self._platform)
        if why_not:
            await thread.ephemeral(user, why_not)

    async def shutdown(self, grace_s: float = SHUTDOWN_GRACE_S) -> None:
        """Stop this bot's runs and give their threads a moment to say so."""
        await self._service.stop_all(PLATFORM, grace_s)
