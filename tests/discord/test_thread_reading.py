"""A mention in Discord reads the channel's (or thread's) recent history and the message it replies to, with
their attachments: the team sees them as quoted context, code blocks that name a file as files."""

from __future__ import annotations

from tests.discord.conftest import eventually, final_message, script_team, thread_of
from tests.discord.payloads import ANN, BOB, message
from tests.fakes.discord_api import CHANNEL_ID, FORUM_CHANNEL_ID, GUILD_ID, user

MAIN_PY = "def handle(method, path):\n    return 200, []\n"


def said(fake, content: str, **kw) -> dict:
    """A person's message, kept in the channel's history (it arrived before the bot was mentioned)."""
    return fake.remember(message(fake, CHANNEL_ID, content, **kw))


async def people_thread(fake, thread_id: int, parent: int) -> None:
    """A thread ann started in ``parent`` (a channel, or a forum: then it is one of the forum's posts)."""
    thread = {"id": str(thread_id), "type": 11, "guild_id": str(GUILD_ID), "parent_id": str(parent),
              "owner_id": str(ANN), "name": "review", "last_message_id": None, "message_count": 0, "member_count": 2,
              "rate_limit_per_user": 0, "flags": 0, "thread_metadata": {"archived": False, "auto_archive_duration": 1440,
                                                                        "archive_timestamp": "2026-01-01T00:00:00+00:00",
                                                                        "locked": False}}
    fake.threads[thread_id] = thread
    await fake.dispatch("THREAD_CREATE", {**thread, "newly_created": True})


def planner_prompt(model_server) -> str:
    return str(model_server.calls("planner")[0].body["messages"][1]["content"])


async def finish(discord_api, payload: dict) -> int:
    await discord_api.dispatch("MESSAGE_CREATE", payload)
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    await eventually(lambda: final_message(discord_api, thread), "the run's final message")
    return int(thread)


async def test_a_mention_reads_the_channel_above_it_with_its_code_and_files(start_bot, discord_api, model_server):
    await start_bot(message_content_intent=True)
    script_team(model_server)
    said(discord_api, "here is main.py:\n```python\n" + MAIN_PY + "```")
    said(discord_api, "GET /items/3 should be a 404", user_id=BOB)
    other_bot = message(discord_api, CHANNEL_ID, "build 42 deployed")
    other_bot["author"] = user(123, "ci-bot", bot=True)
    discord_api.remember(other_bot)
    schema = discord_api.add_file("schema.sql", b"CREATE TABLE items (id TEXT);\n")
    said(discord_api, "and the schema", attachments=[schema])
    thread = await finish(discord_api, message(discord_api, CHANNEL_ID, "write unit tests for main.py above",
                                               mention_bot=True))

    prompt = planner_prompt(model_server)
    assert "ann:\nhere is main.py:\n[code block: given as the file main.py]" in prompt
    assert "bob:\nGET /items/3 should be a 404" in prompt and "build 42 deployed" not in prompt
    assert "```python path=main.py\n" + MAIN_PY in prompt and "path=schema.sql\nCREATE TABLE items" in prompt
    assert prompt.rsplit("## Task\n", 1)[1].strip() == "write unit tests for main.py above"
    status = discord_api.channel_messages(thread)[0].content
    assert "📖 Read 3 earlier messages, 2 files, 1 code block" in status
    assert discord_api.calls_to("GET", f"/channels/{CHANNEL_ID}/messages")


async def test_the_message_a_mention_replies_to_is_read_beyond_the_bound(start_bot, discord_api, model_server, config):
    await start_bot(message_content_intent=True)
    script_team(model_server)
    spec = said(discord_api, "the spec: item ids are UUIDs, never integers")
    for n in range(60):  # more than [input] thread_messages (50) since the spec
        said(discord_api, f"chatter {n}", user_id=BOB)
    reply = message(discord_api, CHANNEL_ID, "implement the spec", mention_bot=True)
    reply.update(type=19, message_reference={"message_id": spec["id"], "channel_id": str(CHANNEL_ID)},
                 referenced_message=spec)
    await finish(discord_api, reply)
    prompt = planner_prompt(model_server)
    assert "item ids are UUIDs" in prompt and "chatter 59" in prompt and "chatter 9\n" not in prompt


async def test_without_read_message_history_the_run_goes_on_with_the_request_and_says_why(
        start_bot, discord_api, model_server):
    await start_bot(message_content_intent=True)
    script_team(model_server)
    discord_api.may_read_history = False
    said(discord_api, "earlier words")
    thread = await finish(discord_api, message(discord_api, CHANNEL_ID, "find all intf keys", mention_bot=True))
    notices = [m.content for m in discord_api.channel_messages(thread) if "could not read the earlier" in m.content]
    assert len(notices) == 1 and "Read Message History" in notices[0]
    assert "earlier words" not in planner_prompt(model_server)
    assert final_message(discord_api, thread).content.startswith("✅ Passed:")


async def test_without_the_message_content_intent_the_notice_names_it(start_bot, discord_api, model_server):
    await start_bot(message_content_intent=False)
    script_team(model_server)
    said(discord_api, "earlier words")
    thread = await finish(discord_api, message(discord_api, CHANNEL_ID, "find all intf keys", mention_bot=True))
    notices = [m.content for m in discord_api.channel_messages(thread) if "Message Content intent" in m.content]
    assert len(notices) == 1
    assert not discord_api.calls_to("GET", f"/channels/{CHANNEL_ID}/messages")


async def test_a_token_pasted_into_the_mention_is_masked_in_the_thread_name_and_the_prompts(
        start_bot, discord_api, model_server):
    await start_bot(message_content_intent=True)
    script_team(model_server)
    token = "ghp_" + "Q7" * 18
    thread = await finish(discord_api, message(discord_api, CHANNEL_ID, f"deploy with {token}", mention_bot=True))
    assert token not in discord_api.threads[thread]["name"] and "[redacted]" in discord_api.threads[thread]["name"]
    assert all(token not in str(r.body) for r in model_server.requests)
    assert all(token not in m.content for m in discord_api.channel_messages(thread))


async def test_a_mention_in_a_thread_people_started_reads_the_thread_and_its_first_message(
        start_bot, discord_api, model_server):
    await start_bot(message_content_intent=True)
    script_team(model_server)
    starter = said(discord_api, "review thread for main.py")
    thread_id = int(starter["id"])  # Discord gives a thread started from a message that message's id
    await people_thread(discord_api, thread_id, CHANNEL_ID)
    discord_api.remember(message(discord_api, thread_id, "main.py:\n```python\n" + MAIN_PY + "```"))
    discord_api.remember(message(discord_api, thread_id, "it should 404 on unknown ids", user_id=BOB))
    await discord_api.dispatch("MESSAGE_CREATE", message(discord_api, thread_id, "write tests for main.py above",
                                                         mention_bot=True))
    await eventually(lambda: final_message(discord_api, thread_id), "the run's final message")
    prompt = planner_prompt(model_server)
    quoted = prompt[prompt.index("quoted\n"):]
    assert quoted.index("review thread for main.py") < quoted.index("it should 404 on unknown ids")
    assert "```python path=main.py\n" + MAIN_PY in prompt
    assert discord_api.calls_to("GET", f"/channels/{thread_id}/messages")


async def test_mentions_in_the_thread_and_the_request_are_read_as_names_not_ids(start_bot, discord_api, model_server):
    await start_bot(message_content_intent=True)
    script_team(model_server)
    spec = message(discord_api, CHANNEL_ID, f"<@{BOB}> the ids are UUIDs <:party:998877>")
    spec["mentions"] = [user(BOB, "bob")]
    discord_api.remember(spec)
    asked = message(discord_api, CHANNEL_ID, f"do what <@!{BOB}> was told", mention_bot=True)
    asked["mentions"].append(user(BOB, "bob"))
    await finish(discord_api, asked)

    prompt = planner_prompt(model_server)
    assert "ann:\n@bob the ids are UUIDs :party:" in prompt and f"<@{BOB}>" not in prompt and "998877" not in prompt
    assert prompt.rsplit("## Task\n", 1)[1].strip() == "do what @bob was told"


async def test_a_mention_in_a_forum_post_reads_the_post_and_its_replies(start_bot, discord_api, model_server):
    await start_bot(message_content_intent=True)
    script_team(model_server)
    post_id = discord_api.next_id()
    await people_thread(discord_api, post_id, FORUM_CHANNEL_ID)
    opening = message(discord_api, post_id, "main.py:\n```python\n" + MAIN_PY + "```")
    discord_api.remember({**opening, "id": str(post_id)})  # a forum post opens with a message of the post's own id
    discord_api.remember(message(discord_api, post_id, "it should 404 on unknown ids", user_id=BOB))
    await discord_api.dispatch("MESSAGE_CREATE", message(discord_api, post_id, "write tests for main.py above",
                                                         mention_bot=True))
    await eventually(lambda: final_message(discord_api, post_id), "the run's final message")
    prompt = planner_prompt(model_server)
    assert "```python path=main.py\n" + MAIN_PY in prompt and "it should 404 on unknown ids" in prompt
