"""``POST /github/webhook``: GitHub's deliveries, on a real aiohttp server that also answers the health probes.

Each delivery, in order: before its body is read (anyone may send one, and it cannot be verified unread), a
``X-Hub-Signature-256`` of the right form or 401, an event the bot never acts on 204, a body longer than any it
acts on 413; then the signature itself (constant time) or 401; a ping answered; JSON or 400; a redelivery (its
``X-GitHub-Delivery`` seen before, by any replica sharing the store) answered 200 and dropped; then a CI event
nudges whatever follows that commit (``bot.ci.nudges``: the follower reads the API itself), a comment is handed to
the bot in a task of its own, and any other event is 204. GitHub gives a delivery ten seconds: nothing here waits
for a run, nor for any call to GitHub.

Replicas sharing a store keep a comment's delivery before answering it (``Inbox``), and mark it handled once the
bot has taken it (its run queued, or refused with a reply): GitHub never sends a delivery again by itself, so a
replica that stops or dies while it takes one leaves it to another (``replay_unhandled``), not lost.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol

from aiohttp import web

from adapters.github.events import CI_EVENTS, ISSUE_COMMENT, REVIEW, REVIEW_COMMENT, Comment, comment_of, commit_of
from adapters.github.platform import PLATFORM
from adapters.github.signature import signed
from bot.ci.nudges import CiNudges
from bot.health.checks import Health
from bot.health.http import health_routes
from bot.store.errors import StoreError

log = logging.getLogger(__name__)

# GitHub caps a payload at 25 MB, but a comment's or review's delivery (its text at most 65,536 characters, the
# issue's or pull request's beside it) or a CI event's is far smaller: unverified bytes held in memory stay few.
MAX_BODY_BYTES = 5 * 1024 * 1024
ACTED_ON = frozenset({"ping", ISSUE_COMMENT, REVIEW_COMMENT, REVIEW, *CI_EVENTS})
SIGNATURE_FORM = re.compile(r"sha256=[0-9a-fA-F]{64}")
FirstSighting = Callable[[str], Awaitable[bool]]
OnComment = Callable[..., Coroutine[Any, Any, None]]  # (comment, replayed=False)


class Inbox(Protocol):
    """Where replicas keep the events they acknowledged until one has handled them (``bot.runs.service``)."""

    async def received(self, platform: str, key: str, payload: str) -> None: ...
    async def handled(self, platform: str, key: str) -> None: ...
    async def unhandled(self, platform: str, older_than_s: float) -> list[tuple[str, str]]: ...


class Webhook:
    def __init__(self, secret: str, first_sighting: FirstSighting, nudges: CiNudges, on_comment: OnComment,
                 inbox: Inbox | None = None, asks: Callable[[Comment], object] = bool) -> None:
        """``asks``: whether a comment asks anything of the bot; only those are kept in the ``inbox``."""
        self._secret, self._first_sighting = secret, first_sighting
        self._nudges, self._on_comment, self._inbox, self._asks = nudges, on_comment, inbox, asks
        self._tasks: set[asyncio.Task[None]] = set()  # the comments being taken

    async def receive(self, request: web.Request) -> web.Response:
        signature, event = request.headers.get("X-Hub-Signature-256", ""), request.headers.get("X-GitHub-Event", "")
        if not SIGNATURE_FORM.fullmatch(signature.strip()):
            return self._unsigned(request)
        if event not in ACTED_ON:
            return web.Response(status=204)  # nothing in it would be read
        if (request.content_length or 0) > MAX_BODY_BYTES:
            return web.Response(status=413, text="Larger than any delivery the bot acts on.")
        body = await request.read()  # at most MAX_BODY_BYTES (client_max_size), else 413
        if not signed(body, signature, self._secret):
            return self._unsigned(request)
        if event == "ping":
            return web.json_response({"pong": True})
        try:
            payload = json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError):
            return web.Response(status=400, text="The body is not JSON.")
        delivery = request.headers.get("X-GitHub-Delivery", "")
        if not isinstance(payload, dict) or not delivery:
            return web.Response(status=400, text="Not a GitHub delivery (a JSON object and X-GitHub-Delivery).")
        if not await self._first_sighting(f"github:delivery:{delivery}"):
            return web.Response(text="Already delivered.")
        commit = commit_of(event, payload)
        if commit is not None:
            self._nudges.nudge(*commit)
            return web.Response(status=202, text="Noted.")
        comment = comment_of(event, payload)
        if comment is not None:
            kept = await self._keep(delivery, event, payload) if self._asks(comment) else ""
            task = asyncio.create_task(self._take(comment, kept), name=f"github-{comment.key}")
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            return web.Response(status=202, text="Taken.")
        return web.Response(status=204)

    async def _keep(self, delivery: str, event: str, payload: dict[str, Any]) -> str:
        """The key the delivery is kept under until it is handled; "" when it is not kept."""
        if self._inbox is None:
            return ""
        try:
            await self._inbox.received(PLATFORM, delivery, json.dumps({"event": event, "payload": payload}))
        except StoreError as error:  # GitHub would not send it again: taken here all the same, unkept
            log.warning("github: delivery %s taken without being kept for another replica: %s", delivery, error)
            return ""
        return delivery

    async def _take(self, comment: Comment, kept: str, replayed: bool = False) -> None:
        """The bot takes the comment; then its delivery is handled. Cancelled (this replica stopping) it is not:
        another replica takes it again."""
        await self._on_comment(comment, replayed=replayed)
        if kept and self._inbox is not None:
            try:
                await self._inbox.handled(PLATFORM, kept)
            except StoreError as error:
                log.warning("github: delivery %s was handled, but the store could not note it: %s", kept, error)

    async def replay_unhandled(self, older_than_s: float) -> None:
        """Take the comments a replica kept, acknowledged and did not finish taking (a run it already queued for
        one is not queued again: a comment starts one run)."""
        if self._inbox is None:
            return
        for delivery, kept in await self._inbox.unhandled(PLATFORM, older_than_s):
            data = json.loads(kept)
            comment = comment_of(str(data.get("event", "")), data.get("payload") or {})
            log.warning("github: taking delivery %s, which a replica kept and did not finish taking", delivery)
            if comment is None:
                await self._inbox.handled(PLATFORM, delivery)
                continue
            await self._take(comment, delivery, replayed=True)

    def _unsigned(self, request: web.Request) -> web.Response:
        log.warning("github: refused a delivery from %s: missing or wrong signature", request.remote)
        return web.Response(status=401, text="Missing or wrong X-Hub-Signature-256.")

    async def close(self) -> None:
        """Stop taking the comments still being looked at (the runs they started stop with the service)."""
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks)


def webhook_app(webhook: Webhook, path: str, health: Health | None) -> web.Application:
    app = web.Application(client_max_size=MAX_BODY_BYTES)
    app.router.add_post(path, webhook.receive)
    if health is not None:
        app.add_routes(health_routes(health))
    else:  # a service built without health checks (a test, an embedding): alive is all it can say
        app.router.add_get("/healthz", _alive)
    return app


async def _alive(_: web.Request) -> web.Response:
    return web.json_response({"alive": True})
