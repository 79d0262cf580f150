"""What Slack may post to the bot in HTTP mode, decided in one place before anything reads the request:
signed by Slack within five minutes (checked on the raw bytes, before any parsing), UTF-8, a JSON object
(or a form whose ``payload`` is one), shaped as the event or interaction bolt and the handlers read.
Anything else is answered 401 or 400 with one sentence, and logged as one line. Socket Mode's events and
button presses pass the same shape checks in the handlers (``misshapen``, ``event_problem``)."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

MAX_AGE_S = 5 * 60  # Slack's own rule: an older signature may be a replay
SIGNATURE_FORM = re.compile(r"v0=[0-9a-f]{64}")  # HMAC-SHA256 in hex, as Slack writes it


@dataclass(frozen=True)
class Refusal:
    status: int
    reason: str


def refusal(body: bytes, headers: Mapping[str, str], signing_secret: str, now: float | None = None) -> Refusal | None:
    """Why the request is not one to hand to bolt, or None when it is."""
    unsigned = _unsigned(body, headers, signing_secret, time.time() if now is None else now)
    if unsigned:
        return Refusal(401, unsigned)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return Refusal(400, "the body is not UTF-8 text")
    try:
        payload = _payload(text, headers.get("Content-Type", ""))
    except ValueError as error:
        return Refusal(400, str(error))
    wrong = misshapen(payload)
    return Refusal(400, wrong) if wrong else None


def header_refusal(headers: Mapping[str, str], signing_secret: str, now: float | None = None) -> Refusal | None:
    """Why the request is refused on its headers alone, before its body is read (anyone may send one, and the
    bytes of a body nobody signed are not worth holding); None when its body is worth checking."""
    unsigned = _unsigned_headers(headers, signing_secret, time.time() if now is None else now)
    return Refusal(401, unsigned) if unsigned else None


def _unsigned_headers(headers: Mapping[str, str], secret: str, now: float) -> str:
    if not secret:  # an empty key is one anyone can sign with: no secret, nothing is signed
        return "the bot has no signing secret to check the request with (SLACK_SIGNING_SECRET)"
    stamp, signature = headers.get("X-Slack-Request-Timestamp", ""), headers.get("X-Slack-Signature", "")
    if not stamp or not signature:
        return "the request is not signed (no X-Slack-Signature and timestamp)"
    if not stamp.isascii() or not stamp.isdigit():
        return "the request's X-Slack-Request-Timestamp is not a number"
    if abs(now - int(stamp)) > MAX_AGE_S:
        return "the request was signed more than five minutes ago"
    if not SIGNATURE_FORM.fullmatch(signature):
        return "the request's signature does not match the signing secret"
    return ""


def _unsigned(body: bytes, headers: Mapping[str, str], secret: str, now: float) -> str:
    unsigned = _unsigned_headers(headers, secret, now)
    if unsigned:
        return unsigned
    stamp, signature = headers["X-Slack-Request-Timestamp"], headers["X-Slack-Signature"]
    expected = "v0=" + hmac.new(secret.encode(), b"v0:" + stamp.encode() + b":" + body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected.encode(), signature.encode("utf-8", "replace")):
        return "the request's signature does not match the signing secret"
    return ""


def _payload(text: str, content_type: str) -> Any:
    """The request as bolt will read it: a JSON body, or a form's ``payload`` field (interactivity)."""
    if content_type.split(";")[0].strip() == "application/json" or text.lstrip().startswith(("{", "[")):
        return _json(text, "the body")
    form = dict(parse_qsl(text, keep_blank_values=True))
    return _json(form["payload"], "the form's payload") if "payload" in form else form


def _json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{what} is not JSON ({error.msg} at character {error.pos})") from None


def misshapen(payload: Any) -> str:
    """What is wrong with the shape of an event or interaction payload; empty when nothing is."""
    if not isinstance(payload, dict):
        return f"the payload is a JSON {type(payload).__name__}, not an object"
    for key in ("type", "team_id", "token", "event_id"):
        if key in payload and not isinstance(payload[key], str):
            return f"the payload's {key} is not a string"
    if payload.get("type") == "event_callback":
        return event_problem(payload.get("event"))
    if payload.get("type") == "block_actions":
        return _actions_problem(payload)
    return ""


def event_problem(event: Any) -> str:
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        return "the event is not an object with a type"
    for key in ("user", "text", "ts", "thread_ts", "channel", "channel_type", "subtype", "bot_id"):
        if event.get(key) is not None and not isinstance(event[key], str):
            return f"the event's {key} is not a string"
    if event.get("files") is not None and not _objects(event["files"]):
        return "the event's files are not a list of objects"
    return ""


def _actions_problem(payload: dict[str, Any]) -> str:
    actions = payload.get("actions")
    if not isinstance(actions, list) or not actions or not _objects(actions):
        return "the block_actions payload has no list of actions"
    if any(not isinstance(a.get("action_id"), str) or not isinstance(a.get("value", ""), str) for a in actions):
        return "an action's action_id or value is not a string"
    for key in ("user", "channel", "team", "message", "container"):
        if payload.get(key) is not None and not isinstance(payload[key], dict):
            return f"the block_actions payload's {key} is not an object"
    if not isinstance((payload.get("user") or {}).get("id"), str):
        return "the block_actions payload names no user"
    return ""


def _objects(items: Any) -> bool:
    return isinstance(items, list) and all(isinstance(item, dict) for item in items)
