"""``POST /github/webhook`` as GitHub calls it: signed deliveries, redeliveries, pings, CI events and the rest,
posted by a real aiohttp client to the real endpoint."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json

import aiohttp

from tests.fakes.github_server import FakeGitHub
from tests.fakes.loopback import answer_to_headers_alone
from tests.github.conftest import AUTHOR, PR, REPO, SECRET, eventually, finals, script_team


async def test_a_forged_or_missing_signature_is_refused_with_401_and_starts_nothing(
        github_config, start_bot, github: FakeGitHub, pull_request, model_server):
    script_team(model_server)
    bot = await start_bot(github_config)
    comment = github.add_issue_comment(REPO, PR, AUTHOR, "@codegen-chat add retries to billing/client.py")
    event, payload = github.comment_payload(comment)
    assert (await bot.deliver(event, payload, delivery="d-1", signature=""))[0] == 401
    forged = "sha256=" + "0" * 64
    assert (await bot.deliver(event, payload, delivery="d-1", signature=forged))[0] == 401
    other_secret = await github.send_webhook(bot.url, event, payload, "not-the-secret", delivery="d-1")
    assert other_secret[0] == 401
    stale = "sha256=" + hmac.new(SECRET.encode(), json.dumps({**payload, "action": "edited"}).encode(),
                                 hashlib.sha256).hexdigest()  # a real signature, of another body
    assert (await bot.deliver(event, payload, delivery="d-1", signature=stale))[0] == 401
    assert (await bot.deliver(event, payload, delivery="d-1"))[0] == 202  # refused ones used up nothing
    await eventually(lambda: finals(github.conversation(REPO, PR)))
    assert len(finals(github.conversation(REPO, PR))) == 1
    assert len([r for r in model_server.requests if r.agent == "planner"]) == 1


async def test_a_redelivery_starts_one_run(github_config, start_bot, github: FakeGitHub, pull_request, model_server):
    script_team(model_server, runs=2)
    bot = await start_bot(github_config)
    comment = github.add_issue_comment(REPO, PR, AUTHOR, "@codegen-chat add retries to billing/client.py")
    assert await bot.comment(comment, delivery="same") == (202, "Taken.")
    assert await bot.comment(comment, delivery="same") == (200, "Already delivered.")
    assert (await bot.comment(comment, delivery="redelivered-with-a-new-id"))[0] == 202  # the same comment still
    await eventually(lambda: finals(github.conversation(REPO, PR)))
    await asyncio.sleep(0.3)
    assert len(finals(github.conversation(REPO, PR))) == 1
    assert len([r for r in model_server.requests if r.agent == "planner"]) == 1


async def test_a_ping_is_answered_and_an_unknown_event_is_204(github_config, start_bot):
    bot = await start_bot(github_config)
    status, text = await bot.deliver("ping", {"zen": "Keep it logically awesome.", "hook_id": 1})
    assert status == 200 and "pong" in text
    assert (await bot.deliver("star", {"action": "created", "repository": {"full_name": REPO}}))[0] == 204
    async with aiohttp.ClientSession() as session:  # signed, but not JSON
        status, _ = await _post_unparsable(session, bot.url, b"not json")
    assert status == 400


async def _post_unparsable(session: aiohttp.ClientSession, url: str, body: bytes) -> tuple[int, str]:
    headers = {"X-GitHub-Event": "issue_comment", "X-GitHub-Delivery": "d-raw",
               "X-Hub-Signature-256": "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()}
    async with session.post(url, data=body, headers=headers) as response:
        return response.status, await response.text()


async def test_ci_events_nudge_the_commit_they_name_and_the_bots_own_status_does_not(github_config, start_bot):
    bot = await start_bot(github_config)
    nudges = bot.service.nudges
    sha = "a" * 40
    await bot.deliver("status", {"sha": sha, "context": "codegen-chat/tests", "state": "success",
                                 "repository": {"full_name": REPO}})
    assert await nudges.wait(REPO, sha, within_s=0.2) is False  # its own status: no reason to look again
    for event, payload in [
        ("status", {"sha": sha, "context": "ci/build", "state": "failure"}),
        ("check_run", {"action": "completed", "check_run": {"head_sha": sha, "name": "tests"}}),
        ("check_suite", {"action": "completed", "check_suite": {"head_sha": sha}}),
        ("workflow_run", {"action": "completed", "workflow_run": {"head_sha": sha, "name": "CI"}}),
    ]:
        waiting = asyncio.create_task(nudges.wait(REPO, sha, within_s=5))
        await asyncio.sleep(0)
        assert (await bot.deliver(event, {**payload, "repository": {"full_name": REPO}}))[0] == 202
        assert await waiting is True, event


async def test_ci_deliveries_for_commits_nobody_follows_leave_nothing_behind(github_config, start_bot):
    bot = await start_bot(github_config)
    for n in range(30):
        payload = {"action": "completed", "check_run": {"head_sha": f"{n:040x}", "name": "tests"},
                   "repository": {"full_name": REPO}}
        assert (await bot.deliver("check_run", payload, delivery=f"d-{n}"))[0] == 202
    assert bot.service.nudges.watched == 0


async def test_a_signed_payload_not_shaped_as_github_sends_one_is_dropped_without_an_error(github_config, start_bot):
    bot = await start_bot(github_config)
    for event, payload in [
        ("issue_comment", {"action": "created", "repository": ["acme/app"], "comment": "hi"}),
        ("issue_comment", {"action": "created", "repository": {"full_name": REPO}, "issue": {"number": "7",
                           "pull_request": {}}, "comment": {"id": True, "body": "@codegen-chat x"}}),
        ("pull_request_review_comment", {"action": "created", "repository": {"full_name": REPO},
                                         "pull_request": None, "comment": {"id": 5, "user": "x"}}),
        ("check_run", {"action": "completed", "check_run": ["a" * 40], "repository": {"full_name": REPO}}),
        ("status", {"sha": 12, "repository": {"full_name": REPO}}),
    ]:
        assert (await bot.deliver(event, payload))[0] == 204, (event, payload)
    assert (await bot.deliver("issue_comment", [1, 2]))[0] == 400  # JSON, but not an object


async def test_a_delivery_is_judged_by_its_headers_before_its_body_is_read(github_config, start_bot):
    # Anyone can post to the endpoint: a body nobody signed, or one of an event the bot never acts on, is not
    # taken into memory first, nor one longer than any delivery the bot acts on.
    bot = await start_bot(github_config)
    delivery = {"X-GitHub-Event": "issue_comment", "X-GitHub-Delivery": "d-big"}
    well_formed = "sha256=" + "0" * 64
    assert (await answer_to_headers_alone(bot.url, delivery)).startswith("HTTP/1.1 401")
    assert (await answer_to_headers_alone(bot.url, {**delivery, "X-Hub-Signature-256": "sha1=00"})
            ).startswith("HTTP/1.1 401")
    assert (await answer_to_headers_alone(bot.url, {**delivery, "X-Hub-Signature-256": well_formed})
            ).startswith("HTTP/1.1 413")
    assert (await answer_to_headers_alone(bot.url, {**delivery, "X-GitHub-Event": "push",
                                                     "X-Hub-Signature-256": well_formed})).startswith("HTTP/1.1 204")
