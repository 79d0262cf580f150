"""What the web chat reads back from the store, and a stored conversation drawn again.

A conversation whose runs were drawn by an earlier process (or dropped from memory since) is drawn anew
from the store: each run's task as the person's message, then the run's stored events through the same run
renderer that draws live runs, so a reopened conversation looks as it did. A run whose files were attached to
the thread (no Gist) has them attached again, as the Check-In published them.
"""

from __future__ import annotations

from typing import Protocol

from agents.events import Event, ReadmeWritten, RunFinished, TurnFinished
from agents.language import BUILT_IN, Languages
from agents.types import Publication, RunStatus
from bot.chat.renderer import Redact, RunRenderer
from bot.chat.thread import ChatPlatform, ChatThread
from bot.store.protocol import History
from bot.store.records import RunSummary, conversation_key

ELSEWHERE_REASON = "it was under way in another process of the bot when this page was drawn"


class Thread(ChatThread, Protocol):
    """A ``ChatThread`` that also shows the person's own messages."""

    def say(self, text: str, attachments: tuple[str, ...] = ()) -> str: ...


async def draw_again(thread: Thread, history: History, runs: list[RunSummary], platform: ChatPlatform,
                     redact: Redact, languages: Languages = BUILT_IN) -> None:
    """Draw stored ``runs`` into ``thread``, each as its live renderer drew it."""
    for run in runs:
        thread.say(redact(run.task), tuple(redact(name) for name in run.attachments))
        renderer = RunRenderer(thread, platform, redact, languages)
        await renderer.open(run.id)
        events = await history.timeline(run.id)
        if not any(isinstance(event, RunFinished) for event in events):
            # Marked interrupted at a start after the process running it died; else still running elsewhere.
            reason = run.reason if run.status == RunStatus.INTERRUPTED and run.reason else ELSEWHERE_REASON
            events.append(RunFinished(run.id, status=RunStatus.INTERRUPTED, reason=reason))
        for event in events:
            if isinstance(event, RunFinished) and event.checkin and event.checkin.kind == "attachments":
                await _attach_again(renderer, run, event, events)
            await renderer(event)
        await renderer.done()


async def _attach_again(renderer: RunRenderer, run: RunSummary, finished: RunFinished, events: list[Event]) -> None:
    """The files the run's fallback publisher attached, with the README its Check-In wrote."""
    readme = next((e.meaning.readme for e in reversed(events) if isinstance(e, TurnFinished)
                   and isinstance(e.meaning, ReadmeWritten)), "")
    await renderer.publish(Publication(
        run_id=run.id, conversation_key=conversation_key(run.platform, run.thread_key), task=run.task,
        status=finished.status, files=finished.files.merged(finished.tests), readme=readme, report=finished.report,
    ))
