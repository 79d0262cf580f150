"""The terminal: a task on the command line, each agent's turn streamed to stdout, files to a folder."""

from __future__ import annotations

import asyncio
import getpass
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from agents.errors import CheckInError, UserInputError
from agents.events import (
    CheckedIn,
    Event,
    Notice,
    RunFinished,
    TestReported,
    TextDelta,
    TurnFinished,
    TurnStarted,
    Waiting,
)
from agents.protocols import Publisher
from agents.types import Attachment, Publication, RunStatus
from bot.attachments import to_attachment
from bot.chat.words import agent_title, ended_by_the_bot
from bot.checkin.folder import folder_problem
from bot.checkin.masking import MaskingPublisher
from bot.inert import inert
from bot.local_files import read_regular_file
from bot.redact import Redactor
from bot.service import ChatRequest, RunHandle, Service, new_run_id

PLATFORM = "terminal"


@dataclass(frozen=True)
class Styled:
    """Text shown in one of our colours (an SGR code such as "1" bold, "31" red)."""

    code: str
    text: str


Part = str | Styled


class Renderer:
    """Writes a run's events as a person reads them: a header per turn, the text as it streams.
    Text goes out a whole line at a time, so a secret split across two deltas is still masked.
    Everything from outside passes ``_safe`` (secrets masked, control sequences made inert); only
    the colours added here reach the terminal as escape sequences."""

    def __init__(self, out: TextIO, color: bool, redact: Redactor | None = None) -> None:
        self._out, self._color = out, color
        self._redact = redact or Redactor(())
        self._pending = ""  # streamed text not yet ended by a newline
        self.finished: RunFinished | None = None

    async def __call__(self, event: Event) -> None:
        if isinstance(event, TurnStarted):
            self._line("\n", Styled("1", f"── {agent_title(event.agent)}"), " ", Styled("2", f"(round {event.round})"))
        elif isinstance(event, TextDelta):
            lines, _, self._pending = (self._pending + event.text).rpartition("\n")
            if lines or _:
                self._out.write(self._safe(lines + "\n"))
        elif isinstance(event, TurnFinished):
            if self._pending:
                self._out.write(self._safe(self._pending) + "\n")
                self._pending = ""
            self._turn_footer(event)
        elif isinstance(event, TestReported):
            self._report(event)
        elif isinstance(event, CheckedIn):
            note = f" ({event.result.note})" if event.result.note else ""
            self._line("\n", Styled("1", "Checked in:"), f" {event.result.location}{note}")
        elif isinstance(event, Notice):
            self._line(Styled("33", f"! {event.text}"))
        elif isinstance(event, Waiting):
            self._line(Styled("2", f"   … waiting for the model ({event.seconds:.0f} s)"))
        elif isinstance(event, RunFinished):
            self.finished = event
        self._out.flush()

    def _turn_footer(self, event: TurnFinished) -> None:
        if event.files:
            listed = ", ".join(f"{p} ({c.count(chr(10))} lines)" for p, c in event.files.items())
            self._line(Styled("36", f"   files: {listed}"))
        self._line(Styled("2", f"   [{event.usage.tokens_text()} tokens, {event.duration_s:.1f}s]"))

    def _report(self, event: TestReported) -> None:
        report = event.report
        color = "32" if report.ok else "31"
        self._line("\n", Styled(color, f"Tests ({event.language}): {report.summary()}"), f" in {report.duration_s:.1f}s")
        if not report.ok:
            self._line(Styled("2", _indent(report.output(2000))))

    def summary(self, event: RunFinished, out_dir: Path | None, saved: str = "") -> str:
        """The last lines of a run; ``saved`` says what saving the files to ``out_dir`` could not do."""
        color = {RunStatus.PASSED: "32", RunStatus.FAILED: "31", RunStatus.ERROR: "31"}.get(event.status, "33")
        lines = [self._text("\n", Styled(color, f"Run {event.run_id}: {event.status.upper()}"), f" — {event.reason}")]
        if event.report and not event.report.ok and event.status is not RunStatus.PASSED:
            lines.append(self._text("Failing output:\n" + _indent(event.report.output(2000))))
        cost = f" (about ${event.usage.cost_usd:.4f})" if event.usage.cost_usd else ""
        lines.append(self._text(f"Tokens: {event.usage.tokens_text()}{cost}"))
        if event.checkin:
            note = f" ({event.checkin.note})" if event.checkin.note else ""
            lines.append(self._text(f"Checked in: {event.checkin.location}{note}"))
        if out_dir and (event.files or event.tests) and not (event.checkin and event.checkin.kind == "folder"):
            lines.append(self._text(f"Files: {out_dir}" + (f" ({saved})" if saved else "")))
        if ended_by_the_bot(event):
            lines.append(self._text(f'Continue it from where it stopped: codegen-chat run --continue {event.run_id} "carry on"'))
        return "\n".join(lines)

    def _line(self, *parts: Part) -> None:
        self._out.write(self._text(*parts) + "\n")

    def _text(self, *parts: Part) -> str:
        return "".join(self._styled(p) if isinstance(p, Styled) else self._safe(p) for p in parts)

    def _styled(self, part: Styled) -> str:
        text = self._safe(part.text)
        return f"\x1b[{part.code}m{text}\x1b[0m" if self._color else text

    def _safe(self, text: str) -> str:
        return inert(self._redact(text))


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


async def read_attachments(paths: list[str], max_bytes: int) -> tuple[Attachment, ...]:
    """The ``--file`` arguments as attachments; anything but a readable regular text file within
    ``max_bytes`` is refused. Files are read in a worker thread, so a slow disk stalls no other run."""
    attachments = []
    for name in paths:
        data = await asyncio.to_thread(read_regular_file, name, max_bytes)
        attachments.append(to_attachment(Path(name).name, data, max_bytes))
    return tuple(attachments)


def check_out_dir(path: Path) -> None:
    """Refuse, before any model is called, an ``--out`` that could never hold the files."""
    problem = folder_problem(path)
    if problem:
        raise UserInputError(f"--out {path}: {problem}; name another folder (it is made if missing).")


@dataclass(frozen=True)
class TerminalRun:
    task: str
    files: list[str]
    out_dir: str | None
    continue_run: str | None


async def run_in_terminal(service: Service, request: TerminalRun, folder_publisher: Callable[[Path], Publisher],
                          max_attachment_bytes: int, thread_key: str, out: TextIO = sys.stdout,
                          redact: Redactor | None = None) -> int:
    """Run the team on a task; returns the exit status (0 only when the tests passed)."""
    attachments = await read_attachments(request.files, max_attachment_bytes)
    run_id = new_run_id()
    out_dir = Path(request.out_dir or f"codegen-{run_id}")
    await asyncio.to_thread(check_out_dir, out_dir)
    renderer = Renderer(out, color=out.isatty() and "NO_COLOR" not in os.environ, redact=redact)
    fallback: Publisher = folder_publisher(out_dir)
    chat = ChatRequest(PLATFORM, thread_key, getpass.getuser(), request.task, attachments)
    handle = await service.submit(chat, renderer, fallback, run_id=run_id)
    out.write(f"Run {run_id} started. Ctrl-C stops it.\n")
    interrupted = False
    try:
        finished = await handle.wait()
    except asyncio.CancelledError:  # stopped by Ctrl-C or SIGTERM/SIGHUP: the renderer saw how it ended
        interrupted = True
        handle.cancel()
        finished = renderer.finished or await _settle(handle)
    saved = ""
    if finished.files and not (finished.checkin and finished.checkin.kind == "folder"):
        saved = await _save(MaskingPublisher(fallback, redact or Redactor(())), finished, request.task)
    out.write(renderer.summary(finished, out_dir, saved) + "\n")
    return exit_status(finished, interrupted)


def exit_status(finished: RunFinished, interrupted: bool) -> int:
    """0 only for a pass; 130 (the shell's code for Ctrl-C) only for Ctrl-C; 1 for every other ending,
    a run its budget stopped included."""
    if finished.status is RunStatus.PASSED:
        return 0
    return 130 if interrupted else 1


async def _settle(handle: RunHandle) -> RunFinished:
    try:
        return await handle.task
    except asyncio.CancelledError:
        from bot.runner import stopped

        return stopped(handle.run_id)


async def _save(publisher: Publisher, finished: RunFinished, task: str) -> str:
    """The final files land in the output folder even when they were checked in elsewhere. Returns what
    the summary should add: the files that could not be written and why, or why none could be."""
    try:
        result = await publisher.publish(Publication(
            run_id=finished.run_id, conversation_key="", task=task, status=finished.status,
            files=finished.files.merged(finished.tests), readme="", report=finished.report,
        ))
    except CheckInError as error:
        return str(error)
    return result.note
