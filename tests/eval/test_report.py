"""The report from a results file: figures per mode, what one mode solved and another did not, the table
a terminal shows and the chart written beside the results."""

import re

from bot.eval.chart import write_chart
from bot.eval.report import build_report
from bot.eval.results import EvalMeta, Result
from bot.eval.table import report_text

META = EvalMeta("tasks.jsonl", ("single", "team"), ("p1", "p2", "p3", "p4"), models={"programmer": "gpt-4o-mini"})


def result(problem, mode, passed, tokens=100, cost=0.001, calls=1, wall=1.0, **more):
    return Result(problem, mode, passed, "1 passed, 0 failed" if passed else "0 passed, 1 failed",
                  more.pop("status", "answered"), prompt_tokens=tokens, cost_usd=cost, model_calls=calls,
                  wall_s=wall, **more)


RESULTS = [
    result("p1", "single", True), result("p1", "team", True, 900, 0.01, 5, 10.0),
    result("p2", "single", False), result("p2", "team", True, 1500, 0.02, 8, 20.0),
    result("p3", "single", True), result("p3", "team", False, 2000, 0.03, 9, 30.0, status="error"),
    result("p4", "single", False, estimated=True),
]


def test_pass_rates_intervals_spreads_and_differences():
    report = build_report(META, RESULTS)
    single, team = report.modes
    assert (single.passed, single.finished, team.passed, team.finished) == (2, 4, 2, 3)
    assert round(single.low, 4) == 0.1500 and round(single.high, 4) == 0.8500
    assert team.calls.median == 8 and team.calls.p90 == 9 and team.tokens.mean == 1466.6666666666667
    assert team.errors == 1 and single.estimated and not team.estimated
    assert report.missing == 1  # p4 has not run in team mode
    found = {(d.better, d.worse): d.problems for d in report.differences}
    assert found == {("single", "team"): ("p3",), ("team", "single"): ("p2",)}  # p4 is not compared: team lacks it


def test_the_terminal_table_says_what_a_person_needs():
    text = report_text(build_report(META, RESULTS), chart="out/report.html")
    assert text.startswith("Eval of tasks.jsonl: 4 problems, model gpt-4o-mini")
    single_row = next(line for line in text.splitlines() if line.startswith("single"))
    figures = r"2/4 50\.0%\s+15\.0–85\.0%\s+~100 \(~100\)\s+\$0\.0010 \(\$0\.0010\)\s+1 \(1\)\s+1\.0s \(1\.0s\)"
    assert re.search(figures, single_row)
    assert "team, not single (1): p2" in text and "single, not team (1): p3" in text
    assert "Not finished: 1 attempt(s) still to run" in text
    assert "ended in error, counted as not passed: team 1" in text
    assert "~ token counts include estimates" in text and text.endswith("Chart of pass@1 against cost: out/report.html")


def test_problem_ids_cannot_drive_the_terminal_or_the_page(tmp_path):
    meta = EvalMeta("x\x1b]0;owned\x07.jsonl", ("single", "team"), ("<b>p</b>\x1b[2J",))
    results = [result("<b>p</b>\x1b[2J", "team", True), result("<b>p</b>\x1b[2J", "single", False)]
    report = build_report(meta, results)
    text = report_text(report)
    assert "\x1b" not in text and "^[[2J" in text
    page = write_chart(report, tmp_path).read_text()
    assert "<b>p</b>" not in page and "&lt;b&gt;p&lt;/b&gt;" in page


def test_the_chart_opens_offline_and_plots_each_mode_against_its_cost(tmp_path):
    page_path = write_chart(build_report(META, RESULTS), tmp_path)
    page, svg = page_path.read_text(), (tmp_path / "chart.svg").read_text()
    assert page_path.name == "report.html" and svg in page  # the chart is inline in the page
    for external in ("<script", "src=", "href=", "url(", "@import", "<link"):
        assert external not in page
    assert "mean cost per problem (US$)" in svg
    assert "single 50.0%" in svg and "team 66.7%" in svg
    points = dict(re.findall(r'<circle cx="([\d.]+)" cy="([\d.]+)"', svg))
    assert len(points) == 2
    xs = sorted(float(x) for x in points)
    assert xs[0] < xs[1]  # one prompt costs less than the team


def test_without_prices_the_chart_plots_tokens():
    from bot.eval.chart import chart_svg

    free = [result(r.problem, r.mode, r.passed, tokens=r.prompt_tokens, cost=0.0) for r in RESULTS]
    report = build_report(META, free)
    assert "mean tokens per problem" in chart_svg(report)
    assert "Cost is $0: no [prices] are configured" in report_text(report)
