"""Edits at the promised pace on Slack: each message (the streamed status message included) is written at
most once per ``update_interval_s``, a turn's last edit included, as the fake Slack received it."""

from __future__ import annotations

import itertools

import pytest

from tests.conftest import with_changes
from tests.fakes import team_script as s
from tests.fakes.openai_server import Reply
from tests.fakes.slack_api import ALL_SCOPES, FakeSlack
from tests.slack.conftest import finished, mention, script_team

LONG_PLAN = "\n".join(f"{n}. Step {n} of walking the nested objects for intf keys." for n in range(1, 30)) + "\nLANGUAGE: python"
WRITES = ("chat.update", "chat.appendStream", "chat.stopStream")
SLACK_S = 0.05  # arrival jitter on a busy machine (the bot and the fake share one monotonic clock)


@pytest.mark.parametrize("scopes", [ALL_SCOPES, tuple(x for x in ALL_SCOPES if x != "assistant:write")],
                         ids=["streamed-status", "edited-status"])
async def test_every_message_keeps_the_edit_pace_its_last_edit_included(model_server, slack_config, start_bot, scopes):
    interval = 0.5
    async with FakeSlack(scopes=scopes) as fake:
        config = with_changes(slack_config, slack={"api_url": fake.api_url, "update_interval_s": interval})
        await start_bot(config, fake=fake)
        script_team(model_server, planner=[Reply(LONG_PLAN, chunk=12)], programmer=[Reply(s.CODE, chunk=12)])
        model_server.pace = (0.0, 100.0)  # a delta every 0.03 s: far faster than the edit pace
        message, _ = await mention(fake, "find all intf keys")
        thread = await finished(fake, "C1", message.ts)
        edited = 0
        for posted in thread:
            writes = [posted.posted_at] + [c.at for c in fake.calls if c.method in WRITES and c.args.get("ts") == posted.ts]
            edited += len(writes) > 2
            gaps = [later - earlier for earlier, later in itertools.pairwise(writes)]
            assert all(gap >= interval - SLACK_S for gap in gaps), (posted.text[:40], gaps)
        assert edited >= 2  # turns were edited while they streamed
