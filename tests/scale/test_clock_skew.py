"""Replicas whose clocks disagree share one queue: every time the queue compares is the database's own clock, so a
replica whose clock is off takes nothing early (a job whose status message is still being drawn, an event another
replica is still handling)."""

from __future__ import annotations

import time
import types

from bot.store import postgres_queue
from bot.store.postgres_queue import UNPOSTED_GRACE_S, Limits

WIDE = Limits(max_running=100, max_per_user=100)
SKEW_S = 4 * UNPOSTED_GRACE_S  # a host whose clock was never set, or drifted for weeks


def clock_off_by(monkeypatch, seconds):
    """This process's wall clock, as the queue reads it, ``seconds`` off the database's."""
    monkeypatch.setattr(postgres_queue, "time", types.SimpleNamespace(time=lambda: time.time() + seconds),
                        raising=False)


async def test_a_job_from_a_replica_whose_clock_is_behind_waits_for_its_status_message(replicas, monkeypatch):
    receiver, other = replicas
    conversation = await receiver.conversation("slack", "C1:1.1")
    clock_off_by(monkeypatch, -SKEW_S)
    await receiver.queue.enqueue("r1", conversation, "task", "ann", [], "", '{"text": "t"}', source="slack:E1")
    monkeypatch.undo()
    # the receiver is still drawing its status message: claimed now, the thread would get a second one
    assert await other.queue.claim(WIDE, ["slack"], 5) == []
    await receiver.queue.publish("r1", "ts-r1")
    [claimed] = await other.queue.claim(WIDE, ["slack"], 5)
    assert (claimed.run_id, claimed.status_message) == ("r1", "ts-r1")


async def test_a_replica_whose_clock_is_ahead_leaves_anothers_fresh_event_alone(replicas, monkeypatch):
    receiver, other = replicas
    await receiver.queue.received("slack:E1", "slack", '{"event": 1}')  # being handled by the receiver now
    clock_off_by(monkeypatch, SKEW_S)
    assert await other.queue.unhandled("slack", older_than_s=UNPOSTED_GRACE_S) == []
