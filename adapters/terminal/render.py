"""A run's events as a person reads them in a terminal: a header per turn, the text as it streams, the
test results, the summary. Everything from outside is made inert (``bot.safety.inert``) and secrets masked;
only the colours added here reach the terminal as escape sequences."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

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
from agents.excerpts import failure_excerpt
from agents.types import RunStatus
from bot.chat.words import agent_title, ended_by_the_bot
from bot.safety.inert import inert
from bot.safety.redact import Redactor

FAILING_OUTPUT_CHARS = 2000


@dataclass(frozen=True)
class Styled:
    """Text shown in one of our colours (an SGR code such as "1" bold, "31" red)."""

    code: str
    text: str


Part = str | Styled

# What this renderer draws between turns' text. Any other event (the files a step saved, the best version so far)
# draws nothing, so it must not end a line that is still streaming: the Programmer's files saved while the
# Tester's turn is being told would cut a line of the Tester's text in two.
_DRAWN = (TurnStarted, TurnFinished, TestReported, CheckedIn, Notice, RunFinished)


class Renderer:
    """Writes a run's events as a person reads them: a header per turn, the text as it streams.
    Text goes out a whole line at a time, so a secret split across two deltas is still masked.
    Everything from outside passes ``_safe`` (secrets masked, control sequences made inert); only
    the colours added here reach the terminal as escape sequences. What the bot says itself (the summary, notes,
    notices) has credentials in any URL masked too; the model's text and the tests' output keep their example
    URLs, which are code."""

    def __init__(self, out: TextIO, color: bool, redact: Redactor | None = None) -> None:
        self._out, self._color = out, color
        self._redact = redact or Redactor(())
        self._said = self._redact.with_urls()
        self._pending: list[str] = []  # streamed text not yet ended by a newline, as it came
        self.finished: RunFinished | None = None

    async def __call__(self, event: Event) -> None:
        if isinstance(event, _DRAWN):
            self._end_pending()  # a turn that never finished (cut off, given up) keeps its text under its own header
        if isinstance(event, TurnStarted):
            self._line("\n", Styled("1", f"── {agent_title(event.agent)}"), " ", Styled("2", f"(round {event.round})"))
        elif isinstance(event, TextDelta):
            # Only the new text is searched for a line end: a long line arriving in many pieces is not searched again
            # at every piece.
            ended, newline, rest = event.text.rpartition("\n")
            if not newline:
                self._pending.append(event.text)
                return
            lines, self._pending = "".join([*self._pending, ended]), [rest] if rest else []
            self._out.write(self._safe(lines + "\n", said=False))
        elif isinstance(event, TurnFinished):
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

    def _end_pending(self) -> None:
        """Write the streamed text still waiting for its line's end, ended."""
        if self._pending:
            self._out.write(self._safe("".join(self._pending), said=False) + "\n")
            self._pending = []

    def _turn_footer(self, event: TurnFinished) -> None:
        if event.files:
            listed = ", ".join(f"{p} ({c.count(chr(10))} lines)" for p, c in event.files.items())
            self._line(Styled("36", f"   files: {listed}"))
        cut = ", cut short" if event.cut_short else ""  # the run's end stopped the reply: it did not finish
        self._line(Styled("2", f"   [{event.usage.tokens_text()} tokens, {event.duration_s:.1f}s{cut}]"))

    def _report(self, event: TestReported) -> None:
        report = event.report
        color = "32" if report.ok else "31"
        self._line("\n", Styled(color, f"Tests ({event.language}): {report.summary()}"), f" in {report.duration_s:.1f}s")
        if not report.ok:
            self._out.write(self._safe(_indent(failure_excerpt(report, FAILING_OUTPUT_CHARS)), said=False, code="2")
                            + "\n")

    def summary(self, event: RunFinished, out_dir: Path | None, saved: str = "") -> str:
        """The last lines of a run; ``out_dir``: where its files were just saved (None: nowhere), and ``saved`` what
        saving them there could not do."""
        color = {RunStatus.PASSED: "32", RunStatus.FAILED: "31", RunStatus.ERROR: "31"}.get(event.status, "33")
        lines = [self._text("\n", Styled(color, f"Run {event.run_id}: {event.status.upper()}"), f" — {event.reason}")]
        if event.report and not event.report.ok and event.status is not RunStatus.PASSED:
            lines.append("Failing output:\n" + self._safe(_indent(failure_excerpt(event.report, FAILING_OUTPUT_CHARS)),
                                                         said=False))
        cost = f" (about ${event.usage.cost_usd:.4f})" if event.usage.cost_usd else ""
        lines.append(self._text(f"Tokens: {event.usage.tokens_text()}{cost}"))
        if event.checkin:
            note = f" ({event.checkin.note})" if event.checkin.note else ""
            lines.append(self._text(f"Checked in: {event.checkin.location}{note}"))
        if out_dir:
            lines.append(self._text(f"Files: {out_dir}" + (f" ({saved})" if saved else "")))
        if ended_by_the_bot(event):
            lines.append(self._text(f'Continue it from where it stopped: codegen-chat run --continue {event.run_id} "carry on"'))
        return "\n".join(lines)

    def _line(self, *parts: Part) -> None:
        self._out.write(self._text(*parts) + "\n")

    def _text(self, *parts: Part) -> str:
        return "".join(self._styled(p) if isinstance(p, Styled) else self._safe(p) for p in parts)

    def _styled(self, part: Styled) -> str:
        return self._safe(part.text, code=part.code)

    def _safe(self, text: str, said: bool = True, code: str = "") -> str:
        """``text`` masked and inert; ``said``: the bot's own words, not the model's or a program's output."""
        text = inert((self._said if said else self._redact)(text))
        return f"\x1b[{code}m{text}\x1b[0m" if code and self._color else text


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())
