"""``codegen-chat serve``: runs the enabled chat adapters (Slack, Discord) until stopped."""

from __future__ import annotations

import argparse

from agents.errors import UserInputError
from bot.config import Config, Secrets
from bot.doctor_types import CheckResult


def register(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    serve = commands.add_parser("serve", help="run the Slack and/or Discord bot")
    serve.set_defaults(handler=_serve)


async def _serve(args: argparse.Namespace, config: Config, secrets: Secrets) -> int:
    if not (config.slack.enabled or config.discord.enabled):
        raise UserInputError("No chat adapter is enabled: set slack.enabled or discord.enabled in the config.")
    raise UserInputError("The chat adapters are not available in this build yet.")


async def chat_checks(config: Config, secrets: Secrets) -> list[CheckResult]:
    return []
