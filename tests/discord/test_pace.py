"""Edits at the promised pace on Discord: each message is written at most once per ``update_interval_s``
(the last edit of a turn included), and a thread takes no more writes than ``channel_writes_per_5s``, as
the fake Discord received them."""

from __future__ import annotations

import itertools

from tests.discord.conftest import eventually, final_message, script_team, thread_of
from tests.discord.payloads import slash_code
from tests.fakes import team_script as s
from tests.fakes.openai_server import Reply

LONG_PLAN = "\n".join(f"{n}. Step {n} of walking the nested objects for intf keys." for n in range(1, 30)) + "\nLANGUAGE: python"
SLACK_S = 0.05  # arrival jitter on a busy machine: the bot's clock and the fake's are the same monotonic one


async def run(start_bot, discord_api, model_server, streamed: bool = True, **discord) -> int:
    if streamed:
        script_team(model_server, planner=[Reply(LONG_PLAN, chunk=12)], programmer=[Reply(s.CODE, chunk=12)])
        model_server.pace = (0.0, 100.0)  # three tokens a delta: 0.03 s apart, far faster than the edit pace
    else:
        script_team(model_server)
    await start_bot(**discord)
    await discord_api.dispatch("INTERACTION_CREATE", slash_code(discord_api, "find all intf keys"))
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    await eventually(lambda: final_message(discord_api, thread), "the final message")
    return thread


async def test_every_message_keeps_the_edit_pace_its_last_edit_included(start_bot, discord_api, model_server):
    interval = 0.5
    thread = await run(start_bot, discord_api, model_server, update_interval_s=interval)
    messages = discord_api.channel_messages(thread)
    assert sum(len(m.writes) > 2 for m in messages) >= 2  # turns were edited while they streamed
    for message in messages:
        gaps = [later - earlier for earlier, later in itertools.pairwise(message.writes)]
        assert all(gap >= interval - SLACK_S for gap in gaps), (message.content[:40], gaps)


async def test_a_thread_stays_within_its_write_rate(start_bot, discord_api, model_server):
    thread = await run(start_bot, discord_api, model_server, streamed=False, update_interval_s=0.0,
                       channel_writes_per_5s=25)
    writes = sorted(t for m in discord_api.channel_messages(thread) for t in m.writes)
    assert len(writes) > 25  # more than a window's worth, so the pace had to hold some back
    for index, first in enumerate(writes):
        in_window = [t for t in writes[index:] if t - first < 5.0 - SLACK_S]
        assert len(in_window) <= 25, (index, len(in_window))
