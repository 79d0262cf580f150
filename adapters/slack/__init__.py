"""Slack: mention the bot (or DM it) and watch the team work in the thread. Translation only:

    app        serve (Socket Mode or HTTP) and doctor_checks
    handlers   events and Stop presses in, calls to the service out
    messages   a message event as the service sees it: where, who, the task, whether it names the bot
    platform   Slack as the core sees it: markup, thread style, allowlists
    thread     the ChatThread: chat.postMessage / chat.update, the Stop button, file snippets
    markup     Markdown to mrkdwn
    files      files shared with a task, downloaded with the bot token
    http       the HTTP mode server
    doctor     token and scope checks
"""

from adapters.slack.app import doctor_checks, serve
from bot.config.sections import Config
from bot.runs.plugin import PlatformPlugin


def _http_address(config: Config) -> tuple[str, int] | None:
    """In HTTP mode Slack's events server also answers the health probes."""
    settings = config.slack
    return (settings.http_host, settings.http_port) if settings.mode == "http" else None


PLATFORM = PlatformPlugin("slack", serve, doctor_checks, secrets=("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET"),
                          health_address=_http_address)

__all__ = ["PLATFORM", "doctor_checks", "serve"]
