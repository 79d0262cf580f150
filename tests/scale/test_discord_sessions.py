"""Discord with two replicas on one PostgreSQL, each with its own gateway session on the same shard (the loopback
gateway sends every event to both, as Discord does to two sessions of one shard): a mention starts one run, drawn
once, whichever replica's worker claims it; ``first_sighting`` keeps the second session's copy out."""

from __future__ import annotations

import asyncio
import contextlib

from adapters.discord import endpoints, make_bot
from bot.model.client import OpenAIChatModel
from bot.runs.service import Service
from bot.safety.redact import Redactor, masked_url
from bot.store.postgres import PostgresStore
from codegen_chat.build import publisher_factory, taking_jobs
from tests.conftest import with_changes
from tests.discord.conftest import eventually, final_message, script_team, thread_of
from tests.discord.payloads import message
from tests.fakes.discord_api import CHANNEL_ID, GUILD_ID, TOKEN, FakeDiscord
from tests.fakes.team_script import ScriptedSandbox


async def test_two_sessions_of_one_shard_start_one_run_for_a_mention(config, secrets, db_url, model_server):
    script_team(model_server)
    async with FakeDiscord() as discord_api, contextlib.AsyncExitStack() as stack:
        settings = with_changes(config, discord={"enabled": True, "api_url": discord_api.api_url,
                                                 "gateway_url": discord_api.gateway_url, "update_interval_s": 0.0,
                                                 "channel_writes_per_5s": 1000, "allowed_guilds": (GUILD_ID,)},
                                storage={"url": db_url, "heartbeat_s": 0.3})
        for number in range(2):
            store = await PostgresStore.open(db_url, masked_url(db_url))
            stack.push_async_callback(store.close)
            store.queue.owner = f"replica-{number}.example:{100 + number}:1"
            service = Service(settings, store, OpenAIChatModel(settings, secrets), ScriptedSandbox(),
                              publisher_factory(settings, secrets, store), redact=Redactor(secrets.values()))
            await stack.enter_async_context(taking_jobs(service, store, settings))
            stack.enter_context(endpoints(settings.discord))
            bot = make_bot(service, settings, secrets)
            task = asyncio.create_task(bot.start(TOKEN))
            stack.push_async_callback(bot.close)
            await eventually(lambda b=bot, t=task: t.done() or b.get_guild(GUILD_ID), "the bot connected")
            await eventually(lambda s=service: s._worker is not None and s._worker.platforms, "taking jobs")
        await discord_api.dispatch("MESSAGE_CREATE", message(discord_api, CHANNEL_ID, "find all intf keys",
                                                             mention_bot=True))
        thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
        await eventually(lambda: final_message(discord_api, thread), "the final message")
        await asyncio.sleep(1.0)  # a second run or thread would show now
        assert len(discord_api.threads) == 1
        assert final_message(discord_api, thread, count=2) is None
        assert len(await store.runs()) == 1
