"""Is the bot alive, and can it take work? ``/healthz`` and ``/readyz`` for supervisors and load balancers.

``/healthz`` answers 200 while the process's event loop runs. ``/readyz`` answers 200 when every part the
bot needs answers, else 503; its JSON body names each part and what is wrong with it:

    store    the database takes a write now (a probe of its own, bounded by PROBE_TIMEOUT_S)
    docker   the sandbox's engine answers a ping (at most once per DOCKER_EVERY_S; in a worker thread)
    <chat>   each chat adapter says whether it is connected (Slack, Discord, ...)
    model    the endpoint's last answer in a real run. A probe never calls the model, and a failure there
             is shown but does not make the bot unready: a bot taken out of rotation would get no run
             to show the endpoint is back.

The checks here are framework-free (``Health.readiness``); ``bot.health.http`` serves them over HTTP.
``codegen-chat health`` asks a running bot (a container's HEALTHCHECK runs it; ``codegen_chat.health``).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any

from agents.errors import ModelError
from agents.protocols import ChatModel
from bot.config.sections import SandboxConfig
from bot.model.watched import WatchedModel
from bot.store.protocol import Store

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 3.0
Connected = Callable[[], bool | Awaitable[bool]]  # whether a chat adapter's connection is up now
DOCKER_EVERY_S = 5.0  # a probe storm pings the engine no more often than this


@dataclass(frozen=True)
class Part:
    ok: bool
    detail: str
    required: bool = True


@dataclass(frozen=True)
class Readiness:
    ready: bool
    parts: dict[str, Part]

    def as_json(self, detailed: bool = True) -> dict[str, Any]:
        """The answer's body. Without ``detailed``, each part says only whether it is fine: what is wrong names
        the bot's insides (a database's location, a Docker engine's address, the model endpoint's failures), which
        are for the people running the bot, not for anyone who can reach the port."""
        if not detailed:
            return {"ready": self.ready,
                    "parts": {name: {"ok": part.ok, "required": part.required} for name, part in self.parts.items()}}
        return {"ready": self.ready, "parts": {name: asdict(part) for name, part in self.parts.items()}}


class ModelWatch:
    """The model endpoint's last answer, as the runs' own calls saw it."""

    def __init__(self) -> None:
        self.last: Part | None = None

    def watch(self, model: ChatModel) -> ChatModel:
        return WatchedModel(model, self.answered, self.failed)

    def answered(self) -> None:
        self.last = Part(True, f"answered at {_now()}", required=False)

    def failed(self, error: ModelError) -> None:
        self.last = Part(False, f"failed at {_now()}: {error}", required=False)

    def part(self) -> Part:
        return self.last or Part(True, "not called yet", required=False)


class Health:
    """What ``/readyz`` reports. ``expect`` names the chat adapters that must connect; each one, once
    connected, registers how to tell whether it still is (``connection``)."""

    def __init__(self, store: Store, sandbox: SandboxConfig | None, model: ModelWatch | None = None,
                 carrier: str = "") -> None:
        self._store, self._sandbox = store, sandbox
        self.carrier = carrier  # the chat platform whose HTTP server answers the probes; "" for a server of their own
        self.model = model or ModelWatch()
        self._chat: dict[str, Connected | None] = {}
        self._docker: tuple[float, Part] | None = None

    def expect(self, *adapters: str) -> None:
        for name in adapters:
            self._chat.setdefault(name, None)

    def connection(self, adapter: str, connected: Connected) -> None:
        self._chat[adapter] = connected

    async def readiness(self) -> Readiness:
        store, docker, chat = await asyncio.gather(self._store_part(), self._docker_part(), self._chat_parts())
        parts = {"store": store, "docker": docker, **chat, "model": self.model.part()}
        return Readiness(all(p.ok for p in parts.values() if p.required), parts)

    async def _chat_parts(self) -> dict[str, Part]:
        parts = {}
        for name, connected in self._chat.items():
            if connected is None:
                parts[name] = Part(False, "not connected yet")
                continue
            try:
                answer = connected()
                ok = bool(await answer if inspect.isawaitable(answer) else answer)
            except Exception as error:  # a client in a state it cannot tell about is not usable now
                log.debug("%s connection check failed: %s", name, error)
                ok = False
            parts[name] = Part(ok, "connected" if ok else "disconnected")
        return parts

    async def _store_part(self) -> Part:
        try:
            await asyncio.wait_for(self._store.check_writable(PROBE_TIMEOUT_S), PROBE_TIMEOUT_S + 1)
        except TimeoutError:
            return Part(False, f"the database took no write within {PROBE_TIMEOUT_S:g}s")
        except Exception as error:
            return Part(False, f"the database takes no write: {error}")
        return Part(True, "writable")

    async def _docker_part(self) -> Part:
        if self._sandbox is None or not self._sandbox.enabled:
            return Part(True, "the sandbox is disabled", required=False)
        if self._docker and time.monotonic() - self._docker[0] < DOCKER_EVERY_S:
            return self._docker[1]
        part = await _ping_docker(self._sandbox)
        self._docker = (time.monotonic(), part)
        return part


async def _ping_docker(config: SandboxConfig) -> Part:
    from bot.sandbox.client import open_checked  # the docker library loads only when a probe asks

    try:
        client = await asyncio.wait_for(open_checked(config, PROBE_TIMEOUT_S), PROBE_TIMEOUT_S + 1)
    except TimeoutError:
        return Part(False, f"the Docker engine did not answer within {PROBE_TIMEOUT_S:g}s")
    except Exception as error:
        return Part(False, str(error))
    await asyncio.to_thread(client.close)
    return Part(True, "the engine answers")


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
