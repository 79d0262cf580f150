"""Slack figures, printed (no assertions on time): 50 mentions arriving at once on one process.

The real bolt app (Socket Mode) and service run against the loopback fakes: Slack (Web API and
websocket), the scripted OpenAI-compatible model server, a scripted sandbox. Measured per mention:

- ack latency: envelope sent on the websocket -> its ack back (Slack wants it within 3 s);
- first visible reply: envelope sent -> the first message the bot posts in that thread;
- the whole run: envelope sent -> the thread's final summary (runs queue past the concurrency limit).

Targets: ack p99 <= 100 ms, first reply p99 <= 1 s.

Run: python -m benchmarks.slack_bench [--mentions 50] [--update-interval 1.0]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import tempfile
import time
from pathlib import Path

import adapters.slack
from bot.config.sections import Config, LLMConfig, Secrets, SlackConfig, StorageConfig
from bot.model.client import OpenAIChatModel
from bot.runs.service import Service
from bot.store.sqlite import SQLiteStore
from tests.fakes import team_script as s
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.slack_api import APP_TOKEN, BOT_TOKEN, BOT_USER, FakeSlack, events_envelope, message_event
from tests.fakes.team_script import ScriptedSandbox

FINAL_WORDS = ("✅ Passed:", "❌ Failed:", "⏹️ Stopped:", "⚠️ Error:")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def line(name: str, values: list[float], target: float | None = None) -> str:
    p50, p99 = percentile(values, 50) * 1000, percentile(values, 99) * 1000
    verdict = "" if target is None else ("  (target met)" if p99 <= target * 1000 else "  (TARGET MISSED)")
    return f"{name:<22} p50 {p50:8.1f} ms   p99 {p99:8.1f} ms   max {max(values) * 1000:8.1f} ms{verdict}"


async def bench(mentions: int, update_interval: float, folder: Path) -> None:
    async with FakeSlack() as slack, FakeOpenAI(models=("gpt-4o-mini",)) as model_server:
        model_server.responder = lambda recorded: Reply(s.TEAM_DEFAULTS[recorded.agent])
        config = Config(
            llm=LLMConfig(base_url=model_server.base_url, request_timeout_s=30.0, max_retries=2),
            storage=StorageConfig(path=str(folder / "bench.sqlite3")),
            slack=SlackConfig(enabled=True, api_url=slack.api_url, update_interval_s=update_interval),
        )
        secrets = Secrets(openai_api_key="sk-bench-0123456789", slack_bot_token=BOT_TOKEN, slack_app_token=APP_TOKEN)
        store = await SQLiteStore.open(config.db_path())
        model = OpenAIChatModel(config, secrets)
        service = Service(config, store, model, ScriptedSandbox(delay=0.05))
        serving = asyncio.create_task(adapters.slack.serve(service, config, secrets))
        try:
            await slack.wait_for(lambda: slack.connections)
            # Cold: the first burst also waits for bolt's one auth.test. Warm: a burst once that is done.
            await measure(slack, mentions, "cold (just connected)")
            await measure(slack, mentions, "warm")
        finally:
            serving.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await serving
            await model.close()
            await store.close()


async def measure(slack: FakeSlack, mentions: int, label: str) -> None:
    calls_before = len(slack.calls)
    messages = [slack.say(f"C{i % 5}", f"U{i:03d}", f"<@{BOT_USER}> find all intf keys, please ({i})")
                for i in range(mentions)]
    envelopes = [events_envelope(message_event(m), f"EvB{m.ts}") for m in messages]
    started = time.monotonic()
    ids = await asyncio.gather(*(slack.deliver(e) for e in envelopes))  # all at once
    await asyncio.gather(*(slack.wait_ack(i, within=30) for i in ids))

    def all_replied() -> bool:
        return all(slack.thread(m.channel, m.ts) for m in messages)

    def all_finished() -> bool:
        return all(any(r.text.startswith(FINAL_WORDS) for r in slack.thread(m.channel, m.ts)) for m in messages)

    await slack.wait_for(all_replied, within=60)
    await slack.wait_for(all_finished, within=600)
    total = time.monotonic() - started

    acks = [slack.acks[i] - slack.sent[i] for i in ids]
    first = [slack.thread(m.channel, m.ts)[0].posted_at - slack.sent[i] for m, i in zip(messages, ids, strict=True)]
    done = [next(r for r in slack.thread(m.channel, m.ts) if r.text.startswith(FINAL_WORDS)).posted_at - slack.sent[i]
            for m, i in zip(messages, ids, strict=True)]
    passed = sum(slack.thread(m.channel, m.ts)[-1].text.startswith("✅ Passed:") for m in messages)
    print(f"\n{mentions} mentions at once, {label}: one process, Socket Mode, scripted model and sandbox")
    acked = sum(i in slack.acks for i in ids)
    print(f"acknowledged: {acked}/{mentions}; runs passed: {passed}/{mentions}; all done in {total:.1f} s")
    print(line("ack latency", acks, 0.100))
    print(line("first visible reply", first, 1.0))
    print(line("whole run (queued)", done))
    calls = slack.calls[calls_before:]
    print(f"Web API calls: {len(calls)} ({sum(c.method == 'chat.update' for c in calls)} chat.update)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mentions", type=int, default=50)
    parser.add_argument("--update-interval", type=float, default=SlackConfig().update_interval_s)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(bench(args.mentions, args.update_interval, Path(folder)))


if __name__ == "__main__":
    main()
