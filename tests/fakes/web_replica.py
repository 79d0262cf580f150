"""The web chat's side of another replica, as a real process: a conversation with a run under way in the store,
drawn live by this process's hub, whose ops reach the other replicas through PostgreSQL's NOTIFY.

    python -m tests.fakes.web_replica URL KEY

It prints "ready" once its conversation exists; each line then read on stdin is a step it draws ("edit",
"post", "big", "working"), answered with "done STEP"; an empty line ends it.
"""

from __future__ import annotations

import asyncio
import sys

from adapters.web.hub import Hub
from adapters.web.platform import platform
from bot.config.sections import WebConfig
from bot.safety.redact import Redactor, masked_url
from bot.store.postgres import PostgresStore


async def main(url: str, key: str) -> None:
    store = await PostgresStore.open(url, masked_url(url))
    fanout = store.fanout()
    hub = Hub(store, platform(WebConfig()), Redactor(()), busy=lambda _: True, fanout=fanout)
    conversation = hub.new(key, "ann")
    conversation_id = await store.conversation("web", key)
    await store.create_run("run1", conversation_id, "find all intf keys", "ann", [])
    conversation.say("find all intf keys")
    status = await conversation.post("⏳ Planner is planning", stop="run1")
    print("ready", flush=True)
    reader = asyncio.StreamReader()
    await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while step := (await reader.readline()).decode().strip():
        if step == "edit":
            await conversation.edit(status, "⏳ Planner is planning\n✅ Plan — language: python", stop="run1")
        elif step == "post":
            await conversation.post("*Programmer* · round 1\nHere is the implementation.")
        elif step == "big":
            await conversation.post("*Tester* · round 1\n" + "assert find_intf(x) == []\n" * 1_000)
        elif step == "working":
            await conversation.working("Programmer is writing…")
        print(f"done {step}", flush=True)
    await fanout.close()
    await store.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
