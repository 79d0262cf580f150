"""Discord's 2,000 characters: long turns split without breaking code fences, long code as attachments,
and live edits held to the configured pace."""

from __future__ import annotations

import itertools

from agents.types import TestReport, TestStatus
from bot.chat.renderer import WRITING
from tests.discord.conftest import eventually, fences_balanced, final_message, script_team, thread_of
from tests.discord.payloads import slash_code
from tests.fakes import team_script as s
from tests.fakes.openai_server import Reply
from tests.fakes.team_script import ScriptedSandbox

PROSE = "\n".join(f"Step {i}: this paragraph explains one decision of the implementation, at some length." for i in range(20))
HELPERS_BODY = "".join(f"def helper_{i}(x):\n    return x + {i}\n" for i in range(40))
BIG_BODY = "".join(f"VALUE_{i} = {i} * 2  # one row of the long table the tests read\n" for i in range(60))
LONG_REPLY = (f"{PROSE}\n\n```python path=helpers.py\n{HELPERS_BODY}```\n\n"
              f"```python path=big.py\n{BIG_BODY}```\n\n{s.CODE}")


def always_passes(job):
    return TestReport(TestStatus.PASSED, 0, 0.1, 2, 0, "2 passed")


def turn_messages(messages, header: str):
    """The messages of the turn whose first message starts with ``header``: it and its continuations."""
    start = next(i for i, m in enumerate(messages) if m.content.startswith(header))
    turn = [messages[start]]
    for message in messages[start + 1:]:
        if message.content.startswith(("**", "🧪", "📎", "✅", "❌")):
            break
        turn.append(message)
    return turn


async def test_a_5000_character_reply_is_split_at_fences_and_its_long_code_attached(start_bot, discord_api, model_server):
    assert len(LONG_REPLY) >= 5000 and len(HELPERS_BODY) < 1500 < len(BIG_BODY)
    script_team(model_server, programmer=[LONG_REPLY])
    await start_bot(sandbox=ScriptedSandbox(verdict=always_passes))
    await discord_api.dispatch("INTERACTION_CREATE", slash_code(discord_api, "find all intf keys"))
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    await eventually(lambda: final_message(discord_api, thread), "the final message")

    messages = discord_api.channel_messages(thread)
    assert all(len(m.content) <= 2000 for m in messages)
    pieces = turn_messages(messages, "**Programmer**")
    assert len(pieces) >= 2 and all(fences_balanced(p.content) for p in pieces)
    shown = "\n".join(p.content for p in pieces)
    assert all(f"def helper_{i}(x):" in shown for i in range(40))  # short code stays inline, across pieces
    assert "VALUE_" not in shown and "📎 `big.py` (60 lines) is attached below." in shown
    upload = next(m for m in messages if "big.py" in m.files)
    assert upload.content == "📎 Programmer: `big.py`" and upload.files["big.py"].decode() == BIG_BODY
    assert any("big.py" in c.files for c in discord_api.calls_to("POST", f"/channels/{thread}/messages"))
    assert discord_api.calls_to("DELETE", "/messages/") == []  # decided before posting: nothing flashes


async def test_a_streaming_turn_is_edited_live(start_bot, discord_api, model_server):
    script_team(model_server)
    await start_bot()  # update_interval_s = 0: every delta may edit
    await discord_api.dispatch("INTERACTION_CREATE", slash_code(discord_api, "find all intf keys"))
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    await eventually(lambda: final_message(discord_api, thread), "the final message")
    programmer = turn_messages(discord_api.channel_messages(thread), "**Programmer**")[0]
    edits = [c.json["content"] for c in discord_api.calls_to("PATCH", f"/messages/{programmer.id}")]
    assert len(edits) > 2 and edits[-1] == programmer.content
    # While it streams, each edit shows more of the same text (a code block still open is closed for display);
    # the last one is the finished turn, its code captioned with the file.
    live = [edit.removesuffix(f"\n{WRITING}").removesuffix("\n```") for edit in edits[:-1]]
    assert all(later.startswith(earlier) for earlier, later in itertools.pairwise(live))
    assert "📄 `intf.py`\n```python\ndef find_intf(obj):" in edits[-1]


async def test_edits_wait_for_the_interval(start_bot, discord_api, model_server):
    script_team(model_server)
    await start_bot(update_interval_s=0.5)  # each reply comes whole and at once: only the final text is written
    await discord_api.dispatch("INTERACTION_CREATE", slash_code(discord_api, "find all intf keys"))
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    await eventually(lambda: final_message(discord_api, thread), "the final message")
    for header in ("**Planner**", "**Programmer**", "**Tester**"):
        message = turn_messages(discord_api.channel_messages(thread), header)[0]
        assert len(discord_api.calls_to("PATCH", f"/messages/{message.id}")) == 1  # "…", then the whole turn


async def test_compact_threads_hold_the_status_the_files_and_the_result_only(start_bot, discord_api, model_server):
    script_team(model_server)
    await start_bot(thread_detail="compact")
    await discord_api.dispatch("INTERACTION_CREATE", slash_code(discord_api, "find all intf keys"))
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    final = await eventually(lambda: final_message(discord_api, thread), "the final message")
    status, *attachments, last = discord_api.channel_messages(thread)
    assert last is final and all(m.files for m in attachments)
    assert [m.content.split(":")[0] for m in attachments] == [
        "📎 Programmer · round 1", "📎 Tester · round 1", f"📎 Files of run `{status.content.split('`')[1]}` (passed)"]
    assert "✅ Review · round 1 — approves" in status.content and status.payload["components"] == []
    assert discord_api.calls_to("DELETE", "/messages/") == []


def always_fails(job):
    return TestReport(TestStatus.FAILED, 1, 0.1, 1, 1, "FAILED test_intf.py::test_nested - AssertionError\n1 failed, 1 passed")


async def test_the_status_of_a_run_of_many_rounds_keeps_within_2000_characters_to_its_end(
        start_bot, discord_api, model_server):
    rounds = 30  # a line per step, four steps a round: far more than one message holds
    script_team(model_server, programmer=[s.CODE] * rounds, tester=[s.TESTS] * rounds,
                optimizer=[s.APPROVE] * rounds, manager=[s.FIX_CODE] * rounds)
    await start_bot(sandbox=ScriptedSandbox(verdict=always_fails), budget={"max_rounds": rounds, "max_tokens": 10**9})
    await discord_api.dispatch("INTERACTION_CREATE", slash_code(discord_api, "find all intf keys"))
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    await eventually(lambda: final_message(discord_api, thread), "the final message")

    status = discord_api.channel_messages(thread)[0]
    assert status.content.startswith("❌ **Failed**") and status.payload["components"] == []  # its last edit landed
    assert len(status.content) <= 2000 and f"Tests · round {rounds} — 1 passed, 1 failed" in status.content
    assert "earlier steps" in status.content and "Plan — language: python" not in status.content


async def test_a_status_message_deleted_mid_run_is_left_alone_and_the_run_ends_as_usual(
        start_bot, discord_api, model_server):
    script_team(model_server, programmer=[Reply(s.CODE, pause_after=10)])
    await start_bot()
    await discord_api.dispatch("INTERACTION_CREATE", slash_code(discord_api, "find all intf keys"))
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    await eventually(lambda: any(m.content.startswith("**Programmer")
                                 for m in discord_api.channel_messages(thread)), "the Programmer's turn")
    status = discord_api.channel_messages(thread)[0]
    await discord_api.dispatch("MESSAGE_DELETE", {"id": str(status.id), "channel_id": str(thread)})
    status.deleted, edits_before = True, len(discord_api.calls_to("PATCH", f"/messages/{status.id}"))
    model_server.resume.set()

    final = await eventually(lambda: final_message(discord_api, thread), "the final message")
    assert final.content.startswith("✅ Passed")
    # Told once that the message is gone, the bot edits it no more (each edit was a refused call and an error).
    assert len(discord_api.calls_to("PATCH", f"/messages/{status.id}")) - edits_before <= 1
