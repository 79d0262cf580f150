"""``serve``: the webhook server on the platform's own port until cancelled (``GITHUB_WEBHOOK_SECRET``), answering
on pull requests with ``GITHUB_TOKEN`` or the GitHub App's installation (PyGithub refreshes its token)."""

from __future__ import annotations

import asyncio
import logging

from aiohttp import web
from github import Auth

from adapters.github.api import PullRequestApi
from adapters.github.handlers import GitHubBot
from adapters.github.thread import GitHubThread
from adapters.github.webhook import Webhook, webhook_app
from bot.config.sections import Config, ConfigError, Secrets
from bot.repos.desk import AppCredentials
from bot.runs.service import Service

log = logging.getLogger(__name__)

SHUTDOWN_GRACE_S = 10.0  # how long a stopping bot waits for its pull requests to say their runs stopped


async def serve(service: Service, config: Config, secrets: Secrets) -> None:
    settings = config.github
    if not secrets.github_webhook_secret:
        raise ConfigError("GITHUB_WEBHOOK_SECRET is not set: set a secret on the repository's webhook and export "
                          "the same value, so each delivery can be verified")
    auth, secret = _auth(secrets)
    bot = GitHubBot(service, config, PullRequestApi(config.checkin, auth, secret))
    webhook = Webhook(secrets.github_webhook_secret, service.first_sighting, service.nudges, bot.on_comment,
                      inbox=service if service.keeps_events else None, asks=bot.asks)
    runner = web.AppRunner(webhook_app(webhook, settings.path, service.health), access_log=None)
    await runner.setup()
    try:
        try:
            await web.TCPSite(runner, settings.host, settings.port).start()
        except OSError as error:
            raise ConfigError(f"github.port: cannot listen on {settings.host}:{settings.port} "
                              f"({error.strerror or error}): pick a free port") from None
        log.warning("github: webhook on %s:%d%s", settings.host, settings.port, settings.path)

        async def open_thread(conversation: str) -> GitHubThread:
            return bot.thread(conversation)

        await service.online(bot.platform, open_thread)
        if not service.keeps_events:
            await asyncio.Event().wait()
        while True:  # every heartbeat, the comments a replica kept and died taking
            await asyncio.sleep(config.storage.heartbeat_s)
            try:
                await webhook.replay_unhandled(config.storage.owner_lost_after_s)
            except Exception:  # the database away, say: the next round tries again
                log.warning("github: could not look for comments left untaken", exc_info=True)
    finally:
        await webhook.close()
        await bot.shutdown(SHUTDOWN_GRACE_S)
        await runner.cleanup()


def _auth(secrets: Secrets) -> tuple[Auth.Auth, str]:
    """The GitHub App's installation when it is set (its tokens refreshed as they expire), else GITHUB_TOKEN."""
    app = AppCredentials.from_secrets(secrets)
    if app is not None:
        return Auth.AppAuth(app.app_id, app.private_key).get_installation_auth(app.installation_id), app.private_key
    if not secrets.github_token:
        raise ConfigError("GITHUB_TOKEN is not set: the bot answers on pull requests with it (or set GITHUB_APP_ID, "
                          "GITHUB_APP_PRIVATE_KEY and GITHUB_APP_INSTALLATION_ID)")
    return Auth.Token(secrets.github_token), secrets.github_token
