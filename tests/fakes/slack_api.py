"""A loopback fake of Slack for the real slack_sdk and slack-bolt clients: the Web API (the methods the
bot uses, with Slack's JSON shapes), the files_upload_v2 upload URL, private file downloads, and a
Socket Mode websocket that delivers event envelopes and records the app's acks.

The agent features speak as Slack does: ``chat.startStream`` / ``appendStream`` / ``stopStream`` build a
streamed message from chunks (markdown text, task updates shown in a plan, plan titles, blocks), refused
without the ``assistant:write`` scope or after the stream ended (``message_not_in_streaming_state``);
``assistant.threads.setStatus`` records each status.

Every Web API call is recorded (``calls``); what the bot posted is kept per thread (``thread``);
failures are injected on demand (``fail("chat.update", 429, retry_after="1")``).
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web
from multidict import CIMultiDict
from slack_sdk.signature import SignatureVerifier

from tests.fakes import loopback

BOT_TOKEN = "xoxb-test-0123456789-abcdef"
APP_TOKEN = "xapp-test-0123456789-abcdef"
SIGNING_SECRET = "test-signing-secret-0123456789"
BOT_USER, BOT_ID, TEAM, APP_ID = "UBOT", "BBOT", "T0001", "A0001"
ALL_SCOPES = ("app_mentions:read", "assistant:write", "channels:history", "chat:write", "files:read", "files:write",
              "groups:history", "im:history", "mpim:history", "users:read")
LOGIN_PAGE = "<!DOCTYPE html><html><body>Sign in to Slack</body></html>"
TEXT_LIMIT = 40_000  # a message's text, in characters
SECTION_TEXT_LIMIT = 3_000  # a section block's text


@dataclass
class Call:
    method: str
    args: dict[str, Any]
    headers: CIMultiDict[str]
    at: float  # time.monotonic() when it arrived


@dataclass
class Message:
    """A message in a channel: posted by the bot through the API, or by a person through ``say``."""

    channel: str
    ts: str
    text: str
    user: str
    thread_ts: str | None = None
    blocks: list[dict[str, Any]] = field(default_factory=list)
    files: list[dict[str, Any]] = field(default_factory=list)
    edits: list[str] = field(default_factory=list)  # every text chat.update gave it, in order
    posted_at: float = 0.0
    streaming: bool = False  # started with chat.startStream and not stopped yet
    plan_title: str = ""
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)  # task id -> its latest task_update
    chunks: list[dict[str, Any]] = field(default_factory=list)  # every chunk streamed into it, in order
    bot_id: str = ""  # another app's message


@dataclass
class Fault:
    status: int
    headers: dict[str, str]
    body: dict[str, Any]


class FakeSlack:
    """Use as ``async with FakeSlack() as slack:``; point the client at ``slack.api_url``."""

    def __init__(self, scopes: tuple[str, ...] = ALL_SCOPES, unknown: frozenset[str] = frozenset()) -> None:
        self.scopes = scopes
        self.unknown = unknown  # methods this Slack answers unknown_method, as one without agent features does
        self.calls: list[Call] = []
        self.messages: list[Message] = []
        self.ephemeral: list[dict[str, Any]] = []
        self.statuses: list[tuple[str, str, str]] = []  # assistant.threads.setStatus: channel, thread_ts, status
        self.uploads: list[dict[str, Any]] = []  # completed files: filename, title, content, channel, thread_ts
        self.files: dict[str, dict[str, Any]] = {}  # file id -> file object (shared by people or uploaded)
        self.acks: dict[str, float] = {}  # envelope id -> when the ack arrived
        self.sent: dict[str, float] = {}  # envelope id -> when it was sent
        self.connections = 0
        self.names: dict[str, str] = {}  # user id -> display name
        self.enterprises: dict[str, str] = {}  # user id -> the Enterprise Grid organization users.info names
        self.workspaces: dict[str, str] = {}  # user id -> the workspace users.info names (else the bot's own)
        self.organization_wide = ""  # an Enterprise Grid organization the app is installed for as a whole
        self._pending: dict[str, dict[str, Any]] = {}  # upload file id -> filename, bytes
        self._contents: dict[str, bytes] = {}  # shared file id -> bytes
        self._faults: dict[str, deque[Fault]] = defaultdict(deque)
        self._sockets: list[web.WebSocketResponse] = []
        self._changed = asyncio.Condition()
        self._ts = itertools.count(1)
        self._ids = itertools.count(1)
        self._runner: web.AppRunner | None = None
        self.base = ""

    # -- lifecycle ---------------------------------------------------------------------------

    async def __aenter__(self) -> FakeSlack:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/api/{method}", self._api)
        app.router.add_get("/api/{method}", self._api)  # slack_sdk reads some methods (files.info) with GET
        app.router.add_post("/upload/{file_id}", self._upload)
        app.router.add_get("/files-pri/{file_id}/{name}", self._download)
        app.router.add_get("/link", self._socket)
        self._runner, port = await loopback.start(app)
        self.base = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        for ws in list(self._sockets):
            await ws.close()
        if self._runner:
            await self._runner.cleanup()

    @property
    def api_url(self) -> str:
        return f"{self.base}/api/"

    # -- what tests set up -------------------------------------------------------------------

    def next_ts(self) -> str:
        n = next(self._ts)
        return f"{1_700_000_000 + n}.{n:06d}"

    def fail(self, method: str, status: int = 429, times: int = 1, retry_after: str = "0") -> None:
        """The next ``times`` calls of ``method`` fail; a 429 says when to retry."""
        headers = {"Retry-After": retry_after} if status == 429 else {}
        body = {"ok": False, "error": "ratelimited" if status == 429 else "fatal_error"}
        self._faults[method].extend(Fault(status, headers, body) for _ in range(times))

    def end_streams(self) -> None:
        """Every open stream ends, as Slack ends one that has gone on too long."""
        for message in self.messages:
            message.streaming = False

    def share_file(self, name: str, content: bytes, mimetype: str = "text/plain") -> dict[str, Any]:
        """A file a person shared, as a message event carries it."""
        file_id = f"F{next(self._ids):06d}"
        self._contents[file_id] = content
        self.files[file_id] = {
            "id": file_id, "name": name, "title": name, "mimetype": mimetype, "size": len(content),
            "url_private": f"{self.base}/files-pri/{file_id}/{name}",
            "url_private_download": f"{self.base}/files-pri/{file_id}/{name}",
            "permalink": f"{self.base}/files/{file_id}",
        }
        return dict(self.files[file_id])

    def say(self, channel: str, user: str, text: str, thread_ts: str | None = None,
            files: tuple[dict[str, Any], ...] = (), bot_id: str = "") -> Message:
        """Record a person's message (or another app's, with ``bot_id``), so conversations.replies and
        conversations.history know it; deliver its event separately."""
        message = Message(channel, self.next_ts(), text, user, thread_ts, files=list(files), posted_at=time.monotonic(),
                          bot_id=bot_id)
        self.messages.append(message)
        return message

    def name(self, user: str, display_name: str) -> None:
        """The person's display name, as users.info and the messages' ``user_profile`` give it."""
        self.names[user] = display_name

    # -- what tests read ---------------------------------------------------------------------

    def called(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    def thread(self, channel: str, thread_ts: str) -> list[Message]:
        """The bot's messages (and uploads) in a thread, in the order they were posted."""
        return [m for m in self.messages if m.channel == channel and m.thread_ts == thread_ts and m.user == BOT_USER]

    async def wait_for(self, predicate: Callable[[], Any], within: float = 15.0) -> Any:
        """Wait until ``predicate()`` is truthy (checked after every change); returns its value."""
        async def until() -> Any:
            async with self._changed:
                while not (value := predicate()):
                    await self._changed.wait()
                return value
        return await asyncio.wait_for(until(), within)

    # -- Socket Mode -------------------------------------------------------------------------

    async def deliver(self, envelope: dict[str, Any]) -> str:
        """Send an envelope to the connected app; returns its envelope id."""
        await self.wait_for(lambda: self._sockets)
        envelope_id = envelope["envelope_id"]
        self.sent[envelope_id] = time.monotonic()
        await self._sockets[-1].send_str(json.dumps(envelope))
        return str(envelope_id)

    async def wait_ack(self, envelope_id: str, within: float = 10.0) -> float:
        return float(await self.wait_for(lambda: self.acks.get(envelope_id), within))

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self._sockets.append(ws)
        self.connections += 1
        await ws.send_str(json.dumps({"type": "hello", "num_connections": 1,
                                      "connection_info": {"app_id": APP_ID}, "debug_info": {"host": "fake"}}))
        await self._notify()
        try:
            async for message in ws:
                if message.type == WSMsgType.TEXT:
                    ack = json.loads(message.data)
                    if "envelope_id" in ack:
                        self.acks[ack["envelope_id"]] = time.monotonic()
                        await self._notify()
        finally:
            self._sockets.remove(ws)
        return ws

    # -- the Web API -------------------------------------------------------------------------

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        args = dict(request.query)
        if request.method == "GET":
            pass
        elif request.content_type == "application/json":
            args.update(await request.json())
        else:
            args.update({k: v for k, v in (await request.post()).items() if isinstance(v, str)})
        self.calls.append(Call(method, args, CIMultiDict(request.headers), time.monotonic()))
        token = request.headers.get("Authorization", "").removeprefix("Bearer ") or args.get("token", "")
        try:
            if self._faults[method]:
                fault = self._faults[method].popleft()
                return web.json_response(fault.body, status=fault.status, headers=fault.headers)
            handler = getattr(self, "_" + method.replace(".", "_"), None)
            if handler is None or method in self.unknown:
                return web.json_response({"ok": False, "error": "unknown_method"}, status=404)
            if method != "apps.connections.open" and token != BOT_TOKEN:
                return web.json_response({"ok": False, "error": "invalid_auth"})
            body, headers = handler(args, token)
            return web.json_response(body, headers=headers)
        finally:
            await self._notify()

    def _auth_test(self, args: dict[str, Any], token: str) -> tuple[dict[str, Any], dict[str, str]]:
        whole = {"enterprise_id": self.organization_wide, "is_enterprise_install": True} if self.organization_wide else {}
        return ({"ok": True, "url": "https://fake.slack.test/", "team": "Fake Team", "user": "codegen",
                 "team_id": TEAM, "user_id": BOT_USER, "bot_id": BOT_ID, "is_enterprise_install": False, **whole},
                {"x-oauth-scopes": ",".join(self.scopes)})

    def _apps_connections_open(self, args: dict[str, Any], token: str) -> tuple[dict[str, Any], dict[str, str]]:
        if token != APP_TOKEN:
            return {"ok": False, "error": "invalid_auth"}, {}
        return {"ok": True, "url": f"{self.base.replace('http', 'ws', 1)}/link?ticket=t{next(self._ids)}"}, {}

    def _chat_getPermalink(self, args: dict[str, Any], token: str) -> tuple[dict[str, Any], dict[str, str]]:
        channel, ts = str(args["channel"]), str(args["message_ts"])
        return {"ok": True, "channel": channel,
                "permalink": f"https://fake.slack.test/archives/{channel}/p{ts.replace('.', '')}"}, {}

    def _chat_postMessage(self, args: dict[str, Any], token: str) -> tuple[dict[str, Any], dict[str, str]]:
        refused = _too_long(args)
        if refused:
            return refused, {}
        message = Message(args["channel"], self.next_ts(), str(args.get("text", "")), BOT_USER,
                          args.get("thread_ts"), list(args.get("blocks") or []), posted_at=time.monotonic())
        self.messages.append(message)
        return {"ok": True, "channel": message.channel, "ts": message.ts,
                "message": {"text": message.text, "user": BOT_USER, "bot_id": BOT_ID, "ts": message.ts}}, {}

    def _chat_update(self, args: dict[str, Any], token: str) -> tuple[dict[str, Any], dict[str, str]]:
        message = self._find(args["channel"], args["ts"])
        if message is None:
            return {"ok": False, "error": "message_not_found"}, {}
        refused = _too_long(args)
        if refused:
            return refused, {}
        message.text = str(args.get("text", ""))
        message.blocks = list(args.get("blocks") or [])
        message.edits.append(message.text)
        return {"ok": True, "channel": message.channel, "ts": message.ts, "text": message.text}, {}

    def _chat_startStream(self, args: dict[str, Any], token: str) -> tuple[dict[str, Any], dict[str, str]]:
        if "assistant:write" not in self.scopes:
            return {"ok": False, "error": "missing_scope", "needed": "assistant:write"}, {}
        channel = str(args.get("channel", ""))
        if not args.get("thread_ts"):
            return {"ok": False, "error": "invalid_arguments"}, {}
        if not channel.startswith("D") and not (args.get("recipient_user_id") and args.get("recipient_team_id")):
            return {"ok": False, "error": "invalid_arguments"}, {}  # a channel stream is for a person
        message = Message(channel, self.next_ts(), "", BOT_USER, args.get("thread_ts"), posted_at=time.monotonic(),
                          streaming=True)
        self.messages.append(message)
        _apply_chunks(message, args)
        return {"ok": True, "channel": channel, "ts": message.ts}, {}

    def _chat_appendStream(self, args: dict[str, Any], token: str) -> tuple[dict[str, Any], dict[str, str]]:
        message = self._find(args["channel"], args["ts"])
        if message is None or not message.streaming:
            return {"ok": False, "error": "message_not_in_streaming_state"}, {}
        _apply_chunks(message, args)
        return {"ok": True, "channel": message.channel, "ts": message.ts}, {}

    def _chat_stopStream(self, args: dict[str, Any], token: str) -> tuple[dict[str, Any], dict[str, str]]:
        message = self._find(args["channel"], args["ts"])
        if message is None or not message.streaming:
            return {"ok": False, "error": "message_not_in_streaming_state"}, {}
        _apply_chunks(message, args)
        message.blocks.extend(args.get("blocks") or [])  # rendered at the bottom of the finished message
        message.streaming = False
        return {"ok": True, "channel": message.channel, "ts": message.ts,
                "message": {"text": message.text, "ts": message.ts, "user": BOT_USER}}, {}

    def _assistant_threads_setStatus(self, args: dict[str, Any], token: str) -> tuple[dict[str, Any], dict[str, str]]:
        if not {"assistant:write", "chat:write"} & set(self.scopes):
            return {"ok": False, "error": "missing_scope", "needed": "chat:write"}, {}
        self.statuses.append((str(args["channel_id"]), str(args["thread_ts"]), str(args.get("status", ""))))
        return {"ok": True}, {}

    def _chat_postEphemeral(self, args: dict[str, Any], token: str) -> tuple[dict[str, Any], dict[str, str]]:
        self.ephemeral.append(args)
        return {"ok": True, "message_ts": self.next_ts()}, {}

    def _conversations_replies(self, args: dict[str, Any], token: str) -> tuple[dict[str, Any], dict[str, str]]:
        """A thread, its parent first, a page of ``limit`` at a time (Slack's cursor pagination)."""
        refused = self._history_refused(args["channel"])
        if refused:
            return refused, {}
        ts = args["ts"]
        found = sorted((m for m in self.messages if m.channel == args["channel"] and (m.ts == ts or m.thread_ts == ts)),
                       key=lambda m: float(m.ts))
        if not found:
            return {"ok": False, "error": "thread_not_found"}, {}
        return self._page(found, args), {}

    def _conversations_history(self, args: dict[str, Any], token: str) -> tuple[dict[str, Any], dict[str, str]]:
        """A channel's top-level messages (thread replies left out), newest first, before ``latest``."""
        refused = self._history_refused(args["channel"])
        if refused:
            return refused, {}
        latest = float(args.get("latest") or "inf")
        inclusive = str(args.get("inclusive", "")).lower() in ("1", "true")
        found = [m for m in self.messages if m.channel == args["channel"] and (not m.thread_ts or m.thread_ts == m.ts)
                 and (float(m.ts) < latest or (inclusive and float(m.ts) == latest))]
        return self._page(sorted(found, key=lambda m: float(m.ts), reverse=True), args), {}

    def _users_info(self, args: dict[str, Any], token: str) -> tuple[dict[str, Any], dict[str, str]]:
        if "users:read" not in self.scopes:
            return {"ok": False, "error": "missing_scope", "needed": "users:read"}, {}
        user = str(args.get("user", ""))
        name = self.names.get(user, "")
        found: dict[str, Any] = {"id": user, "team_id": self.workspaces.get(user, TEAM), "name": user.lower(),
                                 "profile": {"display_name": name, "real_name": name}}
        if user in self.enterprises:  # a member of an Enterprise Grid organization
            found["enterprise_user"] = {"id": user, "enterprise_id": self.enterprises[user], "enterprise_name": "Org"}
        return {"ok": True, "user": found}, {}

    def _history_refused(self, channel: str) -> dict[str, Any] | None:
        needed = {"C": "channels:history", "G": "groups:history", "D": "im:history"}.get(channel[:1], "channels:history")
        return None if needed in self.scopes else {"ok": False, "error": "missing_scope", "needed": needed}

    def _page(self, found: list[Message], args: dict[str, Any]) -> dict[str, Any]:
        start = _cursor_offset(str(args.get("cursor") or ""))
        limit = max(1, min(int(args.get("limit") or 100), 1000))
        page = found[start:start + limit]
        more = start + limit < len(found)
        return {"ok": True, "messages": [self._message_json(m) for m in page], "has_more": more,
                "response_metadata": {"next_cursor": _cursor(start + limit) if more else ""}}

    def _message_json(self, m: Message) -> dict[str, Any]:
        item: dict[str, Any] = {"type": "message", "text": m.text, "ts": m.ts}
        if m.thread_ts:
            item["thread_ts"] = m.thread_ts
        if m.user == BOT_USER or m.bot_id:
            item.update(bot_id=m.bot_id or BOT_ID, subtype="bot_message" if m.bot_id else None)
            item = {k: v for k, v in item.items() if v is not None}
            if m.user == BOT_USER:
                item["user"] = BOT_USER
        else:
            item["user"] = m.user
            if m.user in self.names:
                item["user_profile"] = {"display_name": self.names[m.user], "real_name": self.names[m.user]}
        if m.files:
            item["files"] = m.files
        return item

    def _files_getUploadURLExternal(self, args: dict[str, Any], token: str) -> tuple[dict[str, Any], dict[str, str]]:
        file_id = f"F{next(self._ids):06d}"
        self._pending[file_id] = {"filename": args["filename"], "length": int(args["length"]), "content": None}
        return {"ok": True, "upload_url": f"{self.base}/upload/{file_id}", "file_id": file_id}, {}

    def _files_completeUploadExternal(self, args: dict[str, Any], token: str) -> tuple[dict[str, Any], dict[str, str]]:
        done = []
        for item in json.loads(args["files"]):
            pending = self._pending.pop(item["id"], None)
            if pending is None or pending["content"] is None:
                return {"ok": False, "error": "file_not_found"}, {}
            file = {"id": item["id"], "name": pending["filename"], "title": item.get("title") or pending["filename"],
                    "size": len(pending["content"]), "permalink": f"{self.base}/files/{item['id']}"}
            self.files[item["id"]] = file
            self.uploads.append({**file, "content": pending["content"].decode(), "channel": args.get("channel_id"),
                                 "thread_ts": args.get("thread_ts")})
            done.append({"id": item["id"], "title": file["title"]})
        if args.get("channel_id"):
            self.messages.append(Message(args["channel_id"], self.next_ts(), str(args.get("initial_comment") or ""),
                                         BOT_USER, args.get("thread_ts"), files=done, posted_at=time.monotonic()))
        return {"ok": True, "files": done}, {}

    def _files_info(self, args: dict[str, Any], token: str) -> tuple[dict[str, Any], dict[str, str]]:
        file = self.files.get(args.get("file", ""))
        if file is None:
            return {"ok": False, "error": "file_not_found"}, {}
        return {"ok": True, "file": file}, {}

    async def _upload(self, request: web.Request) -> web.Response:
        pending = self._pending.get(request.match_info["file_id"])
        if pending is None:
            return web.Response(status=404, text="not found")
        pending["content"] = await request.read()
        return web.Response(text=f"OK - {len(pending['content'])}")

    async def _download(self, request: web.Request) -> web.Response:
        content = self._contents.get(request.match_info["file_id"])
        if request.headers.get("Authorization") != f"Bearer {BOT_TOKEN}":
            return web.Response(text=LOGIN_PAGE, content_type="text/html")  # what Slack does
        if content is None:
            return web.Response(status=404, text="not found")
        return web.Response(body=content, content_type="application/octet-stream")

    def _find(self, channel: str, ts: str) -> Message | None:
        return next((m for m in self.messages if m.channel == channel and m.ts == ts), None)

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()


def _cursor(offset: int) -> str:
    return base64.b64encode(f"offset:{offset}".encode()).decode()


def _cursor_offset(cursor: str) -> int:
    return int(base64.b64decode(cursor).decode().partition(":")[2]) if cursor else 0


def _apply_chunks(message: Message, args: dict[str, Any]) -> None:
    """What a streamed message shows after ``chunks`` (and ``markdown_text``) arrive."""
    chunks = list(args.get("chunks") or [])
    if args.get("markdown_text"):
        chunks.insert(0, {"type": "markdown_text", "text": args["markdown_text"]})
    for chunk in chunks:
        message.chunks.append(chunk)
        kind = chunk.get("type")
        if kind == "markdown_text":
            message.text += str(chunk.get("text", ""))
        elif kind == "task_update":
            message.tasks[str(chunk["id"])] = {**message.tasks.get(str(chunk["id"]), {}), **chunk}
        elif kind == "plan_update":
            message.plan_title = str(chunk.get("title", ""))
        elif kind == "blocks":
            message.blocks.extend(chunk.get("blocks") or [])


# -- payloads, as Slack sends them -------------------------------------------------------------

def message_event(message: Message, kind: str = "app_mention", files: tuple[dict[str, Any], ...] = (),
                  channel_type: str = "channel", **extra: Any) -> dict[str, Any]:
    event: dict[str, Any] = {"type": kind, "user": message.user, "text": message.text, "ts": message.ts,
                             "channel": message.channel, "event_ts": message.ts, "client_msg_id": f"c-{message.ts}"}
    if kind == "message":
        event["channel_type"] = channel_type
    if message.thread_ts:
        event["thread_ts"] = message.thread_ts
    if files:
        event["files"] = list(files)
        if kind == "message":
            event["subtype"] = "file_share"
    return {**event, **extra}


def event_callback(event: dict[str, Any], event_id: str) -> dict[str, Any]:
    return {"token": "legacy", "team_id": TEAM, "api_app_id": APP_ID, "event": event, "type": "event_callback",
            "event_id": event_id, "event_time": int(time.time()),
            "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True}]}


def events_envelope(event: dict[str, Any], event_id: str, retry_attempt: int = 0) -> dict[str, Any]:
    return {"envelope_id": f"env-{event_id}-{retry_attempt}", "type": "events_api", "accepts_response_payload": False,
            "retry_attempt": retry_attempt, "retry_reason": "timeout" if retry_attempt else "",
            "payload": event_callback(event, event_id)}


def block_action(user: str, message: Message, action_id: str, value: str) -> dict[str, Any]:
    return {"type": "block_actions", "user": {"id": user, "team_id": TEAM}, "api_app_id": APP_ID, "token": "legacy",
            "team": {"id": TEAM}, "channel": {"id": message.channel}, "container": {"type": "message",
            "message_ts": message.ts, "channel_id": message.channel}, "trigger_id": "1.2.3",
            "message": {"type": "message", "ts": message.ts, "thread_ts": message.thread_ts, "text": message.text,
                        "user": message.user, "bot_id": BOT_ID},
            "actions": [{"type": "button", "action_id": action_id, "block_id": "b1", "value": value,
                         "action_ts": str(time.time())}]}


def interactive_envelope(payload: dict[str, Any], envelope_id: str) -> dict[str, Any]:
    return {"envelope_id": envelope_id, "type": "interactive", "accepts_response_payload": False, "payload": payload}


def signed_headers(body: str, secret: str = SIGNING_SECRET, timestamp: int | None = None) -> dict[str, str]:
    """The headers Slack signs an HTTP request with (``v0`` HMAC-SHA256 of timestamp and body)."""
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    signature = SignatureVerifier(secret).generate_signature(timestamp=stamp, body=body)
    return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": str(signature),
            "Content-Type": "application/json"}


def _too_long(args: dict[str, Any]) -> dict[str, Any] | None:
    """Slack's refusal of a message over its limits: 40,000 characters of text, 3,000 in a section block's text."""
    if len(str(args.get("text", ""))) > TEXT_LIMIT:
        return {"ok": False, "error": "msg_too_long"}
    for index, block in enumerate(args.get("blocks") or []):
        text = (block.get("text") or {}).get("text", "") if isinstance(block, dict) else ""
        if len(text) > SECTION_TEXT_LIMIT:
            return {"ok": False, "error": "invalid_blocks",
                    "errors": [f"must be less than {SECTION_TEXT_LIMIT + 1} characters [json-pointer:/blocks/{index}/text/text]"]}
    return None
