"""Slack's agent features where the app has them: the status message streams as a plan whose tasks are the
run's steps, and who is at work shows as the thread's status; without them, the same status is a message
kept current with chat.update."""

from __future__ import annotations

import pytest

from tests.conftest import with_changes
from tests.fakes import team_script as s
from tests.fakes.openai_server import Reply
from tests.fakes.slack_api import ALL_SCOPES, BOT_USER, TEAM, FakeSlack, Message
from tests.slack.conftest import eventually, finished, mention, script_team
from tests.slack.test_stop import press_stop, stop_button

STEPS = {"plan-0": "Plan", "code-1": "Code · round 1", "review-1": "Review · round 1", "tests-1": "Tests · round 1",
         "checkin": "Check-in"}


def status_of(slack: FakeSlack, thread_ts: str) -> Message:
    return slack.thread("C1", thread_ts)[0]


async def test_the_status_message_streams_a_plan_of_the_runs_steps_and_loses_stop_at_the_end(
        slack, model_server, slack_config, start_bot):
    await start_bot(slack_config)
    script_team(model_server)
    message, _ = await mention(slack, "find all intf keys", user="UANN")
    thread = await finished(slack, "C1", message.ts)

    [start] = slack.called("chat.startStream")
    assert start.args["task_display_mode"] == "plan" and start.args["thread_ts"] == message.ts
    assert (start.args["recipient_user_id"], start.args["recipient_team_id"]) == ("UANN", TEAM)
    status = thread[0]
    assert {key: task["title"] for key, task in status.tasks.items()} == STEPS
    assert {task["status"] for task in status.tasks.values()} == {"complete"}
    assert status.tasks["review-1"]["details"] == "approves"
    assert status.tasks["tests-1"]["details"] == "2 passed, 0 failed"
    assert len(slack.called("chat.stopStream")) == 1
    assert not status.streaming and stop_button(status) is None  # chat.update took the Stop button off
    assert status.text.startswith("✅ *Passed* · run `") and "✅ Review · round 1 — approves" in status.text
    said = [s for channel, ts, s in slack.statuses if ts == message.ts]
    assert "Planner is writing…" in said and "Programmer is writing…" in said and said[-1] == ""


async def test_stop_sits_on_the_streamed_status_message_while_the_run_can_stop(slack, model_server, slack_config,
                                                                                 start_bot):
    await start_bot(slack_config)
    model_server.script("planner", Reply("Thinking about the plan...", chunk=4, stall_after=8))
    message, _ = await mention(slack, "find all intf keys")
    await eventually(lambda: model_server.calls("planner"))
    status = status_of(slack, message.ts)
    # The Planner's step reaches the plan with appendStream while the Planner writes.
    await eventually(lambda: status.tasks.get("plan-0", {}).get("status") == "in_progress")
    assert slack.called("chat.appendStream") and status.streaming and stop_button(status)
    await press_stop(slack, message.ts)
    await finished(slack, "C1", message.ts)
    assert stop_button(status_of(slack, message.ts)) is None


@pytest.mark.parametrize("scopes", [tuple(s for s in ALL_SCOPES if s != "assistant:write")], ids=["no-agent-features"])
async def test_without_the_agent_features_the_status_is_a_message_kept_current_with_chat_update(
        model_server, slack_config, start_bot, scopes):
    async with FakeSlack(scopes=scopes) as narrow:
        await start_bot(with_changes(slack_config, slack={"api_url": narrow.api_url}), fake=narrow)
        for text in ("find all intf keys", "and again"):
            script_team(model_server, planner=[Reply(s.PLAN, chunk=6, stall_after=12)])
            message, _ = await mention(narrow, text)
            status = await narrow.wait_for(lambda ts=message.ts: next(iter(narrow.thread("C1", ts)), None))
            # While the Planner writes, the status message shows its step, edited in place, Stop still on it.
            await eventually(lambda shown=status: any("⏳ Plan" in edit for edit in shown.edits))
            assert stop_button(status) and not status.tasks
            model_server.release_stalls.set()
            thread = await finished(narrow, "C1", message.ts)
            model_server.release_stalls.clear()
            assert stop_button(thread[0]) is None
            assert thread[0].text.startswith("✅ *Passed*") and "✅ Tests · round 1 — 2 passed, 0 failed" in thread[0].text
        assert len(narrow.called("chat.startStream")) == 1  # refused once for the workspace: not asked again


async def test_a_stream_that_slack_ends_early_goes_on_as_an_edited_message(slack, model_server, slack_config, start_bot):
    await start_bot(slack_config)
    script_team(model_server, planner=[Reply(s.PLAN, chunk=6, stall_after=12)])
    message, _ = await mention(slack, "find all intf keys")
    # the status message streams and the Planner writes (the two start together: wait for both)
    await eventually(lambda: model_server.calls("planner") and slack.called("chat.startStream"))
    slack.end_streams()  # Slack ends a stream that has gone on too long
    model_server.release_stalls.set()
    thread = await finished(slack, "C1", message.ts)
    status = thread[0]
    assert status.edits and all(not edit.startswith("✅") for edit in status.edits[:-1])  # kept current by chat.update
    assert status.text.startswith("✅ *Passed*") and "✅ Check-in" in status.text and stop_button(status) is None
    # (whether the bot learns that the stream ended from a refused append or from a refused stop depends on
    # whether a redraw falls between the two: either way the end is drawn by chat.update, as asserted above)


async def test_a_direct_message_streams_without_naming_a_recipient(slack, model_server, slack_config, start_bot):
    from tests.fakes.slack_api import events_envelope, message_event

    await start_bot(slack_config)
    script_team(model_server)
    dm = slack.say("D1", "UANN", "find all intf keys")
    await slack.deliver(events_envelope(message_event(dm, kind="message", channel_type="im"), "Ev-dm-stream"))
    thread = await finished(slack, "D1", dm.ts)
    assert thread[0].tasks and thread[0].user == BOT_USER
