"""Thread reading figures, printed (no assertions on time): what a mention in a long Slack thread costs
before the Planner's turn.

The real slack_sdk client reads threads of 300, 3,000 and 10,000 messages from the loopback fake Slack
(``conversations.replies``, 200 a page, every page), and the core builds the request's context from them
(``bot.runs.thread_context``: masking, the bounds, code blocks read as files). Every tenth message holds a
fenced code block; every fiftieth a pasted token.

Run: python -m benchmarks.thread_bench [--sizes 300 3000 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import time

import aiohttp

from adapters.slack.app import web_client
from adapters.slack.earlier import read_earlier
from adapters.slack.messages import Incoming
from bot.config.sections import InputConfig, SlackConfig
from bot.runs.thread_context import thread_context
from tests.fakes.slack_api import BOT_TOKEN, BOT_USER, FakeSlack

CODE = "```python path=mod{n}.py\ndef f{n}():\n    return {n}\n```"


async def bench(size: int) -> str:
    async with FakeSlack() as slack, aiohttp.ClientSession() as session:
        parent = slack.say("C1", "UANN", "the thread starts")
        for n in range(1, size):
            text = CODE.format(n=n) if n % 10 == 0 else f"message {n}"
            if n % 50 == 0:
                text += " token ghp_" + "A1" * 18
            slack.say("C1", "UBOB" if n % 2 else "UANN", text, thread_ts=parent.ts)
        mention = slack.say("C1", "UCAT", f"<@{BOT_USER}> write tests", thread_ts=parent.ts)
        message = Incoming("C1", "UCAT", mention.ts, parent.ts, mention.text, (), direct=False)
        client = web_client(SlackConfig(api_url=slack.api_url), BOT_TOKEN, session)
        limits = InputConfig()
        began = time.perf_counter()
        earlier = await read_earlier(client, message, BOT_USER, limits.thread_messages, session, slack.api_url,
                                     limits.max_attachment_bytes, limits.max_attachments)
        fetched = time.perf_counter()
        context = thread_context(earlier.messages, "write tests", limits)
        built = time.perf_counter()
        pages = len(slack.called("conversations.replies"))
    return (f"{size:>6} messages: fetched in {(fetched - began) * 1000:8.1f} ms ({pages} pages), context built in "
            f"{(built - fetched) * 1000:6.1f} ms — {context.summary}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 3000, 10000])
    args = parser.parse_args()
    for size in args.sizes:
        print(asyncio.run(bench(size)))


if __name__ == "__main__":
    main()
