"""After a restart, a run the earlier process left unfinished is ended in its Discord thread: the
Stop button goes, and one line says it was interrupted and that a reply continues it."""

from __future__ import annotations

import sqlite3

from tests.discord.conftest import eventually, script_team, thread_of
from tests.discord.payloads import slash_code
from tests.discord.test_stop import _stalled_run
from tests.fakes import team_script as s
from tests.fakes.discord_api import CODERS_ROLE
from tests.fakes.openai_server import Reply

INTERRUPTED = ("⏸️ Interrupted: the bot stopped while this run was under way. "
               "Reply in this thread to continue from where it stopped.")


async def die(bot, store, config, thread) -> None:  # type: ignore[no-untyped-def]
    """The process dies mid-run: nothing it would have said reaches the thread (its connection is gone), and
    the next start finds the run marked interrupted, as the store marks the runs of a dead process."""
    await bot.close()
    run_id = (await store.runs())[0].id
    bot.codegen.service.cancel(run_id)
    await eventually(lambda: not bot.codegen.service.active_run("discord", str(thread)), "the run ended")
    with sqlite3.connect(config.db_path()) as db:
        db.execute("UPDATE runs SET status = 'interrupted', reason = 'the bot stopped while this run was under way'")


async def test_an_interrupted_run_is_ended_in_its_thread_after_a_restart(start_bot, discord_api, model_server,
                                                                         store, config):
    first = await start_bot()
    thread, control = await _stalled_run(discord_api, model_server)
    assert discord_api.messages[control].payload["components"]  # the Stop button, live
    await die(first, store, config, thread)
    assert not any(m.content.startswith("⏹️") for m in discord_api.channel_messages(thread))

    await start_bot()
    final = await eventually(
        lambda: next((m for m in discord_api.channel_messages(thread) if m.content.startswith(INTERRUPTED)), None),
        "the thread told")
    assert final is not None
    assert discord_api.messages[control].payload["components"] == []  # the button is gone
    assert discord_api.messages[control].content.startswith("⏸️ **Interrupted**")  # the status message says so


async def test_an_interrupted_run_keeps_the_steps_its_status_message_showed(start_bot, discord_api, model_server,
                                                                            store, config):
    first = await start_bot()
    script_team(model_server, programmer=[Reply(s.CODE, stall_after=40)])  # it dies while the Programmer writes
    await discord_api.dispatch("INTERACTION_CREATE", slash_code(discord_api, "find intf keys", roles=(CODERS_ROLE,)))
    thread = await eventually(lambda: discord_api.threads and thread_of(discord_api), "a thread")
    control = await eventually(lambda: (m := discord_api.channel_messages(thread)) and "✅ Plan" in m[0].content and m[0],
                               "the plan done")
    await die(first, store, config, thread)

    await start_bot()
    await eventually(lambda: any(m.content.startswith(INTERRUPTED) for m in discord_api.channel_messages(thread)),
                     "the thread told")
    status = discord_api.messages[control.id]
    assert status.content.splitlines()[0].startswith("⏸️ **Interrupted** · run `")
    # What it showed before, kept, and the step the end cut short, marked as the run ended.
    assert status.content.splitlines()[1:] == ["✅ Plan — language: python", "⏹️ Code · round 1"]
    assert status.payload["components"] == []
