"""The eval end to end: the scripted model server through the real ``openai`` client, real Docker."""

import json

import pytest

from bot.eval.results import EvalFolder
from tests.conftest import with_changes
from tests.eval.scripted import Kind, ScriptedTeam, Spec, write_suite
from tests.eval.support import run_suite

pytestmark = pytest.mark.docker

MIXED = [Spec(1, Kind.ONE_SHOT), Spec(2, Kind.AFTER_FAILURE), Spec(3, Kind.ONE_SHOT), Spec(4, Kind.AFTER_FAILURE),
         Spec(5, Kind.NEVER)]


def by_mode(report):
    return {line.mode: line for line in report.modes}


async def test_the_team_beats_one_prompt_by_exactly_the_problems_only_a_failing_test_fixes(
        model_server, config, secrets, tmp_path, docker_client):
    ScriptedTeam(MIXED).install(model_server)
    config = with_changes(config, budget={"max_rounds": 2})
    suite = write_suite(tmp_path / "tasks.jsonl", MIXED)
    report, progress = await run_suite(config, secrets, suite, "single,team", tmp_path / "out")

    lines = by_mode(report)
    assert (lines["single"].passed, lines["single"].finished) == (2, 5)  # the two one-shot problems
    assert (lines["team"].passed, lines["team"].finished) == (4, 5)  # and the two its own tests fixed
    assert lines["team"].passed - lines["single"].passed == 2
    gained = next(d for d in report.differences if (d.better, d.worse) == ("team", "single"))
    lost = next(d for d in report.differences if (d.better, d.worse) == ("single", "team"))
    assert gained.problems == ("python-2-after-failure", "python-4-after-failure") and lost.problems == ()
    assert lines["single"].calls.median == 1 and lines["single"].tokens.median == 150
    assert progress.splitlines()[-1].startswith("10/10 ") and "team 4/5 80%" in progress.splitlines()[-1]

    # Check-in is off: nobody asked the Check-In, and the hidden tests never reached a prompt.
    assert not model_server.calls("checkin")
    bodies = [json.dumps(r.body) for r in model_server.requests]
    for spec in MIXED:
        assert not any(spec.marker in body or f"test_secret_{spec.number}" in body for body in bodies)

    results = EvalFolder(tmp_path / "out").read_results()
    assert len(results) == 10 and {r.key for r in results} == {(s.id, m) for s in MIXED for m in ("single", "team")}
    # plan, code, review, tests; after a failure also triage, code, review (the last round's tests end it)
    assert [r.model_calls for r in sorted(results, key=lambda r: r.problem) if r.mode == "team"] == [4, 7, 4, 7, 7]
    assert (lines["team"].calls.median, lines["team"].tokens.median) == (7, 7 * 150)
    never = next(r for r in results if r.key == ("python-5-never", "team"))
    assert not never.passed and never.status == "failed" and "1 failed" in never.score
    assert "assert 6 == 35" in never.score_output or "assert scale(5) == 35" in never.score_output
    assert list(never.files) == ["mod5.py"]  # the team's own tests are not what was scored


async def test_a_multi_language_suite_runs_end_to_end(model_server, config, secrets, tmp_path, docker_client):
    specs = [Spec(1, Kind.AFTER_FAILURE, "python"), Spec(2, Kind.AFTER_FAILURE, "javascript"),
             Spec(3, Kind.AFTER_FAILURE, "go"), Spec(4, Kind.ONE_SHOT, "go")]
    ScriptedTeam(specs).install(model_server)
    suite = write_suite(tmp_path / "tasks.jsonl", specs)
    report, _ = await run_suite(config, secrets, suite, "single,team-no-review", tmp_path / "out", concurrency=4)

    lines = by_mode(report)
    assert (lines["single"].passed, lines["team-no-review"].passed) == (1, 4)
    results = {r.key: r for r in EvalFolder(tmp_path / "out").read_results()}
    assert {results[(s.id, "team-no-review")].language for s in specs} == {"python", "javascript", "go"}
    assert "1 passed, 0 failed" in results[("go-3-after-failure", "team-no-review")].score
    assert "1 failed" in results[("javascript-2-after-failure", "single")].score
    assert not model_server.calls("optimizer")  # the ablation really skipped the review
    assert all(spec.marker not in json.dumps(r.body) for spec in specs for r in model_server.requests)
