"""HTTP mode through the real aiohttp server: only requests signed with the signing secret get in."""

from __future__ import annotations

import json
import time

import aiohttp
import pytest

from tests.conftest import with_changes
from tests.fakes.loopback import answer_to_headers_alone, free_port
from tests.fakes.slack_api import BOT_USER, SIGNING_SECRET, FakeSlack, event_callback, message_event, signed_headers
from tests.slack.conftest import finished, script_team


@pytest.fixture
async def http_bot(slack, slack_config, start_bot):
    port = free_port()
    config = with_changes(slack_config, slack={"mode": "http", "http_host": "127.0.0.1", "http_port": port})
    await start_bot(config)
    async with aiohttp.ClientSession() as session:
        yield session, f"http://127.0.0.1:{port}/slack/events"


def mention_body(slack: FakeSlack, event_id: str = "EvH1") -> tuple[str, str]:
    message = slack.say("C1", "UANN", f"<@{BOT_USER}> find all intf keys")
    return message.ts, json.dumps(event_callback(message_event(message), event_id))


async def post(session: aiohttp.ClientSession, url: str, body: str, headers: dict[str, str]) -> int:
    async with session.post(url, data=body, headers=headers) as response:
        return response.status


@pytest.mark.parametrize("secret, age_s", [
    ("not-the-signing-secret", 0),  # signed with another secret
    (SIGNING_SECRET, 600),  # a replay: signed right, ten minutes ago
    (None, 0),  # not signed at all
], ids=["bad-signature", "stale", "unsigned"])
async def test_requests_without_a_good_signature_are_rejected(slack, model_server, http_bot, secret, age_s):
    session, url = http_bot
    _, body = mention_body(slack)
    headers = ({"Content-Type": "application/json"} if secret is None
               else signed_headers(body, secret=secret, timestamp=int(time.time()) - age_s))
    assert await post(session, url, body, headers) == 401
    assert model_server.requests == [] and slack.called("chat.postMessage") == []


async def test_a_signed_mention_runs_and_its_retry_is_ignored(slack, model_server, http_bot):
    session, url = http_bot
    script_team(model_server)
    ts, body = mention_body(slack)
    assert await post(session, url, body, signed_headers(body)) == 200
    retry = {**signed_headers(body), "X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}
    assert await post(session, url, body, retry) == 200  # acknowledged, so Slack stops retrying
    await finished(slack, "C1", ts)
    assert len(model_server.calls("planner")) == 1


async def test_url_verification_is_answered(http_bot):
    session, url = http_bot
    body = json.dumps({"type": "url_verification", "challenge": "abc123", "token": "legacy"})
    async with session.post(url, data=body, headers=signed_headers(body)) as response:
        assert response.status == 200 and "abc123" in await response.text()


async def test_the_stop_button_works_over_http_too(slack, model_server, http_bot):
    from urllib.parse import quote

    from adapters.slack.thread import STOP_ACTION
    from tests.fakes.openai_server import Reply
    from tests.fakes.slack_api import block_action
    from tests.slack.test_stop import stop_button

    session, url = http_bot
    model_server.script("planner", Reply("Thinking...", chunk=4, stall_after=4))
    ts, body = mention_body(slack)
    assert await post(session, url, body, signed_headers(body)) == 200
    status = await slack.wait_for(lambda: next((m for m in slack.thread("C1", ts) if stop_button(m)), None))
    form = "payload=" + quote(json.dumps(block_action("UANN", status, STOP_ACTION, stop_button(status) or "")))
    headers = {**signed_headers(form), "Content-Type": "application/x-www-form-urlencoded"}
    assert await post(session, url, form, headers) == 200
    thread = await finished(slack, "C1", ts)
    assert thread[-1].text.startswith("⏹️ Stopped: stopped on request.")


def quote_bytes(raw: bytes) -> bytes:
    from urllib.parse import quote_from_bytes

    return quote_from_bytes(raw).encode()


BAD_REQUESTS = {
    "malformed-json": (b'{"type": "event_callback", "event": ', "application/json", 400),
    "json-array": (b'[{"type": "event_callback"}]', "application/json", 400),
    "json-string": (b'"hello"', "application/json", 400),
    "not-utf8": (b'{"type": "event_callback", "text": "\xff\xfe"}', "application/json", 400),
    "payload-not-json": (b"payload=%7Bnot+json", "application/x-www-form-urlencoded", 400),
    "payload-array": (b"payload=%5B1%2C2%5D", "application/x-www-form-urlencoded", 400),
    "event-not-object": (b'{"type": "event_callback", "event": "app_mention", "event_id": "Ev1"}', "application/json", 400),
    "event-user-number": (b'{"type": "event_callback", "event": {"type": "app_mention", "user": 7, "text": "x"}}',
                          "application/json", 400),
    "actions-not-list": (b'payload=' + quote_bytes(b'{"type": "block_actions", "user": {"id": "U1"}, "actions": "stop"}'),
                         "application/x-www-form-urlencoded", 400),
    "action-value-number": (b'payload=' + quote_bytes(b'{"type": "block_actions", "user": {"id": "U1"}, '
                                                     b'"actions": [{"action_id": "codegen_stop", "value": 5}]}'),
                            "application/x-www-form-urlencoded", 400),
    "user-a-string": (b'payload=' + quote_bytes(b'{"type": "block_actions", "user": "U1", '
                                               b'"actions": [{"action_id": "codegen_stop", "value": "r1"}]}'),
                      "application/x-www-form-urlencoded", 400),
}


@pytest.mark.parametrize("name", list(BAD_REQUESTS))
async def test_a_signed_request_that_is_not_what_slack_sends_is_refused_in_one_line(
        slack, model_server, http_bot, caplog, name):
    session, url = http_bot
    body, content_type, status = BAD_REQUESTS[name]
    headers = {**signed_bytes_headers(body), "Content-Type": content_type}
    async with session.post(url, data=body, headers=headers) as response:
        assert response.status == status
        assert "\n" not in (await response.text()).strip()
    assert not [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]
    assert model_server.requests == [] and slack.called("chat.postMessage") == []


@pytest.mark.parametrize("timestamp", ["soon", "1e9", "", "١٧٠٠٠٠٠٠٠٠"], ids=["word", "float", "empty", "arabic-digits"])
async def test_a_timestamp_that_is_not_a_number_is_unauthorised_before_the_body_is_read(
        slack, http_bot, caplog, timestamp):
    session, url = http_bot
    headers = {"X-Slack-Request-Timestamp": timestamp, "X-Slack-Signature": "v0=00", "Content-Type": "application/json"}
    async with session.post(url, data=b"\xff not even json", headers=headers) as response:
        assert response.status == 401
    assert not [r for r in caplog.records if r.exc_info]


def signed_bytes_headers(body: bytes) -> dict[str, str]:
    """Slack's ``v0`` signature of raw bytes (the fake's helper signs text)."""
    import hashlib
    import hmac

    stamp = str(int(time.time()))
    digest = hmac.new(SIGNING_SECRET.encode(), b"v0:" + stamp.encode() + b":" + body, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": f"v0={digest}"}


def test_without_a_signing_secret_no_request_counts_as_signed():
    """An empty key is one anyone can sign with: the check itself refuses, whatever started the server."""
    from adapters.slack.requests import refusal

    body = json.dumps({"type": "event_callback", "team_id": "T1", "event_id": "Ev1",
                       "event": {"type": "app_mention", "user": "U1", "text": f"<@{BOT_USER}> hi", "ts": "1.0",
                                 "channel": "C1"}})
    import hashlib
    import hmac

    stamp = str(int(time.time()))
    anyones = hmac.new(b"", f"v0:{stamp}:{body}".encode(), hashlib.sha256).hexdigest()
    headers = {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": f"v0={anyones}", "Content-Type": "application/json"}
    refused = refusal(body.encode(), headers, "")
    assert refused is not None and refused.status == 401
    assert refusal(body.encode(), signed_headers(body), SIGNING_SECRET) is None


async def test_a_request_is_judged_by_its_signature_s_headers_before_its_body_is_read(http_bot):
    # Anyone can post to the Request URL: the bytes of a body nobody signed are not taken into memory first.
    _, url = http_bot
    now = int(time.time())
    for headers in ({},  # not signed
                    {"X-Slack-Request-Timestamp": str(now - 600), "X-Slack-Signature": "v0=" + "0" * 64},  # stale
                    {"X-Slack-Request-Timestamp": str(now), "X-Slack-Signature": "v0=not-a-signature"}):
        assert (await answer_to_headers_alone(url, headers)).startswith("HTTP/1.1 401"), headers
