"""A mention runs the team in a thread: each turn its own reply, in order, then the summary and link."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses

from adapters.slack.thread import STOP_ACTION
from bot.config.sections import CheckinConfig
from tests.conftest import with_changes
from tests.fakes import team_script as s
from tests.fakes.github_server import FakeGitHub
from tests.fakes.slack_api import BOT_USER, events_envelope, message_event
from tests.slack.conftest import finished, headers, mention, script_team

TURNS = ["Planner", "Programmer", "Tester", "Optimizer (review)", "Check-In"]  # the Tester writes beside the Programmer


async def test_a_mention_runs_the_team_in_the_thread_and_ends_with_the_gist_link(
        slack, model_server, slack_config, slack_secrets, start_bot):
    async with FakeGitHub(token="ghp_test_0123456789") as github:
        config = dataclasses.replace(slack_config, checkin=CheckinConfig(github_api_url=github.url, write_interval_s=0))
        await start_bot(config, secrets=dataclasses.replace(slack_secrets, github_token="ghp_test_0123456789"))
        script_team(model_server)
        message, envelope = await mention(slack, "find all intf keys in a nested structure")
        await slack.wait_ack(envelope)
        thread = await finished(slack, "C1", message.ts)

    status, *rest = thread
    assert status.text.startswith("✅ *Passed* · run `") and "✅ Tests · round 1 — 2 passed, 0 failed" in status.text
    assert status.blocks == []  # the Stop button is gone once the run is over
    assert headers(thread) == TURNS
    assert rest[-1].text.startswith("✅ Passed:") and github.html_url in rest[-1].text  # the last reply: the link
    assert "Tests: 2 passed, 0 failed" in rest[-1].text
    programmer = next(m for m in thread if m.text.startswith("*Programmer*"))
    assert "def find_intf(obj):" in programmer.text and "```python" not in programmer.text  # Slack's fences
    assert any(m.text.startswith("🧪 *Tests* (python) · round 1: 2 passed, 0 failed in 0.1s") for m in thread)
    assert [m.text.split("\n")[0] for m in thread if m.text.startswith("*Planner*")] == ["*Planner* — language: python"]
    assert "*Programmer* · round 1" in [m.text.split("\n")[0] for m in thread]
    assert sorted(c.agent for c in model_server.requests) == sorted(["planner", "programmer", "optimizer", "tester", "checkin"])


async def test_every_turn_is_edited_live_and_ends_with_its_whole_text(slack, model_server, slack_config, start_bot):
    await start_bot(slack_config)
    script_team(model_server)
    message, _ = await mention(slack, "find all intf keys")
    thread = await finished(slack, "C1", message.ts)
    planner = next(m for m in thread if m.text.startswith("*Planner*"))
    assert planner.edits, "the Planner's reply was never edited"
    assert "_writing…_" not in planner.edits[-1] and planner.edits[-1].startswith("*Planner* — language: python")
    assert all(len(m.text) <= slack_config.slack.max_message_chars for m in thread)


async def test_without_github_the_files_are_attached_to_the_thread(slack, model_server, slack_config, start_bot):
    await start_bot(slack_config)
    script_team(model_server)
    message, _ = await mention(slack, "find all intf keys")
    thread = await finished(slack, "C1", message.ts)
    attached = {u["title"]: u for u in slack.uploads if u["thread_ts"] == message.ts}
    assert {"intf.py", "test_intf.py", "README.md"} <= set(attached)
    assert attached["intf.py"]["content"] == s.CODE.split("```python path=intf.py\n")[1].split("```")[0]
    assert any(u["permalink"] in thread[-1].text for u in attached.values())
    order = [m.text.split("\n")[0] for m in thread]
    files_at = next(i for i, m in enumerate(thread) if m.text.startswith("📎 Files of run"))
    assert order.index("*Check-In* · round 1") < files_at < len(thread) - 1  # in turn, though Slack lags the team


async def test_a_reply_in_the_thread_continues_the_same_conversation(slack, model_server, slack_config, start_bot):
    await start_bot(slack_config)
    script_team(model_server)
    first, _ = await mention(slack, "find all intf keys")
    await finished(slack, "C1", first.ts)

    script_team(model_server)
    follow_up = slack.say("C1", "UANN", "now make it async", thread_ts=first.ts)  # no mention needed here
    await slack.deliver(events_envelope(message_event(follow_up, kind="message"), "Ev-follow"))
    thread = await finished(slack, "C1", first.ts, count=2)

    assert headers(thread) == TURNS * 2
    tops = [m.text.split("\n")[0] for m in thread]
    assert "*Programmer* · round 1" in tops and "*Programmer* · follow-up 1 · round 1" in tops  # no round shown twice
    planner_prompt = model_server.calls("planner")[1].body["messages"][1]["content"]
    assert "find all intf keys" in planner_prompt and "now make it async" in planner_prompt


async def test_a_thread_reply_elsewhere_without_a_mention_is_left_alone(slack, model_server, slack_config, start_bot):
    await start_bot(slack_config)
    parent = slack.say("C1", "UBOB", "lunch?")
    reply = slack.say("C1", "UANN", "sure", thread_ts=parent.ts)
    envelope = await slack.deliver(events_envelope(message_event(reply, kind="message"), "Ev-lunch"))
    await slack.wait_ack(envelope)
    script_team(model_server)  # a run elsewhere, to be sure the lunch reply was handled by the time it ends
    other, _ = await mention(slack, "find all intf keys")
    await finished(slack, "C1", other.ts)
    assert slack.thread("C1", parent.ts) == [] and len(model_server.calls("planner")) == 1


async def test_a_direct_message_works_like_a_mention(slack, model_server, slack_config, start_bot):
    await start_bot(slack_config)
    script_team(model_server)
    dm = slack.say("D1", "UANN", "find all intf keys")
    await slack.deliver(events_envelope(message_event(dm, kind="message", channel_type="im"), "Ev-dm"))
    thread = await finished(slack, "D1", dm.ts)
    assert headers(thread) == TURNS


async def test_the_bots_own_messages_edits_and_deletions_start_nothing(slack, model_server, slack_config, start_bot):
    await start_bot(slack_config)
    own = slack.say("D1", BOT_USER, "I said this")
    edited = slack.say("D1", "UANN", "edited text")
    events = [
        message_event(own, kind="message", channel_type="im", bot_id="BBOT"),
        message_event(edited, kind="message", channel_type="im", subtype="message_changed"),
        message_event(edited, kind="message", channel_type="im", subtype="message_deleted"),
    ]
    for i, event in enumerate(events):
        await slack.wait_ack(await slack.deliver(events_envelope(event, f"Ev-ignored-{i}")))
    last = slack.say("D1", "UANN", "find all intf keys")  # a real request after them is still taken
    script_team(model_server)
    await slack.deliver(events_envelope(message_event(last, kind="message", channel_type="im"), "Ev-real"))
    await finished(slack, "D1", last.ts)
    assert slack.thread("D1", own.ts) == [] and slack.thread("D1", edited.ts) == []
    assert len(model_server.calls("planner")) == 1


async def test_a_message_edited_to_mention_the_bot_starts_nothing(slack, model_server, slack_config, start_bot):
    await start_bot(slack_config)
    chatter = slack.say("C1", "UANN", "lunch at noon?")
    await slack.wait_ack(await slack.deliver(events_envelope(message_event(chatter, kind="message"), "Ev-chatter")))
    # Edited later to mention the bot: Slack sends an app_mention of the same message, marked as edited.
    edited = {"user": "UANN", "ts": "1706785427.000000"}
    event = message_event(chatter, text=f"<@{BOT_USER}> delete the production database", edited=edited)
    await slack.wait_ack(await slack.deliver(events_envelope(event, "Ev-edited")))
    last, _ = await mention(slack, "find all intf keys")  # a real request after it is still taken
    script_team(model_server)
    await finished(slack, "C1", last.ts)
    assert slack.thread("C1", chatter.ts) == [] and len(model_server.calls("planner")) == 1


async def test_a_redelivered_event_starts_no_second_run(slack, model_server, slack_config, start_bot):
    await start_bot(slack_config)
    script_team(model_server)
    message = slack.say("C1", "UANN", f"<@{BOT_USER}> find all intf keys")
    acks = [
        await slack.deliver(events_envelope(message_event(message), "Ev1")),
        await slack.deliver(events_envelope(message_event(message), "Ev1", retry_attempt=1)),  # Slack's retry
        await slack.deliver(events_envelope(message_event(message, kind="message"), "Ev2")),  # the same message
    ]
    for envelope in acks:
        await slack.wait_ack(envelope)
    thread = await finished(slack, "C1", message.ts)
    assert len(model_server.calls("planner")) == 1
    assert sum(any(e.get("action_id") == STOP_ACTION for b in m.blocks for e in b.get("elements", []))
               or "· run `" in m.text for m in thread) == 1


async def test_an_error_reaches_the_thread_as_one_sentence(slack, model_server, slack_config, start_bot):
    from tests.fakes.openai_server import error

    await start_bot(with_changes(slack_config, llm={"max_retries": 0}))
    model_server.script("planner", error(500, "Traceback (most recent call last): boom"))
    message, _ = await mention(slack, "find all intf keys")
    thread = await finished(slack, "C1", message.ts)
    summary = thread[-1].text
    assert summary.startswith("⚠️ Error:") and "Traceback" not in summary and "\n  File " not in summary
    assert all("Traceback" not in m.text for m in thread)


async def test_a_run_that_must_wait_says_where_it_is_in_the_queue(slack, model_server, slack_config, start_bot):
    from tests.fakes.openai_server import Reply

    await start_bot(with_changes(slack_config, limits={"max_concurrent_runs": 1}))
    model_server.responder = lambda recorded: Reply(s.TEAM_DEFAULTS[recorded.agent])
    first, _ = await mention(slack, "find all intf keys", user="UANN", channel="C1")
    second, _ = await mention(slack, "find all intf keys too", user="UBOB", channel="C2")
    await finished(slack, "C1", first.ts)
    thread = await finished(slack, "C2", second.ts)
    assert thread[1].text.startswith("ℹ️ Queued:") and headers(thread) == TURNS


async def test_secrets_never_reach_the_thread(slack, model_server, slack_config, slack_secrets, start_bot):
    from tests.fakes.openai_server import Reply

    await start_bot(slack_config)
    leaked = f"My key is {slack_secrets.openai_api_key} and the bot's is {slack_secrets.slack_bot_token}.\nVERDICT: APPROVE"
    script_team(model_server, optimizer=[Reply(leaked, chunk=3)])  # small deltas: a secret arrives in pieces
    message, _ = await mention(slack, "find all intf keys")
    thread = await finished(slack, "C1", message.ts)
    posted = [m.text for m in thread] + [e for m in thread for e in m.edits]
    assert any("My key is [redacted] and the bot's is [redacted]." in text for text in posted)
    assert not any(secret[:8] in text for secret in (slack_secrets.openai_api_key, slack_secrets.slack_bot_token)
                   for text in posted)


async def test_when_slack_fails_before_the_run_the_thread_gets_one_sentence(slack, model_server, slack_config, start_bot):
    await start_bot(slack_config)
    slack.fail("chat.startStream", 500)  # the first reply (the status with the Stop button) is refused,
    slack.fail("chat.postMessage", 500)  # streamed or not
    message, _ = await mention(slack, "find all intf keys")
    thread = await slack.wait_for(lambda: slack.thread("C1", message.ts))
    assert [m.text for m in thread] == ["Something went wrong on the bot's side before the team could start; "
                                        "the details are in its log."]
    assert model_server.requests == []


async def test_after_a_restart_a_reply_in_the_bots_thread_still_continues(slack, model_server, slack_config, start_bot):
    first_bot = await start_bot(slack_config)
    script_team(model_server)
    first, _ = await mention(slack, "find all intf keys")
    await finished(slack, "C1", first.ts)
    first_bot.task.cancel()  # the bot process goes away; the store stays
    with contextlib.suppress(asyncio.CancelledError):
        await first_bot.task

    await start_bot(slack_config)
    await slack.wait_for(lambda: slack.connections >= 2)  # the new process's own socket
    script_team(model_server)
    follow_up = slack.say("C1", "UANN", "now make it async", thread_ts=first.ts)  # still no mention needed
    await slack.deliver(events_envelope(message_event(follow_up, kind="message"), "Ev-after-restart"))
    thread = await finished(slack, "C1", first.ts, count=2)
    assert headers(thread) == TURNS * 2
    assert not slack.called("conversations.replies")
