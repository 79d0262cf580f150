"""Text shaping particular to Discord: thread names and the bot's mention."""

from __future__ import annotations

import re

from bot.chat.badges import cut_at_word
from bot.safety.redact import mask_pasted_secrets

THREAD_NAME_LIMIT = 100  # Discord's limit on a channel or thread name
DEFAULT_THREAD_NAME = "codegen run"


def thread_name(task: str) -> str:
    """The task's first line, cut at a word to what Discord allows."""
    first = next((line.strip() for line in task.splitlines() if line.strip()), "")
    first = re.sub(r"<@[!&]?\d+>", "", first).strip()  # mentions read badly in a thread list
    first = mask_pasted_secrets(first)[0]  # a token pasted into the task is not repeated in the thread list
    return cut_at_word(first, THREAD_NAME_LIMIT) or DEFAULT_THREAD_NAME


def without_mention(text: str, user_id: int, role_id: int | None = None) -> str:
    """The message with the bot's mention taken out: the user (both forms) and the bot's own role."""
    text = re.sub(rf"<@!?{user_id}>", "", text)
    return (re.sub(rf"<@&{role_id}>", "", text) if role_id else text).strip()
