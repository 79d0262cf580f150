"""The web chat's HTTP side: the page, its assets, and a small JSON API with one server-sent event stream.

    GET  /  /c/{key}                        the page (a conversation's address is /c/{key})
    GET  /static/...                        its JavaScript, CSS and the vendored libraries
    GET  /login  POST /login                signing in with the access token (when one is set)
    POST /logout                            signing out: the browser forgets its session
    GET  /api/session                       who is signed in, and the input limits the page checks first
    GET  /api/conversations                 the person's conversations
    GET  /api/conversations/{key}           whether a conversation is the person's (404 when not)
    POST /api/conversations                 a new conversation with its first task
    POST /api/conversations/{key}/tasks     a follow-up in a conversation
    POST /api/runs/{run_id}/stop            Stop, for the person who started the run
    GET  /api/conversations/{key}/files.zip the conversation's latest files
    GET  /api/stream?c={key}                the live stream: a snapshot, then changes (``conversation``)

Every refusal is one sentence in ``{"error": ...}``; nothing else about a failure leaves the process.
"""

from __future__ import annotations

import asyncio
import html
import io
import json
import logging
import uuid
import zipfile
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from adapters.web.access import SESSION_COOKIE, SESSION_S, ASGIApp, Gate, Guard
from adapters.web.conversation import Conversation, Op, Watcher
from adapters.web.hub import Hub, new_key
from adapters.web.platform import PLATFORM
from adapters.web.tasks import Task, TooLarge, body_limit, parse_task, read_body
from agents.errors import UserInputError
from bot.chat.access import Place
from bot.chat.renderer import Redact
from bot.chat.thread import ChatPlatform
from bot.config.sections import InputConfig
from bot.runs.service import Arrival, ChatRequest, Prepared, Service

log = logging.getLogger(__name__)

STATIC = Path(str(resources.files("adapters.web") / "static"))
KEEPALIVE_S = 15.0  # a comment this often keeps proxies from closing an idle stream
INTERNAL_ERROR = "Something went wrong on the bot's side; the details are in its log."
NOT_FOUND = "No such conversation: it may have been started by someone else, or not at all."


@dataclass
class WebChat:
    """Requests from the page, translated into the service's calls."""

    service: Service
    hub: Hub
    platform: ChatPlatform
    limits: InputConfig
    gate: Gate
    redact: Redact

    # -- the page -----------------------------------------------------------------------------

    async def page(self, request: Request) -> Response:
        return HTMLResponse((STATIC / "index.html").read_text(encoding="utf-8"), headers={"cache-control": "no-store"})

    async def login_page(self, request: Request) -> Response:
        return HTMLResponse(sign_in_page("", form=bool(self.gate.token)))

    async def login(self, request: Request) -> Response:
        body = await read_body(request.stream(), 4096, self.limits)
        offered = (parse_qs(body.decode("utf-8", "replace")).get("token") or [""])[0].strip()
        if not self.gate.token or not self.gate.token_matches(offered):
            return HTMLResponse(sign_in_page("That is not the access token.", form=True), status_code=401)
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(SESSION_COOKIE, self.gate.new_session(), max_age=SESSION_S, httponly=True,
                            samesite="strict", secure=self._over_https(request))
        return response

    async def logout(self, request: Request) -> Response:
        response = RedirectResponse("/", status_code=303)  # the sign-in page, with the token asked for again
        response.delete_cookie(SESSION_COOKIE, httponly=True, samesite="strict", secure=self._over_https(request))
        return response

    def _over_https(self, request: Request) -> bool:
        """Whether the page was loaded over TLS: here, or at a listed proxy that says so (the server no longer
        takes the scheme from any sender's X-Forwarded-Proto)."""
        client = request.client.host if request.client else ""
        forwarded = request.headers.get("x-forwarded-proto", "").strip().lower()
        return request.url.scheme == "https" or (forwarded == "https" and self.gate.from_proxy(client))

    # -- the API ------------------------------------------------------------------------------

    async def session(self, request: Request) -> Response:
        return JSONResponse({
            "user": request.state.user, "sign_in": bool(self.gate.token),
            "max_task_chars": self.limits.max_task_chars, "max_attachments": self.limits.max_attachments,
            "max_attachment_bytes": self.limits.max_attachment_bytes,
        })

    async def conversations(self, request: Request) -> Response:
        return JSONResponse({"conversations": await self.hub.conversations(request.state.user)})

    async def conversation(self, request: Request) -> Response:
        conversation = await self.hub.open(request.path_params["key"], request.state.user)
        if conversation is None:
            return _refusal(NOT_FOUND, 404)
        return JSONResponse({"conversation": conversation.key})

    async def start(self, request: Request) -> Response:
        user = request.state.user
        task = await self._task(request)
        key = new_key()
        chat_request = ChatRequest(PLATFORM, key, user, task.text, task.attachments)
        self.service.check(chat_request)  # refused before anything shows
        conversation = self.hub.new(key, user)
        try:
            run_id = await self._run(conversation, chat_request)
        except BaseException:
            self.hub.forget(conversation)
            raise
        return JSONResponse({"conversation": key, "run": run_id})

    async def follow_up(self, request: Request) -> Response:
        user = request.state.user
        conversation = await self.hub.open(request.path_params["key"], user)
        if conversation is None:
            return _refusal(NOT_FOUND, 404)
        task = await self._task(request)
        chat_request = ChatRequest(PLATFORM, conversation.key, user, task.text, task.attachments)
        self.service.check(chat_request)
        return JSONResponse({"conversation": conversation.key, "run": await self._run(conversation, chat_request)})

    async def stop(self, request: Request) -> Response:
        user, run_id = request.state.user, request.path_params["run_id"]
        if self.hub.with_run(run_id, user) is None:  # only a Stop control the person can see: their own run's
            starter = await self.service.starter_anywhere(run_id)
            if starter is None:  # a Stop still on a page (another tab, a late update) after its run ended
                return _refusal("This run is not running any more.", 409)
            if starter != user:
                return _refusal("Only the person who started this run can stop it.", 403)
        refused = await self.service.stop(run_id, Place(user), self.platform)
        if refused:
            return _refusal(refused, 409)
        return JSONResponse({"stopping": run_id})

    async def files_zip(self, request: Request) -> Response:
        key = request.path_params["key"]
        if await self.hub.open(key, request.state.user) is None:
            return _refusal(NOT_FOUND, 404)
        files = (await self.hub.panel(key)).get("files", [])
        if not files:
            return _refusal("This conversation has no files yet.", 404)
        data = await asyncio.to_thread(_zip, {f["name"]: f["content"] for f in files})
        return Response(data, media_type="application/zip",
                        headers={"content-disposition": f'attachment; filename="codegen-{key[:8]}.zip"'})

    async def stream(self, request: Request) -> Response:
        user, key = request.state.user, request.query_params.get("c", "")
        conversation = await self.hub.open(key, user) if key else None
        if key and conversation is None:
            return _refusal(NOT_FOUND, 404)
        watcher = self.hub.watch(user, conversation)  # first: what changes from here on is sent after the snapshot
        snapshot: Op = {"type": "snapshot", "conversation": key, "messages": conversation.snapshot() if conversation else [],
                        "panel": conversation.panel if conversation else {},
                        "working": conversation.working_text if conversation else ""}
        try:
            snapshot["conversations"] = await self.hub.conversations(user)
        except BaseException:
            self.hub.unwatch(watcher, conversation)
            raise
        return StreamingResponse(self._events(watcher, conversation, snapshot), media_type="text/event-stream",
                                 headers={"cache-control": "no-store", "x-accel-buffering": "no"})

    async def _events(self, watcher: Watcher, conversation: Conversation | None, snapshot: Op) -> AsyncIterator[str]:
        try:
            yield _event(snapshot)
            while True:
                try:
                    op = await asyncio.wait_for(watcher.queue.get(), KEEPALIVE_S)
                except TimeoutError:
                    yield ": keep-alive\n\n"
                    continue
                if op is None:  # dropped for falling behind, or the server is stopping: the page reconnects
                    return
                yield _event(op)
        finally:
            self.hub.unwatch(watcher, conversation)

    # -- one task -----------------------------------------------------------------------------

    async def _task(self, request: Request) -> Task:
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            raise UserInputError("Send the task as JSON, the way the page does.")
        body = await read_body(request.stream(), body_limit(self.limits), self.limits)
        return parse_task(body, self.limits)

    async def _run(self, conversation: Conversation, request: ChatRequest) -> str:
        """Show the person's message, then have the service draw the run after it."""
        arrival = Arrival(f"task:{uuid.uuid4().hex}", request.thread_key, Place(request.user_id), request.text,
                          addressed=True)
        said: list[str] = []

        async def prepare() -> Prepared:
            said.append(conversation.say(self.redact(request.text.strip()),
                                         tuple(self.redact(a.name) for a in request.attachments)))
            return Prepared(request, conversation)

        try:
            taken = await self.service.take(arrival, self.platform, prepare)
            if taken.run is None:
                raise UserInputError(taken.refusal or "The bot could not start this run; try again in a moment.")
        except BaseException:
            for message in said:
                conversation.remove(message)
            raise
        return taken.run.run_id


def build_app(chat: WebChat, public_routes: Sequence[BaseRoute] = ()) -> Starlette:
    """The ASGI app. ``public_routes`` (health probes, say) are served without signing in."""
    routes: list[BaseRoute] = [
        *public_routes,
        Route("/", chat.page),
        Route("/c/{key}", chat.page),
        Route("/login", chat.login_page, methods=["GET"]),
        Route("/login", chat.login, methods=["POST"]),
        Route("/logout", chat.logout, methods=["POST"]),
        Route("/api/session", chat.session),
        Route("/api/conversations", chat.conversations, methods=["GET"]),
        Route("/api/conversations", chat.start, methods=["POST"]),
        Route("/api/conversations/{key}", chat.conversation, methods=["GET"]),
        Route("/api/conversations/{key}/tasks", chat.follow_up, methods=["POST"]),
        Route("/api/conversations/{key}/files.zip", chat.files_zip),
        Route("/api/runs/{run_id}/stop", chat.stop, methods=["POST"]),
        Route("/api/stream", chat.stream),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    public = ["/login", "/logout", "/static/", *(getattr(route, "path", "") for route in public_routes)]
    app = Starlette(routes=routes, exception_handlers={UserInputError: _user_error, ClientDisconnect: _hung_up,
                                                       Exception: _internal_error})
    app.add_middleware(_GuardMiddleware, gate=chat.gate, public=[p for p in public if p])
    return app


class _GuardMiddleware(Guard):
    def __init__(self, app: ASGIApp, gate: Gate, public: list[str]) -> None:
        super().__init__(app, gate, public, lambda problem: sign_in_page(problem, form=bool(gate.token)).encode())


def sign_in_page(problem: str, form: bool) -> str:
    """The sign-in page with ``problem`` said on it; without its form when there is no token to give."""
    text = (STATIC / "login.html").read_text(encoding="utf-8").replace("<!--problem-->", html.escape(problem))
    if not form:
        start, end = text.index("<!--form-->"), text.index("<!--/form-->")
        text = text[:start] + text[end:]
    return text


async def _user_error(request: Request, error: Exception) -> Response:
    return _refusal(str(error), 413 if isinstance(error, TooLarge) else 400)


async def _hung_up(request: Request, error: Exception) -> Response:
    """The page went away before its request arrived whole (a closed tab, a dropped network): nothing was started,
    and nobody is left to answer; one line in the log, not a failure."""
    log.info("web request %s %s: the client hung up before sending it whole", request.method, request.url.path)
    return Response(status_code=400)


async def _internal_error(request: Request, error: Exception) -> Response:
    log.error("web request %s %s failed", request.method, request.url.path, exc_info=error)
    return _refusal(INTERNAL_ERROR, 500)


def _refusal(sentence: str, status: int) -> JSONResponse:
    return JSONResponse({"error": sentence}, status_code=status)


def _event(op: Op) -> str:
    return f"data: {json.dumps(op, ensure_ascii=False)}\n\n"


def _zip(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()
