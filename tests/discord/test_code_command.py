"""``/code``: deferred at once, a thread opened from the response, every turn in it in order, the link last."""

from __future__ import annotations

from agents.types import RunStatus
from tests.discord.conftest import eventually, final_message, script_team, thread_of
from tests.discord.payloads import slash_code
from tests.fakes import team_script as s
from tests.fakes.discord_api import CODERS_ROLE, EPHEMERAL

TASK = "find all intf keys in nested JSON"


async def test_code_defers_opens_a_thread_and_every_turn_lands_in_it_in_order(
        start_bot, discord_api, model_server, store):
    script_team(model_server)
    await start_bot(allowed_roles=(CODERS_ROLE,))
    interaction = slash_code(discord_api, TASK, roles=(CODERS_ROLE,))
    await discord_api.dispatch("INTERACTION_CREATE", interaction)
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    final = await eventually(lambda: final_message(discord_api, thread), "the final message")

    callback = discord_api.calls_to("POST", f"/interactions/{interaction['id']}/")
    assert [c.json["type"] for c in callback] == [5]  # deferred ("thinking"), the first thing the bot did
    assert not callback[0].json.get("data", {}).get("flags", 0) & EPHEMERAL
    original = discord_api.original_response(interaction["token"])
    assert original.id == thread and TASK in original.content  # the thread starts from the response
    assert discord_api.threads[thread]["name"] == TASK

    messages = discord_api.channel_messages(thread)
    control, *turns = messages
    assert control.payload["components"] == []  # the Stop button is gone once the run is over
    assert control.content.startswith("✅ **Passed** · run `") and "✅ Tests · round 1 — 2 passed, 0 failed" in control.content
    headers = [m.content.split("\n", 1)[0] for m in turns]
    assert headers == [
        "**Planner** — language: python", "**Programmer** · round 1", "**Tester** · round 1",
        "**Optimizer (review)** · round 1 — ✅ approves", headers[4], "**Check-In** · round 1", headers[6], headers[7],
    ]
    assert headers[4] == "🧪 **Tests** (python) · round 1: 2 passed, 0 failed in 0.1s"
    assert s.PLAN.removesuffix("\nLANGUAGE: python") in turns[0].content and "def find_intf(obj):" in turns[1].content
    files_message = turns[6]
    assert files_message.content.startswith("📎 Files of run") and {"intf.py", "test_intf.py", "README.md"} <= set(
        files_message.files)
    jump_url = f"https://discord.com/channels/{files_message.payload['guild_id']}/{thread}/{files_message.id}"
    assert final is turns[7] and final.content.startswith("✅ Passed")
    assert f"Result: {jump_url}" in final.content.splitlines()

    runs = await store.runs()
    assert runs[0].status == RunStatus.PASSED and runs[0].thread_key == str(thread)
    assert all(len(m.content) <= 2000 for m in messages)


async def test_the_control_message_carries_a_stop_button_naming_the_run(start_bot, discord_api, model_server, store):
    script_team(model_server)
    await start_bot()
    await discord_api.dispatch("INTERACTION_CREATE", slash_code(discord_api, TASK))
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    await eventually(lambda: final_message(discord_api, thread), "the final message")
    control_posted = discord_api.calls_to("POST", f"/channels/{thread}/messages")[0].json
    button = control_posted["components"][0]["components"][0]
    run_id = (await store.runs())[0].id
    assert button["custom_id"] == f"codegen:stop:{run_id}" and button["label"] == "Stop"
