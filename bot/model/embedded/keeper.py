"""Keeping the embedded server answering for the whole process: a server that ends (killed, out of memory, a
crash) is started again on its port, so the runs after it, and the request that met it, go on.

``ServerKeeper`` watches the server's process and starts a new one on the same port as soon as it ends (the
model client's URL stays true, and its retries reach the new server); when another process took that port
meanwhile, on a free one, which ``KeptModel`` points the client at before its next request. It does so at most ``MAX_RESTARTS``
times in ``RESTART_WINDOW_S``: a server that keeps ending is left ended, with its log's last words said, and the
requests then fail with a sentence naming the embedded server rather than a URL the person never configured.
``KeptModel`` is the team's model on it: a reply the server's end cut short is asked again (``ReplyDropped``,
which the Manager retries and says), and a request that found no server says why.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections import deque
from collections.abc import AsyncGenerator, Sequence

from agents.errors import CodegenError, ModelError, ReplyDropped
from agents.types import Message, Usage
from bot.model.client import OpenAIChatModel
from bot.model.embedded.server import EmbeddedServer, crash_advice, loopback_ports

log = logging.getLogger(__name__)

WATCH_S = 0.5
MAX_RESTARTS = 3
RESTART_WINDOW_S = 600.0
END_GRACE_S = 1.0
END_POLL_S = 0.05


class ServerKeeper:
    def __init__(self, server: EmbeddedServer, max_restarts: int = MAX_RESTARTS) -> None:
        self.server = server
        self._max_restarts = max_restarts
        self.generation = 0  # how many times the server was started again
        self.given_up = ""  # why it is no longer started again
        self.crash_advice = ""  # what to do about its last end, when that was a crash of a build for another CPU
        self._restarts: deque[float] = deque()
        self._watch: asyncio.Task[None] | None = None
        self._restarting: asyncio.Lock = asyncio.Lock()

    def watch(self) -> None:
        self._watch = asyncio.ensure_future(self._watch_loop())

    async def stop(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
            await asyncio.gather(self._watch, return_exceptions=True)
        await self.server.stop()

    def ended(self) -> str:
        """How the server's process ended ('' while it runs): "killed by signal 9", "exit code 1"."""
        code = self.server.process.poll()
        if code is None:
            return ""
        return f"killed by signal {-code}" if code < 0 else f"exit code {code}"

    async def ended_within(self, seconds: float) -> str:
        """``ended``, waiting up to ``seconds`` for it: a killed server's connections close a moment before the
        kernel reports its end."""
        for _ in range(max(1, int(seconds / END_POLL_S))):  # polling: a child's end has no event to await
            if ended := self.ended():
                return ended
            await asyncio.sleep(END_POLL_S)
        return self.ended()

    async def answering(self) -> None:
        """Return once a server runs (starting one again if it ended); ``ModelError`` when none can."""
        if self.ended():
            await self._restart()
        if self.given_up:
            raise ModelError(self.given_up)

    async def _watch_loop(self) -> None:
        while True:  # polling: a child's end has no event the loop can wait on without a thread per child
            await asyncio.sleep(WATCH_S)
            if self.ended() and not self.given_up:
                await self._restart()

    async def _restart(self) -> None:
        async with self._restarting:
            ended = self.ended()
            if not ended or self.given_up:
                return
            old = self.server
            tail = old.log_tail()
            advice = self.crash_advice = crash_advice(old.process.returncode)
            now = time.monotonic()
            while self._restarts and now - self._restarts[0] > RESTART_WINDOW_S:
                self._restarts.popleft()
            if len(self._restarts) >= self._max_restarts:
                self.given_up = (f"The embedded model server ended ({ended}) {self._max_restarts + 1} times in "
                                 f"{RESTART_WINDOW_S / 60:.0f} minutes and is not started again: {tail or 'it said nothing'} "
                                 f"(its log: {old.log_path}).{advice} {'Or set' if advice else 'Restart the bot, or set'} "
                                 "OPENAI_BASE_URL to a model server.")
                log.error("%s", self.given_up)
                return
            self._restarts.append(now)
            log.warning("the embedded model server ended (%s): %s; starting it again.%s",
                        ended, tail or "it said nothing", advice)
            try:  # its own port first (the client's URL), else a free one: another process may have taken it
                self.server = await EmbeddedServer.start(old.model, old.settings, old.log_path,
                                                         ports=itertools.chain([old.port], loopback_ports()))
            except CodegenError as error:
                self.given_up = (f"The embedded model server ended ({ended}) and could not be started again: "
                                 f"{error}{'' if advice in str(error) else advice}")
                log.error("%s", self.given_up)
                return
            self.generation += 1


class KeptModel:
    """The team's model on the kept server (``agents.protocols.ChatModel``)."""

    def __init__(self, inner: OpenAIChatModel, keeper: ServerKeeper) -> None:
        self.inner, self.keeper = inner, keeper

    def model_name(self, role: str) -> str:
        return self.inner.model_name(role)

    async def stream(self, role: str, messages: Sequence[Message],
                     temperature: float | None = None) -> AsyncGenerator[str | Usage, None]:
        await self.keeper.answering()
        self.inner.move_to(self.keeper.server.base_url)  # where it runs now: a restart may have moved it
        generation, chars = self.keeper.generation, 0
        try:
            async for piece in self.inner.stream(role, messages, temperature):
                chars += len(piece) if isinstance(piece, str) else 0
                yield piece
        except ReplyDropped:
            raise
        except ModelError as error:
            ended = await self.keeper.ended_within(END_GRACE_S)
            if not ended and self.keeper.generation == generation:
                raise  # the server runs as it did: the request itself failed
            await self.keeper.answering()  # started again (or the sentence why not)
            raise ReplyDropped(f"The embedded model server ended during the {role}'s reply"
                               f"{f' ({ended})' if ended else ''} and was started again.{self.keeper.crash_advice}",
                               Usage(0, chars // 4, estimated=True)) from error

    async def close(self) -> None:
        await self.inner.close()
