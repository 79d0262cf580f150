"""CPU per streamed piece as a reply grows: a short reply against a long one, a token (4 characters) per piece.

    python -m benchmarks.delta_bench

Whatever a run does at each streamed piece must not grow with the text streamed before it, or a long reply from a
server that streams a token at a time (llama.cpp's does) holds the event loop for seconds. Two paths are timed, each
with a reply of 4,000 and of 100,000 characters:
1. the team's: one run through the Service, the Manager, the SQLite store and the chat renderer (a thread that keeps
   what it is sent, at Slack's edit pace), the Programmer's reply the long one (the other turns are short);
2. the terminal's: the renderer of ``codegen-chat run`` fed the same pieces, once as lines of 80 characters and once
   as one line without an end.
Prints the CPU per piece for each size and their ratio (work that does not grow: about 1x); asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from adapters.terminal.render import Renderer
from agents.events import TextDelta
from agents.types import RunStatus
from bot.config.sections import BudgetConfig, Config, LimitsConfig, StorageConfig
from bot.runs.service import ChatRequest, Service
from bot.store.sqlite import SQLiteStore
from tests.fakes import team_script as s
from tests.fakes.chat_thread import RecordingThread, platform
from tests.fakes.team_script import TEAM_DEFAULTS, ScriptedModel, ScriptedSandbox

PIECE = 4
SIZES = (4_000, 100_000)


def long_reply(chars: int) -> str:
    """The script's Programmer reply, its module padded with comment lines to about ``chars`` characters."""
    line = "# " + "x" * 77 + "\n"
    padding = line * max(0, (chars - len(s.CODE)) // len(line))
    return s.CODE.replace("def find_intf(obj):", padding + "def find_intf(obj):", 1)


async def team_run(chars: int) -> tuple[float, int]:
    """One run whose Programmer streams a reply of about ``chars`` characters: CPU seconds and pieces streamed."""
    with tempfile.TemporaryDirectory() as tmp:
        config = Config(storage=StorageConfig(path=str(Path(tmp) / "bench.sqlite3")),
                        limits=LimitsConfig(max_concurrent_runs=1, max_runs_per_user=1),
                        budget=BudgetConfig(max_tokens=10_000_000))
        store = await SQLiteStore.open(config.db_path())
        model = ScriptedModel({"programmer": [long_reply(chars)]}, chunk=PIECE, fallback=TEAM_DEFAULTS)
        service = Service(config, store, model, ScriptedSandbox())
        started = time.process_time()
        slack_pace = platform(update_interval_s=1.0)
        handle = await service._start(ChatRequest("bench", "t", "u", "find intf keys"), RecordingThread(), slack_pace)
        finished = await handle.wait()
        spent = time.process_time() - started
        assert finished.status is RunStatus.PASSED, finished.reason
        drawn = service._drawn.get(finished.run_id)
        if drawn is not None:
            await drawn[1].done()
        await store.close()
    return spent, model.chunks_sent


def terminal(chars: int, line: int) -> tuple[float, int]:
    """The terminal renderer fed ``chars`` characters in pieces, lines of ``line`` characters (0: one line)."""
    unit = ("y" * (line - 1) + "\n") if line else "y" * 80
    text = (unit * (chars // len(unit) + 1))[:chars]
    renderer = Renderer(io.StringIO(), color=False)
    events = [TextDelta("r", agent="programmer", text=text[i:i + PIECE]) for i in range(0, len(text), PIECE)]

    async def feed() -> None:
        for event in events:
            await renderer(event)

    started = time.process_time()
    asyncio.run(feed())
    return time.process_time() - started, len(events)


def main() -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    asyncio.run(team_run(SIZES[0]))  # warm: imports, templates
    print(f"CPU per streamed piece ({PIECE} characters), a reply of {SIZES[0]:,} against one of {SIZES[1]:,} characters")
    print(f"  {'path':<44}{SIZES[0]:>12,}{SIZES[1]:>12,}{'ratio':>9}")
    rows = [("a run (Service, Manager, store, chat renderer)", lambda n: asyncio.run(team_run(n))),
            ("terminal renderer, lines of 80 characters", lambda n: terminal(n, 80)),
            ("terminal renderer, one line without an end", lambda n: terminal(n, 0))]
    for label, measure in rows:
        per_piece = []
        for size in SIZES:
            cpu, pieces = measure(size)
            per_piece.append(cpu / pieces * 1e6)
        print(f"  {label:<44}{per_piece[0]:>10.1f}µs{per_piece[1]:>10.1f}µs{per_piece[1] / per_piece[0]:>8.2f}x")
    print("  (the run's figure at 4,000 holds its other turns' own work too: per piece it is the larger)")


if __name__ == "__main__":
    main()
