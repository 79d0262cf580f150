"""A loopback Discord: the REST API calls the adapter makes and a gateway websocket, for the real discord.py.

REST (under ``/api/v10``)::

    GET  /users/@me, /oauth2/applications/@me, /gateway/bot, /channels/{id}
    PUT  /applications/{app}/commands, /applications/{app}/guilds/{guild}/commands     (command sync)
    POST /interactions/{id}/{token}/callback                                           (defer, reply, update)
    GET|PATCH|DELETE /webhooks/{app}/{token}/messages/@original, POST /webhooks/{app}/{token}   (follow-ups)
    POST /channels/{id}/messages (JSON or multipart with files), PATCH|DELETE /channels/{id}/messages/{id}
    GET  /channels/{id}/messages?limit=&before= (newest first, as Discord pages history), /channels/{id}/messages/{id}
    POST /channels/{id}/messages/{id}/threads                                          (thread from a message)
    POST /channels/{id}/typing                                                         (the typing indicator)
    PUT  /channels/{id}/messages/{id}/reactions/{emoji}/@me

The gateway (``ws://.../gateway``) says HELLO, answers heartbeats, answers IDENTIFY with READY and a
GUILD_CREATE per guild, and then sends whatever the test dispatches (INTERACTION_CREATE, MESSAGE_CREATE).
Like Discord it announces a thread it created with THREAD_CREATE. Frames are plain JSON text, which discord.py
reads without decompression. Every REST call is recorded; messages are kept as they stand after edits.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from tests.fakes import loopback

BOT_ID = 900_000_000_000_000_001
APP_ID = 900_000_000_000_000_002
GUILD_ID = 900_000_000_000_000_010
CHANNEL_ID = 900_000_000_000_000_020
OTHER_CHANNEL_ID = 900_000_000_000_000_021
FORUM_CHANNEL_ID = 900_000_000_000_000_022  # a forum: its posts are threads, each opened by a message inside it
CODERS_ROLE = 900_000_000_000_000_030
BOT_ROLE = 900_000_000_000_000_031  # the role Discord makes for the bot when it joins
TOKEN = "fake-discord-token-0123456789"
EPHEMERAL = 64
CONTENT_LIMIT = 2_000  # a message's content, in characters
MESSAGE_CONTENT_INTENT = 1 << 15


@dataclass
class Call:
    method: str
    path: str  # without the API prefix, e.g. "/channels/1/messages"
    json: Any
    files: dict[str, bytes] = field(default_factory=dict)


@dataclass
class StoredMessage:
    id: int
    channel_id: int
    payload: dict[str, Any]
    files: dict[str, bytes] = field(default_factory=dict)
    deleted: bool = False
    writes: list[float] = field(default_factory=list)  # time.monotonic() of its creation and of each edit

    @property
    def content(self) -> str:
        return str(self.payload.get("content") or "")

    @property
    def flags(self) -> int:
        return int(self.payload.get("flags") or 0)


def now() -> str:
    return datetime.now(UTC).isoformat()


def user(user_id: int, name: str, bot: bool = False) -> dict[str, Any]:
    return {"id": str(user_id), "username": name, "global_name": name, "discriminator": "0", "avatar": None,
            "bot": bot}


def member(user_id: int, name: str, roles: tuple[int, ...] = ()) -> dict[str, Any]:
    return {"user": user(user_id, name, bot=user_id == BOT_ID), "roles": [str(r) for r in roles], "joined_at": now(),
            "deaf": False, "mute": False, "flags": 0, "permissions": "2248473465835073"}


class FakeDiscord:
    """Use as ``async with FakeDiscord() as discord:``; point the adapter at ``api_url`` and ``gateway_url``."""

    def __init__(self, token: str = TOKEN) -> None:
        self.token = token
        self.calls: list[Call] = []
        self.messages: dict[int, StoredMessage] = {}
        self.threads: dict[int, dict[str, Any]] = {}
        self.cdn: dict[str, bytes] = {}  # files users attached, served at /attachments/{name}
        self.commands: dict[str, list[dict[str, Any]]] = {}  # "global" or a guild id -> synced commands
        self.identified = asyncio.Event()
        self.intents: int | None = None
        self.application_flags = 1 << 19  # GATEWAY_MESSAGE_CONTENT_LIMITED: the intent is switched on
        self.public = False  # the application's Public Bot switch (anyone may add it to their server)
        self.accepts_files = True  # False: uploads are refused (413), as when they exceed the size limit
        self.may_create_threads = True  # False: 403 Missing Permissions, as for a bot without the permission
        self.privileged_allowed = True  # False: refuse the message content intent as Discord does (4014)
        self.may_read_history = True  # False: 403 Missing Access on history, as without Read Message History
        self._ids = itertools.count(950_000_000_000_000_000)
        self._sockets: list[web.WebSocketResponse] = []
        self._seq = itertools.count(1)
        self._originals: dict[str, int] = {}  # interaction token -> its response message
        self._interaction_channels: dict[str, int] = {}
        self._runner: web.AppRunner | None = None
        self._query: dict[str, str] = {}  # the query of the request being answered
        self.base = ""

    # -- what tests use -------------------------------------------------------------------------

    @property
    def api_url(self) -> str:
        return f"{self.base}/api/v10"

    @property
    def gateway_url(self) -> str:
        return self.base.replace("http://", "ws://") + "/gateway"

    def next_id(self) -> int:
        return next(self._ids)

    def calls_to(self, method: str, path_part: str) -> list[Call]:
        return [c for c in self.calls if c.method == method and path_part in c.path]

    def channel_messages(self, channel_id: int) -> list[StoredMessage]:
        """Messages in a channel as they stand now (edits applied, deleted ones left out), oldest first."""
        return [m for m in self.messages.values() if m.channel_id == channel_id and not m.deleted]

    def original_response(self, interaction_token: str) -> StoredMessage | None:
        message_id = self._originals.get(interaction_token)
        return self.messages.get(message_id) if message_id else None

    def followups(self, interaction_token: str) -> list[StoredMessage]:
        return [m for m in self.messages.values()
                if m.payload.get("_token") == interaction_token and not m.payload.get("_original")]

    async def dispatch(self, event: str, data: dict[str, Any]) -> None:
        """Send a gateway DISPATCH to every connected client."""
        frame = json.dumps({"op": 0, "t": event, "s": next(self._seq), "d": data})
        for socket in list(self._sockets):
            if not socket.closed:
                await socket.send_str(frame)

    def remember(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Keep a person's message (a MESSAGE_CREATE payload) in its channel, so history returns it; returns it."""
        message_id = int(payload["id"])
        self.messages[message_id] = StoredMessage(message_id, int(payload["channel_id"]), payload)
        return payload

    def add_file(self, name: str, data: bytes, content_type: str = "text/plain; charset=utf-8") -> dict[str, Any]:
        """A file a user attached: its attachment payload, with the bytes served from our CDN path."""
        self.cdn[name] = data
        url = f"{self.base}/attachments/{name}"
        return {"id": str(self.next_id()), "filename": name, "size": len(data), "url": url, "proxy_url": url,
                "content_type": content_type}

    # -- server plumbing ------------------------------------------------------------------------

    async def __aenter__(self) -> FakeDiscord:
        app = web.Application(client_max_size=32 * 1024 * 1024)
        app.router.add_get("/gateway", self._gateway)
        app.router.add_get("/attachments/{name}", self._attachment)
        app.router.add_route("*", "/api/v10/{path:.*}", self._rest)
        self._runner, port = await loopback.start(app)
        self.base = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        for socket in list(self._sockets):
            await socket.close()
        if self._runner:
            await self._runner.cleanup()

    async def _attachment(self, request: web.Request) -> web.Response:
        data = self.cdn.get(request.match_info["name"])
        return web.Response(body=data) if data is not None else web.Response(status=404)

    # -- the gateway ----------------------------------------------------------------------------

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        self._sockets.append(socket)
        await socket.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": 41_250}}))
        async for frame in socket:
            payload = json.loads(frame.data)
            if payload["op"] == 1:  # heartbeat
                await socket.send_str(json.dumps({"op": 11}))
            elif payload["op"] == 2:  # identify
                await self._identify(socket, payload["d"])
        self._sockets.remove(socket)
        return socket

    async def _identify(self, socket: web.WebSocketResponse, data: dict[str, Any]) -> None:
        if data.get("token") != self.token:
            await socket.close(code=4004, message=b"Authentication failed.")
            return
        self.intents = data.get("intents")
        if not self.privileged_allowed and (self.intents or 0) & MESSAGE_CONTENT_INTENT:
            await socket.close(code=4014, message=b"Disallowed intent(s).")
            return
        ready = {"v": 10, "user": user(BOT_ID, "codegen", bot=True), "guilds": [{"id": str(GUILD_ID), "unavailable": True}],
                 "session_id": "fake-session", "resume_gateway_url": self.gateway_url,
                 "application": {"id": str(APP_ID), "flags": 0}}
        await socket.send_str(json.dumps({"op": 0, "t": "READY", "s": next(self._seq), "d": ready}))
        await socket.send_str(json.dumps({"op": 0, "t": "GUILD_CREATE", "s": next(self._seq), "d": self.guild()}))
        self.identified.set()

    def guild(self) -> dict[str, Any]:
        channels = [self.text_channel(CHANNEL_ID, "general"), self.text_channel(OTHER_CHANNEL_ID, "random"),
                    {**self.text_channel(FORUM_CHANNEL_ID, "help"), "type": 15, "available_tags": []}]
        roles = [{"id": str(GUILD_ID), "name": "@everyone", "permissions": "1071698660929", "position": 0, "color": 0,
                  "hoist": False, "managed": False, "mentionable": False},
                 {"id": str(CODERS_ROLE), "name": "coders", "permissions": "0", "position": 1, "color": 0,
                  "hoist": False, "managed": False, "mentionable": True},
                 {"id": str(BOT_ROLE), "name": "codegen", "permissions": "0", "position": 2, "color": 0,
                  "hoist": False, "managed": True, "mentionable": True, "tags": {"bot_id": str(BOT_ID)}}]
        return {"id": str(GUILD_ID), "name": "Test Guild", "icon": None, "owner_id": "1", "roles": roles,
                "emojis": [], "stickers": [], "features": [], "channels": channels, "threads": list(self.threads.values()),
                "members": [member(BOT_ID, "codegen", (BOT_ROLE,))], "member_count": 3, "large": False, "unavailable": False,
                "verification_level": 0, "default_message_notifications": 0, "explicit_content_filter": 0,
                "mfa_level": 0, "premium_tier": 0, "preferred_locale": "en-US", "nsfw_level": 0,
                "joined_at": now(), "voice_states": [], "presences": [], "stage_instances": [],
                "guild_scheduled_events": [], "soundboard_sounds": []}

    @staticmethod
    def text_channel(channel_id: int, name: str) -> dict[str, Any]:
        return {"id": str(channel_id), "type": 0, "guild_id": str(GUILD_ID), "name": name, "position": 0,
                "permission_overwrites": [], "nsfw": False, "parent_id": None, "topic": None,
                "rate_limit_per_user": 0, "last_message_id": None}

    # -- REST -----------------------------------------------------------------------------------

    async def _rest(self, request: web.Request) -> web.StreamResponse:
        path = "/" + request.match_info["path"]
        body, files = await _read_body(request)
        self.calls.append(Call(request.method, path, body, files))
        self._query = dict(request.query)
        webhook = path.startswith(("/webhooks/", "/interactions/"))
        if not webhook and request.headers.get("Authorization") != f"Bot {self.token}":
            return _json({"message": "401: Unauthorized", "code": 0}, status=401)
        parts = path.strip("/").split("/")
        handler = self._route(request.method, parts)
        if handler is None:
            return _json({"message": f"Unknown route {request.method} {path}", "code": 0}, status=404)
        return await handler(parts, body, files)

    def _route(self, method: str, parts: list[str]) -> Any:
        shape = (method, *[p if not p.isdigit() and p not in {self.token} else "#" for p in parts])
        routes = {
            ("GET", "users", "@me"): self._me,
            ("GET", "oauth2", "applications", "@me"): self._application,
            ("GET", "gateway", "bot"): self._gateway_bot,
            ("GET", "channels", "#"): self._get_channel,
            ("PUT", "applications", "#", "commands"): self._sync,
            ("PUT", "applications", "#", "guilds", "#", "commands"): self._sync,
            ("POST", "channels", "#", "messages"): self._create_message,
            ("GET", "channels", "#", "messages"): self._history,
            ("GET", "channels", "#", "messages", "#"): self._get_message,
            ("PATCH", "channels", "#", "messages", "#"): self._edit_message,
            ("DELETE", "channels", "#", "messages", "#"): self._delete_message,
            ("POST", "channels", "#", "messages", "#", "threads"): self._create_thread,
            ("POST", "channels", "#", "typing"): self._no_content,  # "codegen is typing…" for ten seconds
        }
        if len(parts) == 7 and parts[4] == "reactions" and method == "PUT":
            return self._no_content
        if parts[0] == "interactions" and method == "POST":
            return self._callback
        if parts[0] == "webhooks":
            return self._webhook(method, parts)
        return routes.get(shape)

    async def _no_content(self, parts: list[str], body: Any, files: dict[str, bytes]) -> web.Response:
        return web.Response(status=204)

    async def _me(self, parts: list[str], body: Any, files: dict[str, bytes]) -> web.Response:
        return _json(user(BOT_ID, "codegen", bot=True))

    async def _application(self, parts: list[str], body: Any, files: dict[str, bytes]) -> web.Response:
        return _json({"id": str(APP_ID), "name": "codegen", "icon": None, "description": "",
                                  "bot_public": self.public, "bot_require_code_grant": False, "verify_key": "0" * 64,
                                  "owner": user(1, "owner"), "flags": self.application_flags, "summary": ""})

    async def _gateway_bot(self, parts: list[str], body: Any, files: dict[str, bytes]) -> web.Response:
        return _json({"url": self.gateway_url, "shards": 1, "session_start_limit": {
            "total": 1000, "remaining": 1000, "reset_after": 0, "max_concurrency": 1}})

    async def _get_channel(self, parts: list[str], body: Any, files: dict[str, bytes]) -> web.Response:
        channel_id = int(parts[1])
        if channel_id in self.threads:
            return _json(self.threads[channel_id])
        return _json(self.text_channel(channel_id, "general"))

    async def _sync(self, parts: list[str], body: Any, files: dict[str, bytes]) -> web.Response:
        scope = parts[3] if parts[2] == "guilds" else "global"
        synced = [{**c, "id": str(self.next_id()), "application_id": str(APP_ID), "version": "1",
                   **({"guild_id": scope} if scope != "global" else {})} for c in body]
        self.commands[scope] = synced
        return _json(synced)

    async def _create_message(self, parts: list[str], body: Any, files: dict[str, bytes]) -> web.Response:
        if files and not self.accepts_files:
            return _json({"message": "Request entity too large", "code": 40005}, status=413)
        if _too_long(body):
            return _too_long(body)
        message = self._store_message(int(parts[1]), body, files)
        await self.dispatch("MESSAGE_CREATE", message.payload)  # Discord echoes a bot's own messages to it too
        return _json(message.payload)

    async def _history(self, parts: list[str], body: Any, files: dict[str, bytes]) -> web.Response:
        if not self.may_read_history:
            return _json({"message": "Missing Access", "code": 50001}, status=403)
        query = self._query
        limit = max(1, min(int(query.get("limit", "50")), 100))
        before = int(query.get("before") or 1 << 62)
        found = sorted((m for m in self.channel_messages(int(parts[1])) if m.id < before), key=lambda m: m.id, reverse=True)
        return _json([m.payload for m in found[:limit]])

    async def _get_message(self, parts: list[str], body: Any, files: dict[str, bytes]) -> web.Response:
        message = self.messages.get(int(parts[3]))
        if message is None or message.deleted or message.channel_id != int(parts[1]):
            return _json({"message": "Unknown Message", "code": 10008}, status=404)
        if not self.may_read_history:
            return _json({"message": "Missing Access", "code": 50001}, status=403)
        return _json(message.payload)

    async def _edit_message(self, parts: list[str], body: Any, files: dict[str, bytes]) -> web.Response:
        message = self.messages.get(int(parts[3]))
        if message is None or message.deleted:
            return _json({"message": "Unknown Message", "code": 10008}, status=404)
        if _too_long(body):
            return _too_long(body)
        self._apply_edit(message, body, files)
        return _json(message.payload)

    async def _delete_message(self, parts: list[str], body: Any, files: dict[str, bytes]) -> web.Response:
        message = self.messages.get(int(parts[3]))
        if message is None or message.deleted:
            return _json({"message": "Unknown Message", "code": 10008}, status=404)
        message.deleted = True
        return web.Response(status=204)

    async def _create_thread(self, parts: list[str], body: Any, files: dict[str, bytes]) -> web.Response:
        parent, message_id = int(parts[1]), int(parts[3])
        if not self.may_create_threads:
            return _json({"message": "Missing Permissions", "code": 50013}, status=403)
        thread = {"id": str(message_id), "type": 11, "guild_id": str(GUILD_ID), "parent_id": str(parent),
                  "owner_id": str(BOT_ID), "name": body["name"], "last_message_id": None, "message_count": 0,
                  "member_count": 1, "rate_limit_per_user": 0, "flags": 0,
                  "thread_metadata": {"archived": False, "auto_archive_duration": body.get("auto_archive_duration", 1440),
                                      "archive_timestamp": now(), "locked": False}}
        self.threads[message_id] = thread  # Discord gives a thread started from a message that message's id
        await self.dispatch("THREAD_CREATE", {**thread, "newly_created": True})
        return _json(thread, status=201)

    # -- interactions and their webhooks --------------------------------------------------------

    def interaction_channel(self, token: str, channel_id: int) -> None:
        """Where an interaction happened (tests dispatch the interaction; its response lands there)."""
        self._interaction_channels[token] = channel_id

    async def _callback(self, parts: list[str], body: Any, files: dict[str, bytes]) -> web.Response:
        token, kind = parts[2], body["type"]
        data = body.get("data") or {}
        result: dict[str, Any] = {"interaction": {"id": parts[1], "type": 2}}
        if kind in (4, 5):  # a message, or "thinking" to be edited later
            message = self._store_message(self._interaction_channels.get(token, CHANNEL_ID),
                                          {**data, "_token": token, "_original": True}, files)
            self._originals[token] = message.id
            result["interaction"].update(response_message_id=str(message.id), response_message_loading=kind == 5,
                                         response_message_ephemeral=bool(message.flags & EPHEMERAL))
            result["resource"] = {"type": kind, "message": message.payload}
        elif kind == 7:  # update the message the component is on
            message_id = int(body.get("_message_id", 0)) or self._component_message(token)
            if message_id and message_id in self.messages:
                self._apply_edit(self.messages[message_id], data, files)
                result["resource"] = {"type": kind, "message": self.messages[message_id].payload}
        return _json(result)

    def component_message(self, token: str, message_id: int) -> None:
        """The message a component interaction (a button press) came from."""
        self._originals[f"component:{token}"] = message_id

    def _component_message(self, token: str) -> int:
        return self._originals.get(f"component:{token}", 0)

    def _webhook(self, method: str, parts: list[str]) -> Any:
        token = parts[2]

        async def original(_: list[str], body: Any, files: dict[str, bytes]) -> web.Response:
            message = self.original_response(token)
            if message is None or message.deleted:
                return _json({"message": "Unknown Message", "code": 10008}, status=404)
            if method == "DELETE":
                message.deleted = True
                return web.Response(status=204)
            if method == "PATCH":
                self._apply_edit(message, body, files)
            return _json(message.payload)

        async def followup(_: list[str], body: Any, files: dict[str, bytes]) -> web.Response:
            channel = self._interaction_channels.get(token, CHANNEL_ID)
            return _json(self._store_message(channel, {**body, "_token": token}, files).payload)

        if len(parts) == 5 and parts[4] == "@original":
            return original
        if len(parts) == 3 and method == "POST":
            return followup
        return None

    # -- messages -------------------------------------------------------------------------------

    def _store_message(self, channel_id: int, body: dict[str, Any], files: dict[str, bytes]) -> StoredMessage:
        message_id = self.next_id()
        payload = {"id": str(message_id), "channel_id": str(channel_id), "guild_id": str(GUILD_ID),
                   "author": user(BOT_ID, "codegen", bot=True), "content": body.get("content") or "",
                   "timestamp": now(), "edited_timestamp": None, "tts": False, "mention_everyone": False,
                   "mentions": [], "mention_roles": [], "embeds": [], "pinned": False, "type": 0,
                   "flags": body.get("flags") or 0, "components": body.get("components") or [],
                   "attachments": _attachments(body, files, self.next_id)}
        payload.update({k: v for k, v in body.items() if k.startswith("_")})
        message = StoredMessage(message_id, channel_id, payload, dict(files), writes=[time.monotonic()])
        self.messages[message_id] = message
        return message

    def _apply_edit(self, message: StoredMessage, body: dict[str, Any], files: dict[str, bytes]) -> None:
        for key in ("content", "components", "flags"):
            if key in body:
                message.payload[key] = body[key] if body[key] is not None else ("" if key == "content" else [])
        if files:
            message.files.update(files)
            message.payload["attachments"] = _attachments(body, message.files, self.next_id)
        message.payload["edited_timestamp"] = now()
        message.writes.append(time.monotonic())


def _json(data: Any, status: int = 200) -> web.Response:
    """Exactly ``application/json``, as Discord sends it: discord.py parses nothing else."""
    return web.Response(body=json.dumps(data).encode(), status=status, headers={"Content-Type": "application/json"})


def _too_long(body: Any) -> web.Response | None:
    """Discord's refusal of a message whose content is over its 2,000 characters."""
    if not isinstance(body, dict) or len(body.get("content") or "") <= CONTENT_LIMIT:
        return None
    return _json({"message": "Invalid Form Body", "code": 50035, "errors": {"content": {"_errors": [
        {"code": "BASE_TYPE_MAX_LENGTH", "message": f"Must be {CONTENT_LIMIT} or fewer in length."}]}}}, status=400)


def _attachments(body: dict[str, Any], files: dict[str, bytes], ids: Any) -> list[dict[str, Any]]:
    return [{"id": str(ids()), "filename": name, "size": len(data), "url": f"https://cdn.invalid/{name}",
             "proxy_url": f"https://cdn.invalid/{name}"} for name, data in files.items()]


async def _read_body(request: web.Request) -> tuple[Any, dict[str, bytes]]:
    """The JSON body, or for multipart the ``payload_json`` part and the uploaded files by file name."""
    if request.content_type.startswith("multipart/"):
        body: Any = {}
        files: dict[str, bytes] = {}
        reader = await request.multipart()
        async for part in reader:
            if part.name == "payload_json":
                body = json.loads(await part.text())  # type: ignore[union-attr]
            else:
                files[part.filename or part.name or "file"] = bytes(await part.read())  # type: ignore[union-attr]
        return body, files
    text = await request.text()
    return (json.loads(text) if text else None), {}
