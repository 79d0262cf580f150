"""A model that says nothing for a while (a busy server): the Discord thread shows that the bot waits for it, in
the status message and in the turn's message, and stops saying so once the model writes."""

from __future__ import annotations

from tests.discord.conftest import eventually, final_message, script_team, thread_of
from tests.discord.payloads import slash_code
from tests.fakes import team_script as s
from tests.fakes.openai_server import Reply

WAITING = "waiting for the model ("


async def test_a_silent_model_shows_as_waiting_until_it_writes(start_bot, discord_api, model_server):
    script_team(model_server, programmer=[Reply(s.CODE, chunk=8, pause_after=0)])  # silent until resumed
    await start_bot(team={"wait_notice_s": 1}, llm={"request_timeout_s": 120.0})  # silent until resumed, however slow
    await discord_api.dispatch("INTERACTION_CREATE", slash_code(discord_api, "find all intf keys"))
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")

    def programmer():
        return next((m for m in discord_api.channel_messages(thread) if m.content.startswith("**Programmer**")), None)
    await eventually(lambda: (m := programmer()) and WAITING in m.content, "the Programmer's turn waiting")
    assert programmer().content.splitlines() == ["**Programmer** · round 1", "_waiting for the model (1 s)…_"]
    status = discord_api.channel_messages(thread)[0]
    await eventually(lambda: f"⏳ Code · round 1 — {WAITING}" in status.content, "the status message waiting")
    assert "✅ Plan — language: python" in status.content and status.payload["components"]  # Stop is still there

    model_server.resume.set()
    await eventually(lambda: final_message(discord_api, thread), "the final message")
    messages = discord_api.channel_messages(thread)
    assert not any(WAITING in m.content for m in messages)
    assert programmer().content.startswith("**Programmer** · round 1\nHere is the implementation.")
    assert "✅ Code · round 1" in messages[0].content.splitlines()
