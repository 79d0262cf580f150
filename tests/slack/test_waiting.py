"""A model that says nothing for a while (a busy server): the Slack thread shows that the bot waits for it, in
the status message (streamed as a plan, or edited), in the turn's reply and as the thread's status, and stops
saying so once the model writes."""

from __future__ import annotations

import pytest

from tests.conftest import with_changes
from tests.fakes import team_script as s
from tests.fakes.openai_server import Reply
from tests.fakes.slack_api import ALL_SCOPES, FakeSlack
from tests.slack.conftest import eventually, finished, mention, script_team

WAITING = "waiting for the model ("


@pytest.mark.parametrize("agent_features", [True, False], ids=["streamed-plan", "edited-message"])
async def test_a_silent_model_shows_as_waiting_until_it_writes(model_server, slack_config, start_bot, agent_features):
    scopes = ALL_SCOPES if agent_features else tuple(s for s in ALL_SCOPES if s != "assistant:write")
    async with FakeSlack(scopes=scopes) as slack:
        # The silence lasts until resumed, however slow the machine: no request timeout ends it first.
        config = with_changes(slack_config, slack={"api_url": slack.api_url}, team={"wait_notice_s": 1},
                              llm={"request_timeout_s": 120.0})
        await start_bot(config, fake=slack)
        script_team(model_server, planner=[Reply(s.PLAN, chunk=8, pause_after=0)])  # silent until resumed
        message, _ = await mention(slack, "find all intf keys")

        def planner_reply():
            return next((m for m in slack.thread("C1", message.ts) if m.text.startswith("*Planner*")), None)
        status = await eventually(lambda: (slack.thread("C1", message.ts) or [None])[0])
        if agent_features:
            await eventually(lambda: WAITING in (status.tasks.get("plan-0", {}).get("details") or ""))
        else:
            await eventually(lambda: f"⏳ Plan — {WAITING}" in status.text)
        reply = await eventually(lambda: (m := planner_reply()) and WAITING in m.text and m)
        assert reply.text.splitlines() == ["*Planner*", "_waiting for the model (1 s)…_"]
        assert any(said == "Planner is waiting for the model (1 s)…" for _, _, said in slack.statuses)

        model_server.resume.set()
        thread = await finished(slack, "C1", message.ts)

    assert not any(WAITING in m.text for m in thread)  # the status, the Planner's reply: all moved on
    if agent_features:
        plan = [c.get("details") or "" for c in thread[0].chunks if c.get("type") == "task_update" and c["id"] == "plan-0"]
        assert any(WAITING in d for d in plan) and plan[-1] == "language: python"
    assert "✅ Plan — language: python" in thread[0].text
    said = [said for _, ts, said in slack.statuses if ts == message.ts]
    after = said[said.index("Planner is waiting for the model (1 s)…") + 1]
    assert after == "Planner is writing…"  # the thread's status too, as soon as the model writes
