"""Slack events in, calls to the service out. Bolt acknowledges each event before these handlers run, so
everything here may take its time; none of it decides which messages to take, who may do what, or how a
run looks (that is ``bot.runs.service`` and ``bot.chat.renderer``)."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import aiohttp
from slack_bolt import BoltResponse
from slack_bolt.async_app import AsyncAck, AsyncApp, AsyncBoltContext
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.earlier import read_earlier
from adapters.slack.files import read_shared_files
from adapters.slack.markup import escape
from adapters.slack.messages import OUTSIDER, Incoming, arrival_of, incoming, outsider
from adapters.slack.platform import PLATFORM, platform
from adapters.slack.requests import event_problem, misshapen
from adapters.slack.thread import STOP_ACTION, SlackFeatures, SlackThread
from agents.errors import UserInputError
from bot.chat.access import Place
from bot.chat.thread import ChatPlatform
from bot.config.sections import Config
from bot.runs.service import Prepared, Service
from bot.runs.thread_context import Earlier
from bot.store.errors import StoreError

log = logging.getLogger(__name__)

SHUTDOWN_GRACE_S = 10.0  # how long a stopping bot waits for its threads to say their runs stopped
EVENT_ID = "codegen_event_id"  # the bolt context's key for an event kept before its acknowledgement
UNKNOWN_WORKSPACE = "?"  # a sender's workspace Slack did not name: never the bot's own
INTERNAL_ERROR = "Something went wrong on the bot's side before the team could start; the details are in its log."


class SlackBot:
    def __init__(self, service: Service, config: Config, client: AsyncWebClient, downloads: aiohttp.ClientSession) -> None:
        self._service, self._config = service, config
        self._client, self._downloads = client, downloads
        self._platform = platform(config.slack)
        self._features: dict[str, SlackFeatures] = {}  # per workspace: the agent features, until it says no

    @property
    def platform(self) -> ChatPlatform:
        return self._platform

    def register(self, app: AsyncApp) -> None:
        if self._service.keeps_events:
            app.use(self.keep_first)
        app.event("app_mention")(self.on_event)
        app.event("message")(self.on_event)
        app.action(STOP_ACTION)(self.on_stop)

    async def keep_first(self, body: dict[str, Any], context: AsyncBoltContext,
                         next: Callable[[], Awaitable[BoltResponse]]) -> BoltResponse:  # bolt passes it by this name
        """Persist, then acknowledge (replicas on PostgreSQL): an event is kept before bolt tells Slack it arrived,
        so a replica that dies handling it leaves it to another (``replay_unhandled``); when it cannot be kept,
        Slack is not told, and sends it again."""
        event_id = body.get("event_id") if body.get("type") == "event_callback" else None
        if isinstance(event_id, str) and event_id:
            kept = {"event": body.get("event"), "bot_user_id": context.bot_user_id, "team_id": context.team_id,
                    "enterprise_id": context.enterprise_id, "shared": body.get("is_ext_shared_channel") is True}
            try:
                await self._service.received(PLATFORM, event_id, json.dumps(kept))
            except StoreError as error:
                log.warning("slack: event %s not acknowledged, so Slack sends it again: %s", event_id, error)
                return BoltResponse(status=503, body="")
            context[EVENT_ID] = event_id
        return await next()

    async def on_event(self, event: dict[str, Any], body: dict[str, Any], context: AsyncBoltContext) -> None:
        try:
            await self._on_event(event, context.bot_user_id or "", context.team_id or "", context.enterprise_id or "",
                                 shared=body.get("is_ext_shared_channel") is True)
        finally:
            if context.get(EVENT_ID):
                await self._service.handled(PLATFORM, str(context[EVENT_ID]))

    async def replay_unhandled(self, older_than_s: float) -> None:
        """Handle the events a replica kept and died handling (their run, if it was made, is not made again)."""
        for key, payload in await self._service.unhandled(PLATFORM, older_than_s):
            kept = json.loads(payload)
            log.warning("slack: handling event %s, which a replica kept and did not finish handling", key)
            try:
                await self._on_event(kept["event"], kept["bot_user_id"] or "", kept["team_id"] or "",
                                     kept.get("enterprise_id") or "", replayed=True, shared=kept.get("shared", True))
            finally:
                await self._service.handled(PLATFORM, key)

    async def _on_event(self, event: dict[str, Any], bot_user: str, team: str, enterprise: str = "",
                        replayed: bool = False, shared: bool = False) -> None:
        """``shared``: the channel is shared with another organization (Slack Connect), as the event's envelope says."""
        wrong = event_problem(event)
        if wrong:
            log.warning("slack: an event that is not shaped as Slack sends one was ignored: %s", wrong)
            return
        message = incoming(event)
        if message is None or message.user == bot_user:
            return
        if shared and not message.team:  # who may be of another organization is asked, not assumed to be ours
            message = dataclasses.replace(message, team=await self._workspace_of(message.user))
        features = self._features.setdefault(team, SlackFeatures())
        thread = SlackThread(self._client, message.channel, message.thread_ts, features, message.user, team,
                             self._config.slack.update_interval_s)
        if outsider(message, team, self._config.slack.allowed_users) and not await self._in_organization(
                message.user, enterprise):
            # Said once per message, to them alone (a mention's message event, Slack's retries and a replay say
            # nothing more); Slack may refuse that too.
            if (event.get("type") == "app_mention" or message.direct) and await self._service.first_sighting(
                    f"{PLATFORM}:outsider:{message.channel}:{message.ts}"):
                with contextlib.suppress(Exception):
                    await thread.ephemeral(message.user, OUTSIDER)
            log.info("slack: message %s from %s of another organization ignored", message.ts, message.user)
            return
        try:
            await self._take(message, thread, bot_user, event.get("type") == "app_mention", replayed)
        except UserInputError as error:
            await thread.post(escape(str(error)))
        except Exception:
            log.exception("taking Slack message %s in %s failed", message.ts, message.channel)
            with contextlib.suppress(Exception):  # Slack itself may be what failed; the log has it all
                await thread.post(INTERNAL_ERROR)

    async def _take(self, message: Incoming, thread: SlackThread, bot_user: str, mention_event: bool,
                    replayed: bool = False) -> None:
        arrival = arrival_of(message, bot_user, mention_event)

        async def prepare() -> Prepared:
            request = dataclasses.replace(arrival.request(PLATFORM), link=await self._permalink(message))
            if message.files:  # downloaded only once the cheap refusals are behind
                attachments = await read_shared_files(list(message.files), self._client, self._downloads,
                                                      self._config.slack.api_url, self._config.input.max_attachment_bytes)
                request = dataclasses.replace(request, attachments=attachments)
            reads_earlier = not (message.direct and message.thread_ts == message.ts)  # a DM itself is no thread
            return Prepared(request, thread, earlier=partial(self._earlier, message, bot_user) if reads_earlier else None)

        taken = await self._service.take(arrival, self._platform, prepare, replayed)
        if taken.refusal:
            await thread.ephemeral(message.user, taken.refusal)

    async def _workspace_of(self, user: str) -> str:
        """The workspace a person belongs to, as ``users.info`` says; when Slack does not say, one that is not the
        bot's (so only ``allowed_users`` and the bot's own organization let them in)."""
        workspace = (await self._user_info(user, "taken as of another workspace")).get("team_id")
        return workspace if isinstance(workspace, str) and workspace else UNKNOWN_WORKSPACE

    async def _in_organization(self, user: str, enterprise: str) -> bool:
        """Whether a person of another workspace belongs to the bot's Enterprise Grid organization (its workspaces
        share channels without Slack Connect): ``users.info`` says which organization they are in."""
        if not enterprise:
            return False  # a single workspace's install: another workspace is another organization
        member = (await self._user_info(user, "refused as of another organization")).get("enterprise_user")
        return isinstance(member, dict) and member.get("enterprise_id") == enterprise

    async def _user_info(self, user: str, otherwise: str) -> dict[str, Any]:
        """What ``users.info`` says of a person; nothing when Slack refuses (``otherwise``: what follows, for the log)."""
        try:
            answer = await self._client.users_info(user=user)
        except SlackApiError as error:
            log.warning("slack: users.info %s: %s (the person is %s)", user, error.response.get("error"), otherwise)
            return {}
        found = answer.get("user")
        return found if isinstance(found, dict) else {}

    async def _permalink(self, message: Incoming) -> str:
        """A link back to the message that asked (for a pull request's description), or "" when Slack gives none."""
        try:
            answer = await self._client.chat_getPermalink(channel=message.channel, message_ts=message.ts)
        except SlackApiError as error:
            log.info("no permalink for Slack message %s: %s", message.ts, error.response.get("error", ""))
            return ""
        link = answer.get("permalink")
        return link if isinstance(link, str) and link.startswith("https://") else ""

    async def _earlier(self, message: Incoming, bot_user: str) -> Earlier:
        limits = self._config.input
        return await read_earlier(self._client, message, bot_user, limits.thread_messages, self._downloads,
                                  self._config.slack.api_url, limits.max_attachment_bytes, limits.max_attachments)

    async def on_stop(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        await ack()
        wrong = misshapen(body)
        if wrong:
            log.warning("slack: a button press that is not shaped as Slack sends one was ignored: %s", wrong)
            return
        user = str(body["user"]["id"])
        channel = str((body.get("channel") or {}).get("id", ""))
        posted = body.get("message") or {}
        thread = SlackThread(self._client, channel, str(posted.get("thread_ts") or posted.get("ts") or ""))
        run_id = str(body["actions"][0].get("value", ""))
        why_not = await self._service.stop(run_id, Place(user, channel, direct=channel.startswith("D")), self._platform)
        if why_not:
            await thread.ephemeral(user, why_not)

    async def shutdown(self, grace_s: float = SHUTDOWN_GRACE_S) -> None:
        """Stop this bot's runs and give their threads a moment to say so."""
        await self._service.stop_all(PLATFORM, grace_s)
