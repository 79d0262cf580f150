"""A recorded run (a scripted team: a failing round, then fixed) as a person reads it in a Slack thread."""

from __future__ import annotations

import html

import pytest

from adapters.slack.thread import STOP_ACTION
from tests.chat.recorded import check_readable, script, verdict, write_transcript
from tests.conftest import with_changes
from tests.fakes.slack_api import ALL_SCOPES, FakeSlack
from tests.fakes.team_script import ScriptedSandbox
from tests.slack.conftest import finished, headers, mention


def has_stop(blocks) -> bool:
    return any(e.get("action_id") == STOP_ACTION for b in blocks or [] for e in b.get("elements", []))


@pytest.mark.parametrize("agent_features", [True, False], ids=["streamed-plan", "edited-message"])
async def test_a_recorded_run_reads_well_in_slack(model_server, slack_config, start_bot, agent_features):
    scopes = ALL_SCOPES if agent_features else tuple(s for s in ALL_SCOPES if s != "assistant:write")
    async with FakeSlack(scopes=scopes) as slack:
        config = with_changes(slack_config, slack={"api_url": slack.api_url})
        await start_bot(config, sandbox=ScriptedSandbox(verdict=verdict), fake=slack)
        script(model_server)
        message, _ = await mention(slack, "find all intf keys in a nested structure")
        thread = await finished(slack, "C1", message.ts)

    write_transcript([(html.unescape(m.text), [f["title"] for f in m.files]) for m in thread])
    check_readable([m.text for m in thread], "🧪 *Tests*", html.unescape)
    # The Tester writes while the Programmer codes, and the review runs beside the tests (the default order):
    # turns written at once are shown whole, one after the other.
    assert headers(thread) == ["Planner", "Programmer", "Tester", "Optimizer (review)", "Manager (triage)",
                               "Programmer", "Optimizer (review)", "Check-In"]
    assert not slack.called("chat.delete")  # nothing posted and then taken back
    status = thread[0]
    updates = [c for c in slack.called("chat.update") if c.args["ts"] == status.ts]
    if agent_features:  # Stop came with the streamed plan, and the final update took it off
        [start] = slack.called("chat.startStream")
        assert any(has_stop(chunk.get("blocks")) for chunk in start.args["chunks"] if chunk["type"] == "blocks")
        assert len(updates) == 1
    else:  # Stop on the message while the run went, in every edit but the last
        assert slack.called("chat.postMessage")[0].args.get("blocks") and updates
        assert all(has_stop(c.args.get("blocks")) for c in updates[:-1])
    assert not has_stop(updates[-1].args.get("blocks")) and not has_stop(status.blocks)
    assert sorted(status.text.splitlines()[1:]) == sorted([  # the review and the tests of a round end in either order
        "✅ Plan — language: python", "✅ Code · round 1", "✅ Review · round 1 — approves",
        "❌ Tests · round 1 — 120 passed, 1 failed", "✅ Triage · round 1 — fix the code", "✅ Fix · round 2",
        "✅ Review · round 2 — approves", "✅ Tests · round 2 — 121 passed, 0 failed",
        f"✅ Check-in — {thread[-1].text.split('Result: ')[1].splitlines()[0]}"])
