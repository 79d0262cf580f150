"""A replica's worker on the durable job queue (``bot.store.postgres_queue``): claims the jobs the shared limits let
start, runs each here (``execute``, the service's), heartbeats them, and acts on what the beat says: a run
claimed by another replica since (this one was taken for dead) is dropped without a further write or chat edit,
and a Stop pressed on any replica stops the run here. It also puts back in the queue the jobs of replicas that
stopped heartbeating, so their runs are taken over (by whichever worker claims them next).

It wakes on the queue's ``NOTIFY`` (a job waiting, a Stop asked for) and at least every heartbeat, so a
notification lost while the database restarts costs at most one heartbeat.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

from agents.types import PriorWork
from bot.chat.progress import Progress
from bot.chat.thread import ChatThread
from bot.store.errors import StoreError
from bot.store.postgres_queue import Beat, Claimed, Limits, Queued

log = logging.getLogger(__name__)


class JobQueue(Protocol):
    owner: str

    async def claim(self, limits: Limits, platforms: Sequence[str], wanted: int) -> list[Claimed]: ...

    async def beat(self) -> Beat: ...

    async def requeue_lost(self, lost_after_s: float) -> list[str]: ...

    def let_go(self, run_id: str) -> None: ...


class DurableQueue(JobQueue, Protocol):
    """The whole queue as the service uses it: the receiving side, the Stop, the takeover's saved work."""

    async def enqueue(self, run_id: str, conversation_id: int, task: str, user_id: str, attachments: list[str],
                      thread: str, job: str, source: str = "") -> Queued: ...

    async def publish(self, run_id: str, status_message: str) -> None: ...

    async def request_stop(self, run_id: str, reason: str) -> str | None: ...

    async def starter(self, run_id: str) -> str | None: ...

    async def resume_work(self, conversation_id: int, run_id: str) -> PriorWork | None: ...

    async def release(self, run_ids: Sequence[str], handed_over: bool = False) -> None: ...

    async def drawn(self, run_id: str) -> None: ...

    async def received(self, key: str, platform: str, payload: str) -> None: ...

    async def handled(self, key: str) -> None: ...

    async def unhandled(self, platform: str, older_than_s: float, limit: int = 20) -> list[tuple[str, str]]: ...


@dataclass(frozen=True)
class WorkerSettings:
    limits: Limits
    capacity: int  # jobs this replica runs at once, at most
    heartbeat_s: float
    lost_after_s: float  # an owner silent this long is taken for dead


Execute = Callable[[Claimed], Coroutine[Any, Any, None]]
Drop = Callable[[str, str], None]  # (run, why): stop it here; "" when it was lost (no final word from here)


class Worker:
    def __init__(self, queue: JobQueue, settings: WorkerSettings, execute: Execute, drop: Drop) -> None:
        self._queue, self._settings = queue, settings
        self._execute, self._drop = execute, drop
        self.platforms: list[str] = []  # the platforms this replica can draw in (it claims only their jobs)
        self._running: dict[str, asyncio.Task[None]] = {}
        self._wake = asyncio.Event()
        self._closing = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def serve(self, platform: str | None) -> None:
        """Claim ``platform``'s jobs from now on (its adapter is connected); None: claim none, but beat and hear
        Stops for this replica's own runs (the web chat's)."""
        if platform is not None and platform not in self.platforms:
            self.platforms.append(platform)
        if self._task is None:
            self._task = asyncio.create_task(self._work(), name="job worker")
        self.wake()

    def wake(self, *_: object) -> None:
        """Look at the queue now (a notification came)."""
        self._wake.set()

    @property
    def heartbeat_s(self) -> float:
        return self._settings.heartbeat_s

    @property
    def running(self) -> list[str]:
        return list(self._running)

    async def close(self) -> None:
        """Claim nothing more (the runs under way are the service's to hand back or stop)."""
        self._closing.set()
        self._wake.set()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _work(self) -> None:
        beat_due = 0.0
        loop = asyncio.get_running_loop()
        while not self._closing.is_set():
            self._wake.clear()
            try:
                if loop.time() >= beat_due:
                    beat_due = loop.time() + self._settings.heartbeat_s
                    await self._beat()
                await self._claim()
            except StoreError as error:  # the database restarting, say: the next round tries again
                log.warning("the job worker could not reach the queue: %s", error)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), max(0.01, beat_due - loop.time()))

    async def _beat(self) -> None:
        beat = await self._queue.beat()
        for run_id in beat.lost:
            if run_id in self._running:
                log.warning("run %s was taken over by another replica; dropping it here", run_id)
                self._drop(run_id, "")
            self._queue.let_go(run_id)
        for run_id, why in beat.stops:
            self._drop(run_id, why)
        requeued = await self._queue.requeue_lost(self._settings.lost_after_s)
        if requeued:
            log.warning("%d run(s) of a replica that stopped heartbeating put back in the queue: %s",
                        len(requeued), ", ".join(requeued))

    async def _claim(self) -> None:
        if self._closing.is_set():
            return
        free = self._settings.capacity - len(self._running)
        for claimed in await self._queue.claim(self._settings.limits, self.platforms, free):
            task = asyncio.create_task(self._execute(claimed), name=f"job-{claimed.run_id}")
            self._running[claimed.run_id] = task
            task.add_done_callback(partial(self._ended, claimed.run_id))

    def _ended(self, run_id: str, task: asyncio.Task[None]) -> None:
        # A run handed back (the database away) may be claimed here again while its first task still hands it back:
        # that task ending lets go of nothing of the new claim.
        if self._running.get(run_id) is task:
            del self._running[run_id]
            self._queue.let_go(run_id)
        self.wake()  # a slot is free


class FencedThread:
    """A chat thread a run writes in only while this replica still owns the run: once it is lost, nothing more
    from here reaches the thread (the replica that took it over edits the same messages)."""

    def __init__(self, thread: ChatThread, lost: Callable[[], bool]) -> None:
        self._thread, self._lost = thread, lost

    async def post(self, text: str, stop: str = "", progress: Progress | None = None) -> str:
        if self._lost():
            return ""
        return await self._thread.post(text, stop, progress)

    async def edit(self, message_id: str, text: str, stop: str = "", progress: Progress | None = None) -> None:
        if not self._lost():
            await self._thread.edit(message_id, text, stop, progress)

    async def upload(self, files: Mapping[str, str], comment: str) -> str:
        if self._lost():
            return ""
        return await self._thread.upload(files, comment)

    async def working(self, text: str) -> None:
        if not self._lost():
            await self._thread.working(text)

    def __getattr__(self, name: str) -> object:  # a platform's extras (Slack's ephemeral replies, say)
        return getattr(self._thread, name)
