"""Messages in the bot's thread continue the work; a mention in a channel starts it."""

from __future__ import annotations

from tests.discord.conftest import eventually, final_message, script_team, thread_of
from tests.discord.payloads import message, slash_code
from tests.fakes.discord_api import BOT_ROLE, CHANNEL_ID, EPHEMERAL, GUILD_ID


async def _first_run(discord_api, model_server) -> int:
    script_team(model_server)
    await discord_api.dispatch("INTERACTION_CREATE", slash_code(discord_api, "find all intf keys"))
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    await eventually(lambda: final_message(discord_api, thread), "the first run's final message")
    return thread


async def test_a_message_in_the_thread_continues_the_conversation(start_bot, discord_api, model_server, store):
    await start_bot(message_content_intent=True)
    thread = await _first_run(discord_api, model_server)
    script_team(model_server)
    await discord_api.dispatch("MESSAGE_CREATE", message(discord_api, thread, "now make it async"))
    await eventually(lambda: final_message(discord_api, thread, count=2), "the follow-up's final message")

    planner_prompt = model_server.calls("planner")[1].body["messages"][1]["content"]
    assert "find all intf keys" in planner_prompt and "now make it async" in planner_prompt
    assert "def find_intf(obj):" in planner_prompt  # the earlier run's files
    assert len(discord_api.threads) == 1  # the same thread, no new one
    tops = [m.content.splitlines()[0] for m in discord_api.channel_messages(thread) if m.content]
    assert "**Programmer** · round 1" in tops and "**Programmer** · follow-up 1 · round 1" in tops  # no round twice
    assert tops.count("**Programmer** · round 1") == 1
    assert [r.thread_key for r in await store.runs()] == [str(thread), str(thread)]
    assert discord_api.intents & (1 << 15)  # MESSAGE_CONTENT asked for, as configured


async def test_without_the_content_intent_a_follow_up_must_mention_the_bot(start_bot, discord_api, model_server):
    await start_bot()
    thread = await _first_run(discord_api, model_server)
    calls = len(model_server.requests)
    # Without the privileged intent Discord delivers other messages with empty content: nothing to do.
    await discord_api.dispatch("MESSAGE_CREATE", message(discord_api, thread, ""))
    script_team(model_server)
    await discord_api.dispatch("MESSAGE_CREATE", message(discord_api, thread, "now make it async", mention_bot=True))
    await eventually(lambda: final_message(discord_api, thread, count=2), "the follow-up's final message")

    assert model_server.calls("planner")[1].body["messages"][1]["content"].count("now make it async") == 1
    assert len(model_server.requests) == calls + 5  # one run's worth of turns, not two
    assert discord_api.intents == (1 << 0) | (1 << 9)  # GUILDS and GUILD_MESSAGES only


async def test_a_mention_in_a_channel_opens_a_thread_from_that_message(start_bot, discord_api, model_server):
    await start_bot()
    script_team(model_server)
    mention = message(discord_api, CHANNEL_ID, "write a function that finds intf keys", mention_bot=True)
    await discord_api.dispatch("MESSAGE_CREATE", mention)
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    final = await eventually(lambda: final_message(discord_api, thread), "the final message")

    assert thread == int(mention["id"])  # started from the user's message
    assert discord_api.threads[thread]["name"] == "write a function that finds intf keys"
    assert "<@" not in model_server.calls("planner")[0].body["messages"][1]["content"]
    assert final.content.startswith("✅ Passed") and str(GUILD_ID) in final.content


async def test_a_message_delivered_twice_starts_one_run(start_bot, discord_api, model_server, store):
    await start_bot()
    script_team(model_server)
    mention = message(discord_api, CHANNEL_ID, "write a function that finds intf keys", mention_bot=True)
    await discord_api.dispatch("MESSAGE_CREATE", mention)
    await discord_api.dispatch("MESSAGE_CREATE", mention)
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    await eventually(lambda: final_message(discord_api, thread), "the final message")
    assert len(await store.runs()) == 1 and len(discord_api.calls_to("POST", "/threads")) == 1


async def test_unrelated_chatter_and_the_bots_own_messages_start_nothing(start_bot, discord_api, model_server):
    await start_bot(message_content_intent=True)
    await discord_api.dispatch("MESSAGE_CREATE", message(discord_api, CHANNEL_ID, "lunch anyone?"))
    script_team(model_server)
    await discord_api.dispatch("MESSAGE_CREATE", message(discord_api, CHANNEL_ID, "find intf keys", mention_bot=True))
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    await eventually(lambda: final_message(discord_api, thread), "the final message")
    # Every message the bot posted in its thread came back over the gateway, and none started a run.
    assert len(discord_api.threads) == 1 and len(model_server.calls("planner")) == 1


async def test_code_inside_the_bots_thread_continues_there(start_bot, discord_api, model_server):
    await start_bot()
    thread = await _first_run(discord_api, model_server)
    script_team(model_server)
    await discord_api.dispatch("INTERACTION_CREATE", slash_code(discord_api, "now make it async", channel_id=thread))
    await eventually(lambda: final_message(discord_api, thread, count=2), "the follow-up's final message")
    assert len(discord_api.threads) == 1
    assert "find all intf keys" in model_server.calls("planner")[1].body["messages"][1]["content"]


async def test_without_permission_to_open_threads_the_user_is_told_what_to_grant(start_bot, discord_api, model_server):
    discord_api.may_create_threads = False
    await start_bot()
    interaction = slash_code(discord_api, "find all intf keys")
    await discord_api.dispatch("INTERACTION_CREATE", interaction)
    told = await eventually(lambda: discord_api.followups(interaction["token"]), "the explanation")
    assert told[0].content.startswith("⚠️ The bot may not open a thread here") and told[0].flags & EPHEMERAL
    assert model_server.requests == []


async def test_mentioning_the_bots_role_counts_as_mentioning_the_bot(start_bot, discord_api, model_server):
    await start_bot()
    script_team(model_server)
    mention = message(discord_api, CHANNEL_ID, "find intf keys", mention_role=BOT_ROLE)
    await discord_api.dispatch("MESSAGE_CREATE", mention)
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    await eventually(lambda: final_message(discord_api, thread), "the final message")
    assert discord_api.threads[thread]["name"] == "find intf keys"
    assert "<@&" not in model_server.calls("planner")[0].body["messages"][1]["content"]
