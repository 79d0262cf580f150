"""Pass rate against cost per problem, as an SVG, and a self-contained HTML page around it (the chart and
the table; no script, no font or style from the network), written next to the results.

Each mode is a point at its mean cost per problem (mean tokens per problem when no price is configured)
and its pass@1, with its 95% interval drawn as a vertical bar: a mode up and to the left is better.
"""

from __future__ import annotations

import math
from html import escape
from pathlib import Path

from bot.eval.report import Report
from bot.eval.table import dollars, report_text

WIDTH, HEIGHT = 640, 400
LEFT, RIGHT, TOP, BOTTOM = 70, 40, 40, 60
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")
LABEL_CHAR_PX = 7  # about how wide a character of a label is, at 12 px
CHART_FILE, PAGE_FILE = "chart.svg", "report.html"


def chart_svg(report: Report) -> str:
    priced = report.priced
    xs = [line.cost.mean if priced else line.tokens.mean for line in report.modes]
    top = _axis_top(max(xs, default=0.0) * 1.1)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(value: float) -> float:
        return LEFT + plot_w * value / top

    def y(rate: float) -> float:
        return TOP + plot_h * (1 - rate)

    label = "mean cost per problem (US$)" if priced else "mean tokens per problem (no prices configured)"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" '
        'font-family="sans-serif" font-size="12">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{WIDTH / 2}" y="22" text-anchor="middle" font-size="14">'
        f'pass@1 against cost: {escape(report.suite)} ({report.problems} problems)</text>',
    ]
    for i in range(6):  # horizontal grid and y ticks: 0%, 20%, ... 100%
        rate = i / 5
        parts.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(rate):.1f}" y2="{y(rate):.1f}" stroke="#ddd"/>')
        parts.append(f'<text x="{LEFT - 8}" y="{y(rate) + 4:.1f}" text-anchor="end">{100 * rate:.0f}%</text>')
    for i in range(5):  # x ticks
        value = top * i / 4
        shown = dollars(value, step=top / 4) if priced else f"{value:,.0f}"
        parts.append(f'<text x="{x(value):.1f}" y="{HEIGHT - BOTTOM + 18}" text-anchor="middle">{shown}</text>')
    parts += [
        f'<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{HEIGHT - BOTTOM}" stroke="black"/>',
        f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{HEIGHT - BOTTOM}" y2="{HEIGHT - BOTTOM}" stroke="black"/>',
        f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 18}" text-anchor="middle">{label}</text>',
        f'<text transform="rotate(-90)" x="{-(TOP + plot_h / 2)}" y="18" text-anchor="middle">pass@1 (95% interval)</text>',
    ]
    for index, (line, value) in enumerate(zip(report.modes, xs, strict=True)):
        if not line.finished:
            continue
        colour = COLOURS[index % len(COLOURS)]
        cx, cy = x(value), y(line.rate)
        label = f"{line.mode} {100 * line.rate:.1f}%"
        # Labels alternate above and below their points, and turn left near the right edge, so that modes
        # with the same pass rate and similar costs stay readable.
        left = cx + 9 + LABEL_CHAR_PX * len(label) > WIDTH
        lx, anchor = (cx - 9, "end") if left else (cx + 9, "start")
        ly = cy - 8 if index % 2 == 0 else cy + 16
        parts += [
            f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{y(line.high):.1f}" y2="{y(line.low):.1f}" stroke="{colour}" '
            'stroke-width="2"/>',
            f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="5" fill="{colour}"><title>{escape(line.mode)}: '
            f'{line.passed}/{line.finished}</title></circle>',
            f'<text x="{lx:.1f}" y="{ly:.1f}" text-anchor="{anchor}" fill="{colour}">{escape(label)}</text>',
        ]
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _axis_top(value: float) -> float:
    """The least round number at or above ``value`` whose quarters are round too (0.0004, 0.02, 800...)."""
    if value <= 0:
        return 1.0
    magnitude = 10 ** math.floor(math.log10(value))
    return next(f * magnitude for f in (1, 2, 4, 8, 10) if f * magnitude >= value)


def report_page(report: Report) -> str:
    return (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>Eval of {escape(report.suite)}</title></head>\n<body style=\"font-family: sans-serif\">\n"
        f"{chart_svg(report)}<pre>{escape(report_text(report))}</pre>\n</body></html>\n"
    )


def write_chart(report: Report, folder: Path) -> Path:
    """``chart.svg`` and ``report.html`` in ``folder``; the page's path."""
    (folder / CHART_FILE).write_text(chart_svg(report), encoding="utf-8")
    page = folder / PAGE_FILE
    page.write_text(report_page(report), encoding="utf-8")
    return page
