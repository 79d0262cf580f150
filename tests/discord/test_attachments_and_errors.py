"""Attached files are read as text (size-capped, with a clear refusal otherwise); failures reach the thread
as one sentence; secrets are never posted."""

from __future__ import annotations

from agents.types import TestJob, TestReport, TestStatus
from tests.discord.conftest import eventually, final_message, script_team, thread_of
from tests.discord.payloads import message, slash_code
from tests.fakes import team_script as s
from tests.fakes.discord_api import CHANNEL_ID, EPHEMERAL, TOKEN
from tests.fakes.openai_server import Reply, error
from tests.fakes.team_script import ScriptedSandbox

MAIN_PY = "def parse(line):\n    return line.split(',')\n"


async def test_a_text_file_on_code_reaches_the_team(start_bot, discord_api, model_server):
    script_team(model_server)
    await start_bot()
    file = discord_api.add_file("main.py", MAIN_PY.encode())
    await discord_api.dispatch("INTERACTION_CREATE", slash_code(discord_api, "write tests for main.py", file=file))
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    await eventually(lambda: final_message(discord_api, thread), "the final message")
    assert MAIN_PY in model_server.calls("planner")[0].body["messages"][1]["content"]


async def test_a_binary_file_is_refused_in_one_sentence_without_a_model_call(start_bot, discord_api, model_server):
    await start_bot()
    file = discord_api.add_file("photo.png", b"\x89PNG\r\n\x1a\n\x00\x00", "image/png")
    interaction = slash_code(discord_api, "what is in this picture", file=file)
    await discord_api.dispatch("INTERACTION_CREATE", interaction)
    await eventually(lambda: discord_api.calls_to("PATCH", f"/{interaction['token']}/messages/@original"), "the answer")
    answer = discord_api.original_response(interaction["token"])
    assert answer.content == "⚠️ photo.png looks like a binary file; only text files can be attached."
    assert model_server.requests == [] and not discord_api.threads


async def test_an_oversized_file_is_refused_privately_before_download(start_bot, discord_api, model_server):
    await start_bot(max_attachment_bytes=100)
    file = discord_api.add_file("big.txt", b"x" * 101)
    interaction = slash_code(discord_api, "summarise this", file=file)
    await discord_api.dispatch("INTERACTION_CREATE", interaction)
    answer = await eventually(lambda: discord_api.original_response(interaction["token"]), "the refusal")
    assert answer.content == "big.txt is 101 bytes; attachments are limited to 100 bytes." and answer.flags & EPHEMERAL
    assert model_server.requests == []


async def test_a_file_on_a_mention_reaches_the_team(start_bot, discord_api, model_server):
    script_team(model_server)
    await start_bot()
    file = discord_api.add_file("main.py", MAIN_PY.encode())
    mention = message(discord_api, CHANNEL_ID, "write tests for this", mention_bot=True, attachments=[file])
    await discord_api.dispatch("MESSAGE_CREATE", mention)
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    await eventually(lambda: final_message(discord_api, thread), "the final message")
    assert MAIN_PY in model_server.calls("planner")[0].body["messages"][1]["content"]


async def test_an_empty_task_is_refused_privately(start_bot, discord_api, model_server):
    await start_bot()
    interaction = slash_code(discord_api, "   ")
    await discord_api.dispatch("INTERACTION_CREATE", interaction)
    answer = await eventually(lambda: discord_api.original_response(interaction["token"]), "the refusal")
    assert answer.content.startswith("The task is empty") and answer.flags & EPHEMERAL


async def test_a_failing_model_ends_the_run_with_one_sentence_in_the_thread(start_bot, discord_api, model_server):
    model_server.script("planner", *[error(500, "upstream exploded")] * 5)
    await start_bot()
    await discord_api.dispatch("INTERACTION_CREATE", slash_code(discord_api, "find all intf keys"))
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    final = await eventually(lambda: final_message(discord_api, thread), "the final message")
    first_line = final.content.splitlines()[0]
    assert first_line.startswith("⚠️ Error: ") and first_line.endswith("attempts.") and ".." not in first_line
    assert not any("Traceback" in m.content for m in discord_api.channel_messages(thread))


async def test_secrets_are_never_posted(start_bot, discord_api, model_server, discord_secrets):
    leaky = s.CODE.replace("Here is the implementation.", f"Using token {TOKEN} and {discord_secrets.openai_api_key}.")
    script_team(model_server, programmer=[leaky], checkin=[f"# README\n\nexport DISCORD_TOKEN={TOKEN}\n"])
    await start_bot()
    await discord_api.dispatch("INTERACTION_CREATE", slash_code(discord_api, "find all intf keys"))
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    await eventually(lambda: final_message(discord_api, thread), "the final message")
    posted = [c.json for c in discord_api.calls if c.json] + [
        data.decode() for c in discord_api.calls for data in c.files.values()]
    assert any("[redacted]" in str(p) for p in posted)
    assert not any(TOKEN in str(p) or discord_secrets.openai_api_key in str(p) for p in posted)


async def test_files_discord_will_not_take_end_in_a_plain_note_not_a_crash(start_bot, discord_api, model_server):
    discord_api.accepts_files = False
    script_team(model_server)
    await start_bot()
    await discord_api.dispatch("INTERACTION_CREATE", slash_code(discord_api, "find all intf keys"))
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    final = await eventually(lambda: final_message(discord_api, thread), "the final message")
    notes = [m.content for m in discord_api.channel_messages(thread) if m.content.startswith("ℹ️")]
    assert notes == ["ℹ️ Check-in failed: Discord did not take the files (413 Request entity too large). "
                     "The files are kept with the run."]
    assert final.content.startswith("✅ Passed") and "Result:" not in final.content


NESTED_CODE = s.CODE + "\n```python path=a/b.py\nNESTED = 1\n```\n\n```python path=a_b.py\nFLAT = 2\n```\n"


def always_fails(job: TestJob) -> TestReport:
    return TestReport(TestStatus.FAILED, 1, 0.1, 1, 1, "FAILED test_intf.py::test_nested - AssertionError")


async def test_a_failing_runs_attached_files_carry_the_banner_and_distinct_names(start_bot, discord_api, model_server):
    model_server.responder = lambda recorded: Reply(s.TEAM_DEFAULTS[recorded.agent])
    model_server.script("programmer", *[NESTED_CODE] * 10)  # every round writes the same files
    await start_bot(sandbox=ScriptedSandbox(verdict=always_fails))
    await discord_api.dispatch("INTERACTION_CREATE", slash_code(discord_api, "find all intf keys"))
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    final = await eventually(lambda: final_message(discord_api, thread), "the final message")
    assert final.content.startswith("❌ Failed")
    files = next(m for m in discord_api.channel_messages(thread) if m.content.startswith("📎 Files of run")).files
    assert files["a__b.py"] == b"NESTED = 1\n" and files["a_b.py"] == b"FLAT = 2\n"
    assert files["README.md"].decode().startswith("> **Status: FAILING TESTS**")
