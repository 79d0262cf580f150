"""A recorded run (a scripted team: a failing round, then fixed) as a person reads it in a Discord thread."""

from __future__ import annotations

from tests.chat.recorded import check_readable, script, verdict, write_transcript
from tests.discord.conftest import eventually, final_message, thread_of
from tests.discord.payloads import slash_code
from tests.fakes.team_script import ScriptedSandbox


async def test_a_recorded_run_reads_well_in_discord(start_bot, discord_api, model_server):
    script(model_server)
    await start_bot(sandbox=ScriptedSandbox(verdict=verdict))
    await discord_api.dispatch("INTERACTION_CREATE", slash_code(discord_api, "find all intf keys in a nested structure"))
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    await eventually(lambda: final_message(discord_api, thread), "the final message")
    messages = discord_api.channel_messages(thread)

    write_transcript([(m.content, list(m.files)) for m in messages], f"(thread: {discord_api.threads[thread]['name']})")
    check_readable([m.content for m in messages], "🧪 **Tests**")
    assert discord_api.calls_to("DELETE", "/messages/") == []  # nothing posted and then taken back
    control = messages[0]
    posted = discord_api.calls_to("POST", f"/channels/{thread}/messages")[0].json
    edits = [c.json for c in discord_api.calls_to("PATCH", f"/messages/{control.id}")]
    assert posted["components"] and all(e["components"] for e in edits[:-1])  # Stop while the run could stop
    assert edits[-1]["components"] == [] and control.payload["components"] == []
    assert "❌ Tests · round 1 — 120 passed, 1 failed" in control.content
    assert "✅ Tests · round 2 — 121 passed, 0 failed" in control.content
