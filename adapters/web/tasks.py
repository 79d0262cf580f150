"""A task as the page sends it: JSON ``{"task": "...", "files": [{"name": "...", "data": "<base64>"}]}``.

Files travel as base64 so the bot, not the browser, decides what is text: a binary, non-UTF-8 or oversized
file is refused by the same rule as everywhere (``bot.runs.attachments``), with a sentence naming it. The body is
read with a cap, so an oversized request is refused before it is held in memory.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from agents.errors import UserInputError
from agents.types import Attachment
from bot.config.sections import InputConfig
from bot.runs.attachments import to_attachment

SLACK_BYTES = 64 * 1024  # the JSON around the task and files


class TooLarge(UserInputError):
    """The request is larger than any acceptable task could be."""


@dataclass(frozen=True)
class Task:
    text: str
    attachments: tuple[Attachment, ...]


def body_limit(limits: InputConfig) -> int:
    """The largest body a task within the limits can need: the task and every file, base64-encoded."""
    per_file = limits.max_attachment_bytes * 4 // 3 + 4 + 1024
    return limits.max_task_chars * 4 + limits.max_attachments * per_file + SLACK_BYTES


async def read_body(chunks: AsyncIterator[bytes], limit: int, limits: InputConfig) -> bytes:
    body = bytearray()
    async for chunk in chunks:
        body += chunk
        if len(body) > limit:
            raise TooLarge(f"That is more than a task can carry: up to {limits.max_attachments} files of at most "
                           f"{limits.max_attachment_bytes:,} bytes each.")
    return bytes(body)


def parse_task(body: bytes, limits: InputConfig) -> Task:
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):  # RecursionError: arrays nested deeper than the parser goes
        raise UserInputError("The page sent something that is not a task; reload it and try again.") from None
    if not isinstance(data, dict) or not isinstance(data.get("task", ""), str) or not isinstance(data.get("files", []), list):
        raise UserInputError("The page sent something that is not a task; reload it and try again.")
    files = data.get("files", [])
    if len(files) > limits.max_attachments:
        raise UserInputError(f"{len(files)} files attached; the limit is {limits.max_attachments}.")
    return Task(data.get("task", ""), tuple(_attachment(item, limits.max_attachment_bytes) for item in files))


def _attachment(item: Any, max_bytes: int) -> Attachment:
    if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not isinstance(item.get("data"), str):
        raise UserInputError("An attached file arrived without its name or content; attach it again.")
    name = item["name"]
    try:
        data = base64.b64decode(item["data"], validate=True)
    except (binascii.Error, ValueError):
        raise UserInputError(f"{name} arrived damaged; attach it again.") from None
    return to_attachment(name, data, max_bytes)
