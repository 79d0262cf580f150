"""``codegen-chat run``: a task from the command line run by the service, its events drawn by
``adapters.terminal.render``, its files saved to a folder, its ending as the exit status."""

from __future__ import annotations

import asyncio
import getpass
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, TextIO

from adapters.terminal import exit_codes
from adapters.terminal.json_lines import JsonLines
from adapters.terminal.render import Renderer
from agents.errors import CheckInError, UserInputError
from agents.events import RunFinished
from agents.protocols import Publisher
from agents.types import Attachment, Publication
from bot.chat.words import ended_by_the_bot
from bot.checkin.folder import folder_problem
from bot.checkin.masking import MaskingPublisher
from bot.runs.attachments import to_attachment
from bot.runs.runner import stopped
from bot.runs.service import ChatRequest, RunHandle, Service, new_run_id
from bot.safety.local_files import read_regular_file
from bot.safety.redact import Redactor

PLATFORM = "terminal"


async def read_attachments(paths: list[str], max_bytes: int) -> tuple[Attachment, ...]:
    """The ``--file`` arguments as attachments; anything but a readable regular text file within
    ``max_bytes`` is refused. Files are read in a worker thread, so a slow disk stalls no other run."""
    attachments = []
    for name in paths:
        data = await asyncio.to_thread(read_regular_file, name, max_bytes)
        attachments.append(to_attachment(Path(name).name, data, max_bytes))
    return tuple(attachments)


STDIN_TASK = "-"  # `run -`: the task is what is piped in, as many commands read a file named "-"


def read_task(stream: BinaryIO | None, max_chars: int) -> str:
    """The task piped to ``run -``: UTF-8 text, read only so far as a task within ``max_chars`` can reach (the
    length and emptiness rules are the service's, as for a task on the command line). ``None``: stdin is closed."""
    if stream is None or stream.isatty():
        raise UserInputError('run - reads the task from standard input, and nothing is piped in: '
                             'codegen-chat run - < task.md, or give the task in quotes.')
    data = stream.read(max_chars * 4 + 1)  # UTF-8 takes at most four bytes a character
    if len(data) > max_chars * 4:
        raise UserInputError(f"The task on standard input is longer than the limit of {max_chars:,} characters; "
                             "shorten it or attach the long part as a file (--file).")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UserInputError(f"The task on standard input is not UTF-8 text (byte {data[error.start]:#04x} at offset "
                             f"{error.start}); save it as UTF-8.") from None


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
    json_lines: bool = False  # --json: events and the result as JSON lines instead of lines for a person
    repo: str = ""  # --repo OWNER/NAME|URL|PATH
    base: str = ""  # --base BRANCH


async def run_in_terminal(service: Service, request: TerminalRun, folder_publisher: Callable[[Path], Publisher],
                          max_attachment_bytes: int, thread_key: str, out: TextIO | None = None,
                          redact: Redactor | None = None) -> int:
    """Run the team on a task; returns the exit status (``adapters.terminal.exit_codes``). ``out``: standard
    output as it is when the run starts, unless given."""
    out = sys.stdout if out is None else out
    attachments = await read_attachments(request.files, max_attachment_bytes)
    run_id = new_run_id()
    out_dir = Path(request.out_dir or f"codegen-{run_id}")
    await asyncio.to_thread(check_out_dir, out_dir)
    sink: Renderer | JsonLines
    if request.json_lines:
        sink = JsonLines(out, redact)
    else:
        sink = Renderer(out, color=out.isatty() and "NO_COLOR" not in os.environ, redact=redact)
    fallback: Publisher = folder_publisher(out_dir)
    chat = ChatRequest(PLATFORM, thread_key, getpass.getuser(), request.task, attachments, repo=request.repo,
                       base=request.base, places=(PLATFORM,))
    handle = await service.submit(chat, sink, fallback, run_id=run_id)
    if not request.json_lines:
        out.write(f"Run {run_id} started. Ctrl-C stops it.\n")
    interrupted = False
    try:
        finished = await handle.wait()
    except asyncio.CancelledError:  # stopped by Ctrl-C or SIGTERM/SIGHUP: the sink saw how it ended
        interrupted = True
        handle.cancel()
        finished = sink.finished or await _settle(handle)
    saved = ""
    here = saved_here(finished)
    if here:
        saved = await _save(MaskingPublisher(fallback, redact or Redactor(())), finished, request.task)
    status = exit_status(finished, interrupted)
    if isinstance(sink, JsonLines):
        sink.result(finished, status, out_dir, saved)
    else:
        out.write(sink.summary(finished, out_dir if here else None, saved) + "\n")
    return status


def saved_here(finished: RunFinished) -> bool:
    """Whether the run's files go to the output folder now: whatever it wrote, code or only tests, unless its
    check-in already wrote them there."""
    return bool(finished.files or finished.tests) and not (finished.checkin and finished.checkin.kind == "folder")


def exit_status(finished: RunFinished, interrupted: bool) -> int:
    """0 for a pass, or for a run the machine shut down (SIGTERM, SIGHUP); 130 (the shell's code for Ctrl-C) only
    for Ctrl-C; otherwise what ended it: failing tests, a part that failed, or a limit
    (``adapters.terminal.exit_codes``). The ``--json`` result says the same code the process ends with."""
    return exit_codes.of_run(finished.status, interrupted, shut_down=ended_by_the_bot(finished))


async def _settle(handle: RunHandle) -> RunFinished:
    try:
        return await handle.task
    except asyncio.CancelledError:
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
