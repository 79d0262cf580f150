"""The Stop button cancels the run: the model call ends, the thread says "Stopped", the button goes."""

from __future__ import annotations

import re

from agents.types import RunStatus
from bot.chat.access import WRONG_ROLE
from bot.config.sections import Price
from tests.discord.conftest import eventually, final_message, script_team, thread_of
from tests.discord.payloads import ANN, BOB, button_press, message, slash_code
from tests.fakes import team_script as s
from tests.fakes.discord_api import CODERS_ROLE, EPHEMERAL
from tests.fakes.openai_server import Reply


async def _stalled_run(discord_api, model_server) -> tuple[int, int]:
    """A run whose Planner stops talking mid-reply: (its thread, its control message)."""
    script_team(model_server, planner=[Reply(s.PLAN, stall_after=70)])  # past the first line: edits show whole lines
    await discord_api.dispatch("INTERACTION_CREATE", slash_code(discord_api, "find intf keys", roles=(CODERS_ROLE,)))
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    await eventually(lambda: any(m.content.startswith("**Planner**\n1.") for m in discord_api.channel_messages(thread)),
                     "the Planner's first words")
    return thread, discord_api.channel_messages(thread)[0].id


async def test_stop_cancels_the_run(start_bot, discord_api, model_server, store):
    await start_bot()
    thread, control = await _stalled_run(discord_api, model_server)
    press = button_press(discord_api, control, roles=(CODERS_ROLE,))
    await discord_api.dispatch("INTERACTION_CREATE", press)
    final = await eventually(lambda: final_message(discord_api, thread), "the final message")

    assert [c.json["type"] for c in discord_api.calls_to("POST", f"/interactions/{press['id']}/")] == [6]
    assert final.content.startswith("⏹️ Stopped: stopped on request.")
    assert discord_api.messages[control].payload["components"] == []
    assert discord_api.messages[control].content.startswith("⏹️ **Stopped** · run `")
    assert (await store.runs())[0].status == RunStatus.STOPPED
    await eventually(lambda: model_server.disconnects == 1, "the model call closed")
    assert len(model_server.requests) == 1  # nobody after the Planner was asked


async def test_stop_after_the_run_ended_says_so(start_bot, discord_api, model_server):
    await start_bot()
    thread, control = await _stalled_run(discord_api, model_server)
    first = button_press(discord_api, control)  # the press payload keeps the button, as a stale client would
    await discord_api.dispatch("INTERACTION_CREATE", first)
    await eventually(lambda: final_message(discord_api, thread), "the final message")
    assert discord_api.messages[control].payload["components"] == []  # gone; a stale client may still press it
    stale = {**first, "id": str(discord_api.next_id()), "token": "stale-press"}
    discord_api.component_message("stale-press", control)
    await discord_api.dispatch("INTERACTION_CREATE", stale)
    await eventually(lambda: discord_api.calls_to("POST", f"/interactions/{stale['id']}/"), "the answer")
    answer = discord_api.calls_to("POST", f"/interactions/{stale['id']}/")[0].json
    assert answer["type"] == 4 and answer["data"]["flags"] & EPHEMERAL  # told privately, the thread untouched
    run_id = first["data"]["custom_id"].rsplit(":", 1)[1]
    assert answer["data"]["content"] == f"Run `{run_id}` is not running any more."


async def test_stop_from_someone_without_access_is_refused_privately(start_bot, discord_api, model_server, store):
    await start_bot(allowed_roles=(CODERS_ROLE,))
    thread, control = await _stalled_run(discord_api, model_server)
    press = button_press(discord_api, control, user_id=BOB)
    await discord_api.dispatch("INTERACTION_CREATE", press)
    reply = await eventually(lambda: discord_api.original_response(press["token"]), "the refusal")
    assert reply.content == WRONG_ROLE and reply.flags & EPHEMERAL
    assert final_message(discord_api, thread) is None and discord_api.messages[control].payload["components"]
    model_server.release_stalls.set()  # the run goes on to its end
    await eventually(lambda: final_message(discord_api, thread), "the final message")


async def test_a_follow_up_waits_for_the_run_before_it_in_the_thread(start_bot, discord_api, model_server):
    await start_bot(message_content_intent=True)
    thread, control = await _stalled_run(discord_api, model_server)
    model_server.script("planner", s.PLAN)  # for the follow-up
    await discord_api.dispatch("MESSAGE_CREATE", message(discord_api, thread, "now make it async"))
    await eventually(lambda: any(m.content == "ℹ️ Queued: next in line, waiting for a free slot."
                                 for m in discord_api.channel_messages(thread)), "the queue notice")
    assert len(model_server.calls("planner")) == 1  # one run at a time in a thread
    await discord_api.dispatch("INTERACTION_CREATE", button_press(discord_api, control))
    second = await eventually(lambda: final_message(discord_api, thread, count=2), "the follow-up's final message")
    assert final_message(discord_api, thread).content.startswith("⏹️ Stopped")
    assert second.content.startswith("✅ Passed")


async def test_only_the_person_who_started_a_run_can_stop_it(start_bot, discord_api, model_server):
    await start_bot()
    thread, control = await _stalled_run(discord_api, model_server)  # started by ANN
    press = button_press(discord_api, control, user_id=BOB)
    await discord_api.dispatch("INTERACTION_CREATE", press)
    reply = await eventually(lambda: discord_api.original_response(press["token"]), "the refusal")
    assert reply.content == f"Only <@{ANN}> (who started this run) can stop it." and reply.flags & EPHEMERAL
    assert final_message(discord_api, thread) is None and discord_api.messages[control].payload["components"]

    await discord_api.dispatch("INTERACTION_CREATE", button_press(discord_api, control))
    final = await eventually(lambda: final_message(discord_api, thread), "the final message")
    assert final.content.startswith("⏹️ Stopped") and discord_api.messages[control].payload["components"] == []


async def test_a_stopped_runs_last_message_shows_the_tokens_and_cost_it_really_used(start_bot, discord_api, model_server):
    await start_bot(prices={"gpt-4o-mini": Price(1.0, 2.0)})
    script_team(model_server, planner=[Reply(s.PLAN, usage=(1000, 500))],
                programmer=[Reply("Writing the code...\nmore", chunk=4, stall_after=20)])
    await discord_api.dispatch("INTERACTION_CREATE", slash_code(discord_api, "find intf keys"))
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    await eventually(lambda: model_server.calls("programmer"), "the Programmer asked")
    control = discord_api.channel_messages(thread)[0].id
    await discord_api.dispatch("INTERACTION_CREATE", button_press(discord_api, control))
    final = await eventually(lambda: final_message(discord_api, thread), "the final message")
    lines = final.content.splitlines()
    assert lines[0] == "⏹️ Stopped: stopped on request." and _counts_the_cut_reply(lines[1]), lines[1]


def _counts_the_cut_reply(tokens: str) -> bool:
    """The Planner's 1,000 in / 500 out as the server counted them, and the Programmer's reply the stop cut short:
    its prompt was sent, so the total is estimated, and above the Planner's alone."""
    match = re.fullmatch(r"Tokens: ~([\d,]+) in / ~([\d,]+) out \(estimated\) \(about \$([\d.]+)\)", tokens)
    return bool(match) and int(match[1].replace(",", "")) > 1000 and float(match[3]) > 0.002
