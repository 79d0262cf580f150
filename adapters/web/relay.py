"""The web chat across replicas: a page on one replica follows a run under way on another. Every op a
conversation sends its own pages is also published to the other replicas (``bot.runs.fanout``: PostgreSQL's
``NOTIFY``), where the copy of that conversation a page has open there applies it and passes it on.

A replica that opens a conversation drawn from the store asks the others for it (``want``); the replica where a
run is under way in it answers with its live messages (``snapshot``), so the ids the next ops name are the ones
the copy holds, and the pages watching the copy reconnect to see it. Messages larger than a notification's
payload travel in parts, put back together in order (one sender per replica keeps them in order).
"""

from __future__ import annotations

import json
import logging
import secrets as random_tokens
from collections.abc import Callable
from typing import Any

from adapters.web.conversation import Conversation, Op
from bot.runs.fanout import MAX_PAYLOAD, Fanout

log = logging.getLogger(__name__)

CHANNEL = "codegen_web"
PART_CHARS = MAX_PAYLOAD - 100  # room for the part's header
RECONNECTED = "\x00reconnected"  # the listener's word after it reconnects (``bot.store.postgres_listen``)


class Relay:
    def __init__(self, fanout: Fanout, lookup: Callable[[str], Conversation | None], busy: Callable[[str], bool],
                 changed: Callable[[Conversation], None]) -> None:
        self._fanout, self._lookup, self._busy, self._changed = fanout, lookup, busy, changed
        self.origin = random_tokens.token_hex(6)
        self._serial = 0
        self._parts: dict[str, list[str]] = {}  # message being put back together -> its parts so far
        fanout.subscribe(CHANNEL, self._heard)

    def sent(self, conversation: Conversation, op: Op) -> None:
        """An op this replica's copy of ``conversation`` sent its pages: the other replicas' copies get it too."""
        self._publish({"k": conversation.key, "op": op})

    def want(self, key: str) -> None:
        """Ask the replica where a run is under way in ``key`` for its live messages."""
        self._publish({"k": key, "want": True})

    # -- out ----------------------------------------------------------------------------------

    def _publish(self, message: dict[str, Any]) -> None:
        text = json.dumps({"o": self.origin, **message})  # ASCII only: a character is a byte
        if len(text) <= PART_CHARS:
            self._fanout.publish(CHANNEL, "=" + text)
            return
        self._serial += 1
        parts = [text[i:i + PART_CHARS] for i in range(0, len(text), PART_CHARS)]
        for number, part in enumerate(parts):
            self._fanout.publish(CHANNEL, f"+{self.origin}.{self._serial}:{number}:{len(parts)}:{part}")

    # -- in -----------------------------------------------------------------------------------

    def _heard(self, payload: str) -> None:
        if payload == RECONNECTED:  # what came meanwhile is lost: ask again for what is under way
            self._parts.clear()
            return
        text = self._whole(payload)
        if text is None:
            return
        message = json.loads(text)
        if message.get("o") == self.origin:
            return
        conversation = self._lookup(message["k"])
        if conversation is None:
            return
        if message.get("want"):
            if self._busy(conversation.key):
                self._publish({"k": conversation.key, "snapshot": conversation.snapshot(),
                               "working": conversation.working_text})
        elif "snapshot" in message:
            conversation.replace(message["snapshot"], message.get("working", ""))
            self._changed(conversation)
        elif "op" in message:
            if conversation.apply(message["op"]):
                self._changed(conversation)

    def _whole(self, payload: str) -> str | None:
        if payload.startswith("="):
            return payload[1:]
        if not payload.startswith("+"):
            return None
        serial, number, count, part = payload[1:].split(":", 3)
        if serial.startswith(self.origin + "."):
            return None
        parts = self._parts.setdefault(serial, [])
        if int(number) != len(parts):  # a part went missing (a reconnection): drop the message
            self._parts.pop(serial, None)
            return None
        parts.append(part)
        if len(parts) < int(count):
            return None
        return "".join(self._parts.pop(serial))
