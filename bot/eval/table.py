"""The report as a person reads it in a terminal."""

from __future__ import annotations

import math
from collections.abc import Callable

from bot.eval.report import ModeLine, Report
from bot.eval.stats import Spread
from bot.safety.inert import inert

LISTED = 12  # problem ids named per difference before "and N more"


def report_text(report: Report, chart: str = "") -> str:
    lines = [_title(report), ""]
    rows: list[tuple[str, ...]] = [("mode", "pass@1", "95% interval", "tokens", "cost", "calls", "wall time")]
    rows += [_row(line) for line in report.modes]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines.append(" " * (sum(widths[:3]) + 6) + "per problem: median (p90)")
    for row in rows:
        lines.append("  ".join(cell.ljust(width) if i == 0 else cell.rjust(width)
                               for i, (cell, width) in enumerate(zip(row, widths, strict=True))).rstrip())
    lines += _notes(report)
    lines += ["", "Solved by one mode and not the other:"] if len(report.modes) > 1 else []
    for difference in report.differences:
        ids = [inert(pid) for pid in difference.problems]
        shown = ", ".join(ids[:LISTED]) + (f" and {len(ids) - LISTED} more" if len(ids) > LISTED else "")
        lines.append(f"  {difference.better}, not {difference.worse} ({len(ids)}){': ' + shown if ids else ''}")
    if chart:
        lines += ["", f"Chart of pass@1 against cost: {chart}"]
    return "\n".join(lines)


def _title(report: Report) -> str:
    models = sorted(set(report.models.values()))
    model = f"model {models[0]}" if len(models) == 1 else "models " + ", ".join(
        f"{role}={name}" for role, name in sorted(report.models.items()))
    return f"Eval of {inert(report.suite)}: {report.problems} problems, {inert(model)}"


def _row(line: ModeLine) -> tuple[str, ...]:
    if not line.finished:
        return (line.mode, *("–" * 6))
    mark = "~" if line.estimated else ""
    return (
        line.mode,
        f"{line.passed}/{line.finished} {100 * line.rate:.1f}%",
        f"{100 * line.low:.1f}–{100 * line.high:.1f}%",
        _spread(line.tokens, lambda v: f"{mark}{v:,.0f}"),
        _spread(line.cost, dollars),
        _spread(line.calls, lambda v: f"{v:.0f}"),
        _spread(line.wall, lambda v: f"{v:.1f}s"),
    )


def dollars(value: float, step: float | None = None) -> str:
    """US dollars with two significant digits for small sums ($0.000041), cents for large ones; with
    ``step``, as many decimals as tell values ``step`` apart (an axis)."""
    if value == 0:
        return "$0"
    scale = step or value
    decimals = max(2, 1 - math.floor(math.log10(scale))) if scale > 0 else 2
    return f"${value:.{decimals}f}"


def _spread(spread: Spread, shown: Callable[[float], str]) -> str:
    return f"{shown(spread.median)} ({shown(spread.p90)})"


def _notes(report: Report) -> list[str]:
    notes = []
    if report.missing:
        notes.append(f"Not finished: {report.missing} attempt(s) still to run; the figures cover what finished "
                     "(--resume runs the rest).")
    errors = [f"{line.mode} {line.errors}" for line in report.modes if line.errors]
    if errors:
        notes.append(f"Attempts that ended in error, counted as not passed: {', '.join(errors)}.")
    if any(line.estimated for line in report.modes):
        notes.append("~ token counts include estimates: the server reported no usage for some calls.")
    if not report.priced and any(line.finished for line in report.modes):
        notes.append("Cost is $0: no [prices] are configured for these models.")
    return ["", *notes] if notes else []
