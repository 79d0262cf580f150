"""What the bot accepts from Discord, decided in one place before any work: a ``/code`` interaction shaped
as Discord sends one (a text task, an attachment that resolves), and gateway events discord.py can read.
Anything else gets one sentence for the person (where Discord lets the bot answer) and one log line."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import discord

log = logging.getLogger(__name__)

COMMAND = "code"
UNKNOWN_COMMAND = "This bot has one command: /code task:<what the code should do>."
NO_TASK = "/code needs a task: what the code should do."
TASK_NOT_TEXT = "The task must be text: what the code should do."
BAD_FILE = "The attached file did not come through; attach it again."


def command_problem(interaction: discord.Interaction) -> str:
    """Why an application command is not a ``/code`` the handlers can take; empty when it is."""
    data: Any = interaction.data or {}
    if not isinstance(data, dict) or data.get("type", 1) != 1 or data.get("name") != COMMAND:
        return UNKNOWN_COMMAND
    options = data.get("options") or []
    if not isinstance(options, list) or not all(isinstance(o, dict) for o in options):
        return NO_TASK
    given = {o.get("name"): o.get("value") for o in options}
    task = given.get("task")
    if task is None:
        return NO_TASK
    if not isinstance(task, str):
        return TASK_NOT_TEXT  # a blank one is the service's to refuse, as on every platform
    if "file" in given:
        resolved = (data.get("resolved") or {}).get("attachments") or {}
        if not isinstance(given["file"], str) or not isinstance(resolved, dict) or given["file"] not in resolved:
            return BAD_FILE
    return ""


async def refuse(interaction: discord.Interaction, why: str) -> None:
    """Answer an interaction the bot will not act on; an autocomplete gets no suggestions (there are none)."""
    name = (interaction.data or {}).get("name", "?") if isinstance(interaction.data, dict) else "?"
    log.warning("discord: refused /%s from user %s: %s", name, interaction.user.id if interaction.user else "?", why)
    try:
        if interaction.type is discord.InteractionType.autocomplete:
            await interaction.response.autocomplete([])
        else:
            await interaction.response.send_message(why, ephemeral=True)
    except discord.HTTPException as error:
        log.warning("discord: could not answer interaction %s (%s)", interaction.id, error.status)


def guard_parsers(parsers: dict[str, Callable[[Any], Any]]) -> None:
    """Make each gateway event's parser skip an event it cannot read (a field of the wrong type), with one
    log line, rather than end the connection and the bot with it."""
    for event, parse in list(parsers.items()):
        parsers[event] = _guarded(event, parse)


def _guarded(event: str, parse: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def guarded(data: Any) -> Any:
        try:
            return parse(data)
        except Exception as error:  # discord.py's models assume well-formed data
            log.warning("discord: skipped a %s event discord.py could not read (%s: %s)", event,
                        type(error).__name__, str(error)[:200])
            return None
    return guarded
