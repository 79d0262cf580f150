"""The Stop button cancels the run; the thread says it stopped."""

from __future__ import annotations

import dataclasses
import re

import pytest

from adapters.slack.thread import STOP_ACTION
from bot.config.sections import Price
from tests.fakes import team_script as s
from tests.fakes.openai_server import Reply
from tests.fakes.slack_api import FakeSlack, Message, block_action, interactive_envelope
from tests.slack.conftest import eventually, finished, mention


def stop_button(message: Message) -> str | None:
    """The run id behind the message's Stop button, if it has one."""
    for block in message.blocks:
        for element in block.get("elements", []):
            if element.get("action_id") == STOP_ACTION:
                return str(element["value"])
    return None


async def press_stop(slack: FakeSlack, thread_ts: str, user: str = "UANN") -> str:
    status = next(m for m in slack.thread("C1", thread_ts) if stop_button(m))
    run_id = stop_button(status)
    assert run_id
    envelope = interactive_envelope(block_action(user, status, STOP_ACTION, run_id), f"env-stop-{user}")
    await slack.wait_ack(await slack.deliver(envelope))
    return run_id


async def test_the_stop_button_cancels_the_run_and_the_thread_says_so(slack, model_server, slack_config, start_bot):
    bot = await start_bot(slack_config)
    model_server.script("planner", Reply("Thinking about the plan...", chunk=4, stall_after=8))
    message, _ = await mention(slack, "find all intf keys")
    await slack.wait_for(lambda: any(m.text.startswith("*Planner*") for m in slack.thread("C1", message.ts)))
    await eventually(lambda: model_server.calls("planner"))  # the model is being asked

    run_id = await press_stop(slack, message.ts)
    thread = await finished(slack, "C1", message.ts)
    assert thread[-1].text.startswith("⏹️ Stopped: stopped on request.")
    status = thread[0]
    assert status.text == f"⏹️ *Stopped* · run `{run_id}`\n⏹️ Plan" and stop_button(status) is None
    assert status.tasks["plan-0"]["status"] == "error"  # the plan display showed the step, until the end
    planner = next(m for m in thread if m.text.startswith("*Planner*"))
    assert planner.text.endswith("_(cut short)_")
    assert bot.service.active_run("slack", f"C1:{message.ts}") is None
    assert [c.agent for c in model_server.requests] == ["planner"]


async def test_stop_on_a_finished_run_tells_only_the_presser(slack, model_server, slack_config, start_bot):
    from tests.slack.conftest import script_team

    await start_bot(slack_config)
    script_team(model_server)
    message, _ = await mention(slack, "find all intf keys")
    await finished(slack, "C1", message.ts)
    status = slack.thread("C1", message.ts)[0]
    envelope = interactive_envelope(block_action("UBOB", status, STOP_ACTION, "0000dead"), "env-late")
    await slack.wait_ack(await slack.deliver(envelope))
    notice = await slack.wait_for(lambda: slack.ephemeral)
    assert notice[0]["user"] == "UBOB" and "is not running any more" in notice[0]["text"]


async def test_a_turn_shows_its_text_while_it_is_written(slack, model_server, slack_config, start_bot):
    await start_bot(slack_config)
    model_server.script("planner", Reply("1. Parse the input.\n2. Walk the tree.\n3. Coll", chunk=6, stall_after=42))
    message, _ = await mention(slack, "find all intf keys")
    # Edits come at the edit pace, so a busy machine may show the first line alone before the second.
    live = await slack.wait_for(lambda: next((m for m in slack.thread("C1", message.ts)
                                              if m.text.startswith("*Planner*") and "2. Walk" in m.text), None))
    assert live.text == "*Planner*\n1. Parse the input.\n2. Walk the tree.\n_writing…_"  # whole lines, still going
    assert not any("3. Coll" in edit for edit in live.edits)  # never a line before its end
    await press_stop(slack, message.ts)
    await finished(slack, "C1", message.ts)


async def test_a_bot_that_is_stopped_says_so_in_its_threads(slack, model_server, slack_config, start_bot):
    import asyncio
    import contextlib

    bot = await start_bot(slack_config)
    model_server.script("planner", Reply("Thinking about the plan...", chunk=4, stall_after=8))
    message, _ = await mention(slack, "find all intf keys")
    await eventually(lambda: model_server.calls("planner"))
    bot.task.cancel()  # what Ctrl-C does to `codegen-chat serve`
    with contextlib.suppress(asyncio.CancelledError):
        await bot.task
    thread = slack.thread("C1", message.ts)
    assert thread[-1].text.startswith("⏹️ Stopped: stopped on request.") and thread[0].text.startswith("⏹️ *Stopped*")


async def test_only_the_person_who_started_a_run_can_stop_it(slack, model_server, slack_config, start_bot):
    bot = await start_bot(slack_config)
    model_server.script("planner", Reply("Thinking about the plan...", chunk=4, stall_after=8))
    message, _ = await mention(slack, "find all intf keys", user="UANN")
    await eventually(lambda: model_server.calls("planner"))

    await press_stop(slack, message.ts, user="UBOB")
    notice = await slack.wait_for(lambda: slack.ephemeral)
    assert notice[0]["user"] == "UBOB" and notice[0]["text"] == "Only <@UANN> (who started this run) can stop it."
    assert bot.service.active_run("slack", f"C1:{message.ts}") is not None  # still going

    await press_stop(slack, message.ts, user="UANN")
    thread = await finished(slack, "C1", message.ts)
    assert thread[-1].text.startswith("⏹️ Stopped: stopped on request.") and len(slack.ephemeral) == 1


async def test_a_stopped_runs_last_reply_shows_the_tokens_and_cost_it_really_used(
        slack, model_server, slack_config, start_bot):
    await start_bot(dataclasses.replace(slack_config, prices={"gpt-4o-mini": Price(1.0, 2.0)}))
    model_server.script("planner", Reply(s.PLAN, usage=(1000, 500)))
    model_server.script("programmer", Reply("Writing the code...", chunk=4, stall_after=8))
    message, _ = await mention(slack, "find all intf keys")
    await eventually(lambda: model_server.calls("programmer"))
    await press_stop(slack, message.ts)
    thread = await finished(slack, "C1", message.ts)
    lines = thread[-1].text.splitlines()
    assert lines[0] == "⏹️ Stopped: stopped on request." and _counts_the_cut_reply(lines[1]), lines[1]


@pytest.mark.parametrize("broken", [{"user": "UANN"}, {"actions": [{"action_id": STOP_ACTION, "value": 7}]},
                                    {"channel": "C1"}], ids=["user-a-string", "value-a-number", "channel-a-string"])
async def test_a_misshapen_stop_press_over_socket_mode_is_ignored_in_one_line(slack, model_server, slack_config,
                                                                              start_bot, caplog, broken):
    await start_bot(slack_config)
    model_server.script("planner", Reply("Thinking about the plan...", chunk=4, stall_after=8))
    message, _ = await mention(slack, "find all intf keys")
    status = await slack.wait_for(lambda: next((m for m in slack.thread("C1", message.ts) if stop_button(m)), None))
    payload = {**block_action("UANN", status, STOP_ACTION, stop_button(status) or ""), **broken}
    await slack.wait_ack(await slack.deliver(interactive_envelope(payload, "env-broken")))
    await eventually(lambda: any("button press" in r.getMessage() for r in caplog.records))
    assert not [r for r in caplog.records if r.exc_info] and stop_button(slack.thread("C1", message.ts)[0])
    await press_stop(slack, message.ts)  # the bot still answers a real press
    await finished(slack, "C1", message.ts)


def _counts_the_cut_reply(tokens: str) -> bool:
    """The Planner's 1,000 in / 500 out as the server counted them, and the Programmer's reply the stop cut short:
    its prompt was sent, so the total is estimated, and above the Planner's alone."""
    match = re.fullmatch(r"Tokens: ~([\d,]+) in / ~([\d,]+) out \(estimated\) \(about \$([\d.]+)\)", tokens)
    return bool(match) and int(match[1].replace(",", "")) > 1000 and float(match[3]) > 0.002
