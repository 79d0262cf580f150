"""A turn shows in its thread as it streams, whole lines at a time, so redaction always sees a secret whole."""

from __future__ import annotations

from tests.discord.conftest import eventually, final_message, script_team, thread_of
from tests.discord.payloads import slash_code
from tests.fakes import team_script as s
from tests.fakes.discord_api import TOKEN
from tests.fakes.openai_server import Reply


async def test_a_secret_split_across_two_deltas_never_shows_in_any_edit(start_bot, discord_api, model_server):
    leaky = f"0. Log in with {TOKEN} first.\n{s.PLAN}"
    assert 0 < leaky.index(TOKEN) < 24 < leaky.index(TOKEN) + len(TOKEN)  # the first delta ends inside it
    script_team(model_server, planner=[Reply(leaky, chunk=24)])
    await start_bot()  # update_interval_s = 0: every delta is drawn at once
    await discord_api.dispatch("INTERACTION_CREATE", slash_code(discord_api, "find all intf keys"))
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    await eventually(lambda: final_message(discord_api, thread), "the final message")

    drawn = [str(c.json) for c in discord_api.calls if c.method in ("POST", "PATCH") and c.json]
    planner = [d for d in drawn if "**Planner**" in d]
    assert len(planner) > 2  # it did stream, in several edits
    assert not any(TOKEN[:8] in d for d in drawn)
    assert any("Log in with [redacted] first." in d for d in planner)


async def test_who_is_at_work_shows_as_discords_typing_indicator(start_bot, discord_api, model_server):
    script_team(model_server)
    await start_bot()
    await discord_api.dispatch("INTERACTION_CREATE", slash_code(discord_api, "find all intf keys"))
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    await eventually(lambda: final_message(discord_api, thread), "the final message")
    assert len(discord_api.calls_to("POST", f"/channels/{thread}/typing")) >= 5  # once per agent's turn at least
