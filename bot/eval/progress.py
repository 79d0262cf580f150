"""What a person watches while an eval runs: how far it is, and the pass rate of each mode so far.

On a terminal it is one line redrawn in place (a bar, attempts done of all, each mode's running pass@1,
the time spent); elsewhere (a log, CI) one line per finished attempt, so nothing is redrawn in a file.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TextIO

from bot.eval.results import Result
from bot.safety.inert import inert

BAR_WIDTH = 24


class Progress:
    def __init__(self, out: TextIO, modes: Sequence[str], total: int, earlier: Sequence[Result], live: bool,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._out, self._modes, self._total, self._live, self._clock = out, list(modes), total, live, clock
        self._started = clock()
        self._tally = {mode: [0, 0] for mode in self._modes}  # mode -> [passed, finished]
        for result in earlier:
            self._count(result)
        self._done = len(earlier)
        if self._live:
            self._draw()

    def finished(self, result: Result) -> None:
        self._count(result)
        self._done += 1
        if self._live:
            self._draw()
        else:
            verdict = "passed" if result.passed else f"failed ({result.score})"
            self._out.write(f"{self._done}/{self._total}  {inert(result.problem)} {result.mode}: {verdict}  "
                            f"[{self._rates()}]\n")
            self._out.flush()

    def close(self) -> None:
        if self._live:
            self._out.write("\n")
            self._out.flush()

    def _count(self, result: Result) -> None:
        tally = self._tally.get(result.mode)
        if tally is not None:
            tally[0] += result.passed
            tally[1] += 1

    def _rates(self) -> str:
        shown = []
        for mode, (passed, finished) in self._tally.items():
            rate = f"{100 * passed / finished:.0f}%" if finished else "–"
            shown.append(f"{mode} {passed}/{finished} {rate}")
        return ", ".join(shown)

    def _draw(self) -> None:
        filled = round(BAR_WIDTH * self._done / self._total) if self._total else BAR_WIDTH
        bar = "█" * filled + "░" * (BAR_WIDTH - filled)
        spent = int(self._clock() - self._started)
        self._out.write(f"\r\x1b[K{bar} {self._done}/{self._total}  pass@1 so far: {self._rates()}  "
                        f"{spent // 60}m{spent % 60:02d}s")
        self._out.flush()
