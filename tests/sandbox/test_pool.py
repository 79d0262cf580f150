"""The pool's bookkeeping, with stand-ins for starting and removing containers (the real ones: test_lifecycle)."""

import asyncio
import itertools

import pytest

from bot.sandbox.pool import WarmPool


class Engine:
    def __init__(self):
        self.may_start = asyncio.Event()
        self.may_start.set()
        self.started, self.removed = [], []
        self.gone = asyncio.Event()
        self._ids = itertools.count(1)

    async def start(self, language):
        await self.may_start.wait()
        container = f"{language}-{next(self._ids)}"
        self.started.append(container)
        return container

    async def remove(self, container):
        self.removed.append(container)
        self.gone.set()


async def test_a_prepared_container_no_run_claims_is_removed():
    engine = Engine()
    pool = WarmPool(0, engine.start, engine.remove, prepared_for_s=0.01)
    pool.prepare("python")
    await engine.gone.wait()
    assert engine.removed == engine.started == ["python-1"] and pool.ready("python") == 0


async def test_a_warm_pools_own_containers_are_kept():
    engine = Engine()
    pool = WarmPool(1, engine.start, engine.remove, prepared_for_s=0.01)
    pool.fill("python")
    while not pool.ready("python"):
        await asyncio.sleep(0)
    await asyncio.sleep(0.05)  # past prepared_for_s: a warm container is no prepared one, it stays
    assert pool.ready("python") == 1 and engine.removed == []
    await pool.close()
    assert engine.removed == ["python-1"]


async def test_a_run_claims_the_container_prepared_for_it_while_it_still_starts():
    engine = Engine()
    engine.may_start.clear()
    pool = WarmPool(0, engine.start, engine.remove)
    pool.prepare("python")
    claiming = asyncio.ensure_future(pool.claim("python"))
    await asyncio.sleep(0)
    engine.may_start.set()
    assert await claiming == "python-1" and engine.started == ["python-1"]


async def test_a_run_stopped_while_waiting_for_its_container_leaves_none_behind():
    engine = Engine()
    engine.may_start.clear()
    pool = WarmPool(0, engine.start, engine.remove)
    pool.prepare("python")
    claiming = asyncio.ensure_future(pool.claim("python"))
    await asyncio.sleep(0)
    claiming.cancel()
    await asyncio.sleep(0)
    engine.may_start.set()
    with pytest.raises(asyncio.CancelledError):
        await claiming
    assert engine.removed == engine.started == ["python-1"]  # gone before the stop completed
    assert pool.ready("python") == 0
