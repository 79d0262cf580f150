"""After a restart, a run the earlier process left unfinished is ended in its Discord thread: the
Stop button goes, and one line says it was interrupted and that a reply continues it."""

from __future__ import annotations

import sqlite3

from tests.discord.conftest import eventually
from tests.discord.test_stop import _stalled_run

INTERRUPTED = ("⏸️ Interrupted: the bot stopped while this run was under way. "
               "Reply in this thread to continue from where it stopped.")


async def test_an_interrupted_run_is_ended_in_its_thread_after_a_restart(start_bot, discord_api, model_server,
                                                                         store, config):
    first = await start_bot()
    thread, control = await _stalled_run(discord_api, model_server)
    assert discord_api.messages[control].payload["components"]  # the Stop button, live
    # The process dies here: nothing it would have said reaches the thread (its connection is gone), and
    # the next start finds the run marked interrupted, as the store marks the runs of a dead process.
    await first.close()
    run_id = (await store.runs())[0].id
    first.codegen.service.cancel(run_id)
    await eventually(lambda: not first.codegen.service.active_run("discord", str(thread)), "the run ended")
    with sqlite3.connect(config.db_path()) as db:
        db.execute("UPDATE runs SET status = 'interrupted', reason = 'the bot stopped while this run was under way'")
    assert not any(m.content.startswith("⏹️") for m in discord_api.channel_messages(thread))

    await start_bot()
    final = await eventually(
        lambda: next((m for m in discord_api.channel_messages(thread) if m.content.startswith(INTERRUPTED)), None),
        "the thread told")
    assert final is not None
    assert discord_api.messages[control].payload["components"] == []  # the button is gone
    assert discord_api.messages[control].content.startswith("⏸️ **Interrupted**")  # the status message says so
