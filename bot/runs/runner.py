"""Drives one run of the team and hands every event to its sinks (the store, an adapter's renderer).

Whatever happens, the sinks see exactly one ``RunFinished``: the Manager's own, or one written
here when the run is cancelled (stopped) or breaks in an unexpected way (error). One written here ends
with the best version the tests judged (the Manager's last ``BestVersion``), as the Manager's own
endings do, rather than with later files no test run saw or that did worse.

The store is not a sink like the others. A renderer failing (a chat API down) is logged and the run
goes on; the store failing (``StoreError``: a full disk, a damaged file) ends the run with status
error and the store's one-sentence reason, since a run whose record is lost must not look done.
The store comes first among the sinks, so no other sink sees an outcome the store could not keep. Every event passes
through the run's ``stamp`` first (``bot.runs.usage.RunUsage`` adds cost and totals), the ones written here too.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Protocol, TypeVar

from agents import candidates
from agents.events import (
    BestVersion,
    CheckedIn,
    Event,
    RunFinished,
    TestReported,
    TextDelta,
    TurnFinished,
    TurnStarted,
    WorkSaved,
)
from agents.manager import CHARS_PER_TOKEN
from agents.types import CheckInResult, RunStatus, TestReport, Usage
from bot.process.logs import tag_logs
from bot.store.errors import Silenced, StoreError

log = logging.getLogger(__name__)

EventSink = Callable[[Event], Awaitable[None]]
E = TypeVar("E", bound=Event)


class Stamp(Protocol):
    """Adds what the core knows to an event before any sink sees it; returns an event of the same kind."""

    def __call__(self, event: E) -> E: ...


def unchanged(event: E) -> E:
    return event

STOPPED_REASON = "stopped on request"
INTERNAL_ERROR_REASON = "an internal error ended the run; the details are in the bot's log"


async def drive(run_id: str, events: AsyncIterator[Event], sinks: Sequence[EventSink],
                stamp: Stamp = unchanged, stop_reason: Callable[[], str] = lambda: STOPPED_REASON) -> RunFinished:
    """Consume a run's events, fanning each out to ``sinks``; returns the final event as the sinks saw it.
    A cancelled run ends stopped, with ``stop_reason()`` as the reason (a Stop, or the bot shutting down)."""
    last: RunFinished | None = None
    kept = _Kept()
    try:
        async for raw in events:
            if isinstance(raw, RunFinished):  # a step that broke may have cut another's reply short
                for turn in kept.cut_off(stopped=raw.status is RunStatus.STOPPED):
                    await deliver(stamp(turn), sinks)
            event = stamp(raw)
            kept.see(event)
            if isinstance(event, TurnStarted):
                tag_logs(agent=event.agent)  # what is logged until the next turn is this agent's
            if isinstance(event, RunFinished):
                last = event  # the outcome is decided: a Stop pressed now must not overwrite it
                last = await asyncio.shield(finish(event, sinks))
            else:
                await deliver(event, sinks)
    except asyncio.CancelledError:
        if last is None:
            cut = [stamp(turn) for turn in kept.cut_off(stopped=True)]
            last = stamp(kept.best_of(stopped(run_id, stop_reason())))
            last = await asyncio.shield(_finish_after(cut, last, sinks))
        raise
    except StoreError as error:
        log.error("run %s ended: %s", run_id, error)
        for turn in kept.cut_off(stopped=False):
            stamp(turn)  # counted in the run's total; the store that failed is not asked to keep it
        last = stamp(kept.ending(RunFinished(run_id, status=RunStatus.ERROR, reason=str(error))))
        last = await finish(last, sinks)
    except Exception:
        log.exception("run %s failed unexpectedly", run_id)
        cut = [stamp(turn) for turn in kept.cut_off(stopped=False)]
        last = stamp(kept.best_of(RunFinished(run_id, status=RunStatus.ERROR, reason=INTERNAL_ERROR_REASON)))
        await _finish_after(cut, last, sinks)
    finally:
        await _close(events)
    if last is None:
        last = stamp(RunFinished(run_id, status=RunStatus.ERROR, reason=INTERNAL_ERROR_REASON))
        await deliver(last, sinks)
    return last


async def _finish_after(cut: Sequence[TurnFinished], last: RunFinished, sinks: Sequence[EventSink]) -> RunFinished:
    """The turns the run's end cut off, then its final event. A store that cannot keep a cut turn (full, or the run
    is another replica's now) leaves it to the final event, which meets the same store, to say how the run ends."""
    try:
        for turn in cut:
            await deliver(turn, sinks)
    except StoreError as error:
        log.warning("run %s: a reply cut short was not recorded: %s", last.run_id, error)
    return await finish(last, sinks)


@dataclasses.dataclass
class _OpenTurn:
    """A turn under way: what it asked and what of its reply has arrived."""

    started: TurnStarted
    began: float = dataclasses.field(default_factory=time.monotonic)
    parts: list[str] = dataclasses.field(default_factory=list)
    written: int = 0  # characters of the reply so far

    def cut_off(self) -> TurnFinished:
        """The turn as the run's end left it: the text so far, and what it cost, estimated from the prompt's size and
        that text (as the Manager counts a reply it stopped against the token budget)."""
        turn = self.started
        return TurnFinished(turn.run_id, agent=turn.agent, round=turn.round, text="".join(self.parts),
                            usage=Usage(turn.prompt_tokens, self.written // CHARS_PER_TOKEN, estimated=True),
                            duration_s=time.monotonic() - self.began, model=turn.model, cut_short=True)


@dataclasses.dataclass
class _Kept:
    """What a run has produced so far: a run whose store fails still hands its files, its last report and where
    it was checked in to the other sinks (the terminal writes them to ``--out``), though nothing records them.
    Where the tests judged a best version, that is what it hands over, with that version's report."""

    work: WorkSaved | None = None
    report: TestReport | None = None
    checkin: CheckInResult | None = None
    best: BestVersion | None = None
    open: dict[str, _OpenTurn] = dataclasses.field(default_factory=dict)  # agent -> its turn under way

    def see(self, event: Event) -> None:
        if isinstance(event, TurnStarted):
            self.open[event.agent] = _OpenTurn(event)
        elif isinstance(event, TextDelta) and event.agent in self.open:
            turn = self.open[event.agent]
            turn.parts.append(event.text)
            turn.written += len(event.text)
        elif isinstance(event, TurnFinished):
            self.open.pop(event.agent, None)
        elif isinstance(event, WorkSaved):
            self.work = event
        elif isinstance(event, TestReported):
            self.report = event.report
        elif isinstance(event, CheckedIn):
            self.checkin = event.result
        elif isinstance(event, BestVersion):
            self.best = event

    def cut_off(self, stopped: bool) -> list[TurnFinished]:
        """The turns under way, ended where they stand: a turn spent its prompt once the server was at work on it, so
        each counts when the run was stopped, or else once its reply had begun (a request to an endpoint that
        failed cost nothing)."""
        turns = [turn.cut_off() for turn in self.open.values() if stopped or turn.written]
        self.open.clear()
        return turns

    def ending(self, final: RunFinished) -> RunFinished:
        if self.best is None:
            final = dataclasses.replace(final, report=self.report)
        return dataclasses.replace(self.best_of(final), checkin=self.checkin)  # the best version's files and report

    def best_of(self, final: RunFinished) -> RunFinished:
        """``final`` ending with the best version, and saying so when the files stood otherwise; when the tests
        judged none yet, with the files the run saved last, so a run stopped before its first test run still hands
        what it wrote to the platform (the terminal's ``--out``), not only to the store."""
        best = self.best
        if best is None:
            if self.work is None:
                return final
            return dataclasses.replace(final, files=self.work.files, tests=self.work.tests,
                                       user_tests=self.work.user_tests)
        reason = final.reason
        if self.work is None or (self.work.files, self.work.tests) != (best.files, best.tests):
            reason = candidates.handed_back(reason, best.round, best.report)
        return dataclasses.replace(final, reason=reason, files=best.files, tests=best.tests,
                                   user_tests=best.user_tests, report=best.report)


def stopped(run_id: str, reason: str = STOPPED_REASON) -> RunFinished:
    return RunFinished(run_id, status=RunStatus.STOPPED, reason=reason)


async def deliver(event: Event, sinks: Sequence[EventSink]) -> None:
    """Every sink gets the event; one failing sink (a chat API down) never stops the run or the others.
    The store failing raises ``StoreError`` at once: the run must end (a final event goes to ``finish``)."""
    if isinstance(event, RunFinished):
        await finish(event, sinks)
        return
    for sink in sinks:
        try:
            await sink(event)
        except (asyncio.CancelledError, StoreError):
            raise
        except Exception:
            log.exception("event sink %r failed on %s", sink, type(event).__name__)


async def finish(event: RunFinished, sinks: Sequence[EventSink]) -> RunFinished:
    """Every sink gets the final event, whatever fails. When the store cannot keep it, the outcome the
    later sinks see (and the one returned) is that error: a pass nobody could record is not reported. When the
    store refuses it because another replica owns the run now (``Fenced``), no later sink sees it at all: the
    run's thread is that replica's to finish (``Silenced``: the same when a durable job goes back to the queue)."""
    for sink in sinks:
        try:
            await sink(event)
        except asyncio.CancelledError:
            raise
        except Silenced as error:
            log.warning("%s", error)
            return dataclasses.replace(event, status=RunStatus.ERROR, reason=str(error))
        except StoreError as error:
            log.error("run %s: %s", event.run_id, error)
            event = dataclasses.replace(event, status=RunStatus.ERROR, reason=str(error))
        except Exception:
            log.exception("event sink %r failed on %s", sink, type(event).__name__)
    return event


async def _close(events: AsyncIterator[Event]) -> None:
    close = getattr(events, "aclose", None)
    if close is not None:
        await close()
