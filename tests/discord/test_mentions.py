"""What the models write pings no one on Discord: every message the bot sends or edits (thread messages,
the response to /code, follow-ups, replies) allows no mention but of the person it answers, and mentions
in model text are shown as written."""

from __future__ import annotations

from tests.discord.conftest import eventually, final_message, script_team, thread_of
from tests.discord.payloads import ANN, slash_code
from tests.fakes import team_script as s
from tests.fakes.discord_api import CODERS_ROLE

HOSTILE = f"@everyone @here <@{ANN + 1}> <@&{CODERS_ROLE}> look"


def writes(discord_api) -> list:
    """Every call that sends or changes a message's text."""
    return [c for c in discord_api.calls if c.method in ("POST", "PATCH") and isinstance(c.json, dict)
            and ("content" in c.json or "content" in (c.json.get("data") or {}))]


def allowed(call) -> dict:
    body = call.json.get("data") if "data" in call.json and "content" not in call.json else call.json
    return body.get("allowed_mentions")


async def test_model_text_and_the_quoted_task_ping_no_one(start_bot, discord_api, model_server):
    script_team(model_server, planner=[f"{HOSTILE}\n{s.PLAN}"], optimizer=[f"{HOSTILE}\n{s.APPROVE}"])
    await start_bot()
    await discord_api.dispatch("INTERACTION_CREATE", slash_code(discord_api, f"find keys {HOSTILE}"))
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    await eventually(lambda: final_message(discord_api, thread), "the final message")

    sent = writes(discord_api)
    assert len(sent) > 5
    for call in sent:
        mentions = allowed(call)
        assert mentions is not None, call.path
        assert mentions.get("parse") == [] and {str(u) for u in mentions.get("users", [])} <= {str(ANN)}, (call.path, mentions)
        assert not mentions.get("replied_user")
    shown = "\n".join(m.content for m in discord_api.messages.values())
    assert "@\u200beveryone" in shown and f"<\u200b@{ANN + 1}>" in shown
    assert "@everyone" not in shown and f"<@{ANN + 1}>" not in shown and f"<@&{CODERS_ROLE}>" not in shown
