"""``serve``: a slack-bolt ``AsyncApp`` until cancelled, over Socket Mode (``SLACK_APP_TOKEN``, no public
URL needed) or HTTP (``SLACK_SIGNING_SECRET``, a public Request URL); ``doctor_checks``: whether the
tokens and scopes are right."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

import aiohttp
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry.builtin_async_handlers import AsyncConnectionErrorRetryHandler, AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.doctor import token_checks
from adapters.slack.handlers import SlackBot
from adapters.slack.http import serve_http
from adapters.slack.thread import SlackThread
from bot.config.doctor_types import CheckResult
from bot.config.sections import Config, ConfigError, Secrets, SlackConfig
from bot.health.checks import Connected
from bot.runs.service import Service

log = logging.getLogger(__name__)


async def serve(service: Service, config: Config, secrets: Secrets) -> None:
    """Take Slack events until cancelled."""
    settings = config.slack
    _require(settings, secrets)
    async with aiohttp.ClientSession() as session:  # one connection pool for the Web API and downloads
        client = web_client(settings, secrets.slack_bot_token, session)
        await _check_bot_token(client, settings)
        bot = SlackBot(service, config, client, session)
        app = build_app(bot, client, secrets.slack_signing_secret, http=settings.mode == "http")
        async def open_thread(thread_key: str) -> SlackThread:
            channel, _, thread_ts = thread_key.partition(":")
            return SlackThread(client, channel, thread_ts)

        async def online(connected: Connected) -> None:
            await service.online(bot.platform, open_thread, connected)
            if service.keeps_events and not replaying:
                replaying.append(asyncio.create_task(_replay_unhandled(bot, config), name="slack replay"))

        replaying: list[asyncio.Task[None]] = []

        try:
            if settings.mode == "http":
                log.warning("slack: HTTP mode on %s:%d%s", settings.http_host, settings.http_port, settings.http_path)
                await serve_http(app, settings, secrets.slack_signing_secret, service.health,
                                 listening=lambda: online(lambda: True))
            else:
                await _serve_socket(app, secrets.slack_app_token, online)
        finally:
            for task in replaying:
                task.cancel()
            await bot.shutdown()  # its threads say the runs stopped, while the session is still open


async def _replay_unhandled(bot: SlackBot, config: Config) -> None:
    """Every heartbeat, the events a replica kept and died handling (older than the time a replica is taken for
    dead after) are handled here."""
    while True:
        await asyncio.sleep(config.storage.heartbeat_s)
        try:
            await bot.replay_unhandled(config.storage.owner_lost_after_s)
        except Exception:  # the database away, say: the next round tries again
            log.warning("slack: could not look for events left unhandled", exc_info=True)


async def doctor_checks(config: Config, secrets: Secrets) -> list[CheckResult]:
    settings = config.slack
    if not secrets.slack_bot_token:
        return [CheckResult("slack bot token", False, "SLACK_BOT_TOKEN is not set",
                            "copy the Bot User OAuth Token (xoxb-…) from the app's OAuth & Permissions page")]
    bot = web_client(settings, secrets.slack_bot_token)
    app = web_client(settings, secrets.slack_app_token) if secrets.slack_app_token else None
    return await token_checks(settings, bot, app, secrets.slack_signing_secret)


def web_client(settings: SlackConfig, token: str, session: aiohttp.ClientSession | None = None) -> AsyncWebClient:
    """The Web API client: the configured base URL (GovSlack, tests), 429s retried after Retry-After."""
    return AsyncWebClient(
        token=token, base_url=_with_slash(settings.api_url), timeout=int(settings.request_timeout_s), session=session,
        retry_handlers=[AsyncConnectionErrorRetryHandler(),
                        AsyncRateLimitErrorRetryHandler(max_retry_count=settings.max_rate_limit_retries)],
    )


def build_app(bot: SlackBot, client: AsyncWebClient, signing_secret: str, http: bool) -> AsyncApp:
    app = AsyncApp(
        client=client, signing_secret=signing_secret,
        request_verification_enabled=http,  # Socket Mode has no signatures: the app token authenticates
        process_before_response=False,  # ack first, then run the handler
        logger=logging.getLogger("slack_bolt"),
    )
    bot.register(app)
    return app


async def _check_bot_token(client: AsyncWebClient, settings: SlackConfig) -> None:
    """Fail at start with one sentence, rather than on every event later (bolt checks lazily)."""
    try:
        await client.auth_test()
    except SlackApiError as error:
        raise ConfigError(f"Slack refused SLACK_BOT_TOKEN ({error.response.get('error')}): copy the app's Bot User "
                          "OAuth Token (xoxb-…), or run `codegen-chat doctor`") from None
    except (SlackClientError, aiohttp.ClientError, TimeoutError, OSError) as error:
        raise ConfigError(f"Slack did not answer at {settings.api_url} ({type(error).__name__}): check slack.api_url "
                          "and the network") from None


async def _serve_socket(app: AsyncApp, app_token: str, online: Callable[[Connected], Awaitable[None]]) -> None:
    # The SDK retries a refused connection forever (right for a network blip, not for a bad token),
    # so the token is tried once first; asking for a websocket URL opens no connection.
    try:
        await app.client.apps_connections_open(app_token=app_token)
    except SlackApiError as error:
        raise ConfigError(f"Slack refused SLACK_APP_TOKEN ({error.response.get('error')}): it must be an app-level "
                          "token (xapp-…) with connections:write, and Socket Mode must be on") from None
    handler = AsyncSocketModeHandler(app, app_token)
    await handler.connect_async()
    log.warning("slack: connected over Socket Mode")
    try:
        await online(handler.client.is_connected)  # the SDK reconnects by itself; this says if it is now
        await asyncio.Event().wait()
    finally:
        await handler.close_async()


def _require(settings: SlackConfig, secrets: Secrets) -> None:
    if not secrets.slack_bot_token:
        raise ConfigError("SLACK_BOT_TOKEN is not set: export the app's Bot User OAuth Token (xoxb-…)")
    if settings.mode == "socket" and not secrets.slack_app_token:
        raise ConfigError("SLACK_APP_TOKEN is not set: Socket Mode needs an app-level token (xapp-…) with "
                          "connections:write, or set slack.mode = \"http\"")
    if settings.mode == "http" and not secrets.slack_signing_secret:
        raise ConfigError("SLACK_SIGNING_SECRET is not set: HTTP mode verifies every request with it")


def _with_slash(url: str) -> str:
    return url if url.endswith("/") else url + "/"
