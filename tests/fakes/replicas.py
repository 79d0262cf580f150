"""Several ``serve`` replicas as real processes on one PostgreSQL, against the loopback Slack fake in HTTP mode
(the documented multi-replica setup: a load balancer spreads Slack's requests over them) and the scripted model
server: for the scale tests and ``benchmarks/replicas_bench.py``."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from tests.fakes.loopback import free_port
from tests.fakes.slack_api import BOT_TOKEN, BOT_USER, SIGNING_SECRET, FakeSlack, event_callback, message_event, signed_headers

ROOT = Path(__file__).resolve().parents[2]
FINAL_WORDS = ("✅ Passed:", "❌ Failed:", "⏹️ Stopped:", "⚠️ Error:")


@dataclass
class Replica:
    name: str
    config: Path
    port: int
    log: Path
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def events_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/slack/events"

    def start(self, sandbox_delay_s: float = 0.0) -> None:
        env = {**os.environ, "OPENAI_API_KEY": "sk-replica-0123456789", "SLACK_BOT_TOKEN": BOT_TOKEN,
               "SLACK_SIGNING_SECRET": SIGNING_SECRET, "CODEGEN_SANDBOX_DELAY_S": str(sandbox_delay_s),
               "PYTHONPATH": str(ROOT), "CODEGEN_REPLICA_HOST": f"{self.name}.replicas.test"}
        with self.log.open("ab") as out:
            self.process = subprocess.Popen([sys.executable, "-m", "tests.fakes.replica", "--config", str(self.config)],
                                            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)

    async def ready(self, within: float = 60.0) -> None:
        """Until its Slack HTTP server answers /healthz (it is then online and its worker claims)."""
        async with asyncio.timeout(within), aiohttp.ClientSession() as session:
            while True:
                if self.process is not None and self.process.poll() is not None:
                    raise RuntimeError(f"replica {self.name} exited: {self.log.read_text()[-3000:]}")
                try:
                    async with session.get(f"http://127.0.0.1:{self.port}/healthz") as response:
                        if response.status == 200:
                            return
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.1)

    def kill(self) -> None:
        """SIGKILL: no shutdown, no last write; the heartbeat just stops."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def stop(self, timeout_s: float = 30.0) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.kill()


def replica(folder: Path, name: str, db_url: str, slack: FakeSlack, model_url: str, heartbeat_s: float = 0.5,
            lost_after_s: float = 2.0, max_concurrent_runs: int = 8, max_runs_per_user: int = 100,
            max_runs_per_replica: int = 0) -> Replica:
    port = free_port()
    config = folder / f"{name}.toml"
    config.write_text(f"""
[llm]
base_url = {json.dumps(model_url)}
request_timeout_s = 30.0
max_retries = 2

[storage]
url = {json.dumps(db_url)}
heartbeat_s = {heartbeat_s}
owner_lost_after_s = {lost_after_s}

[limits]
max_concurrent_runs = {max_concurrent_runs}
max_runs_per_user = {max_runs_per_user}
max_runs_per_replica = {max_runs_per_replica}
max_queued_runs = 1000
max_queued_runs_per_user = 1000

[runtime]
health_port = 0
shutdown_grace_s = 5.0

[slack]
enabled = true
mode = "http"
http_host = "127.0.0.1"
http_port = {port}
api_url = {json.dumps(slack.api_url)}
update_interval_s = 0.2
""")
    return Replica(name, config, port, folder / f"{name}.log")


async def mention(session: aiohttp.ClientSession, slack: FakeSlack, replica: Replica, text: str, channel: str = "C1",
                  user: str = "UANN") -> str:
    """A person mentions the bot; Slack's request reaches ``replica`` (as a load balancer would pick it). Returns
    the thread (the mention's ts)."""
    message = slack.say(channel, user, f"<@{BOT_USER}> {text}")
    body = json.dumps(event_callback(message_event(message), f"Ev{message.ts}"))
    async with session.post(replica.events_url, data=body, headers=signed_headers(body)) as response:
        if response.status != 200:
            raise RuntimeError(f"replica {replica.name} answered {response.status}")
    return message.ts


def finals(slack: FakeSlack, channel: str, thread_ts: str) -> list[str]:
    """The thread's messages that say how a run ended (a status message edited into its summary)."""
    return [m.ts for m in slack.thread(channel, thread_ts) if m.text.startswith(FINAL_WORDS)]


def status_messages(slack: FakeSlack, channel: str, thread_ts: str) -> list[str]:
    """The messages the bot posted with a run's Stop control at some point: one per run drawn."""
    return [m.ts for m in slack.thread(channel, thread_ts) if m.user == BOT_USER and _had_stop(m)]


def _had_stop(message: object) -> bool:
    blocks = getattr(message, "blocks", [])
    return "stop" in json.dumps(blocks).lower()
