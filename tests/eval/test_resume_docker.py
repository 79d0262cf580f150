"""Ctrl-C in the middle of an eval keeps every finished attempt; ``--resume`` runs the rest, and the final
report is the one an uninterrupted eval gives. ``--report`` prints it again."""

import asyncio
import dataclasses
import signal

import pytest

from bot.eval.report import build_report
from bot.eval.results import EvalFolder
from tests.eval.scripted import Kind, ScriptedTeam, Spec, write_suite
from tests.eval.test_eval_cli import eval_cli, eval_config

pytestmark = pytest.mark.docker
SPECS = [Spec(1, Kind.ONE_SHOT), Spec(2, Kind.AFTER_FAILURE), Spec(3, Kind.NEVER)]


def without_times(report):
    """The report's findings: everything but how long things took on this machine."""
    modes = [dataclasses.replace(line, wall=None) for line in report.modes]
    return modes, report.differences, report.missing


async def test_an_interrupted_eval_resumes_to_the_report_of_an_uninterrupted_one(tmp_path, model_server, docker_client):
    team = ScriptedTeam(SPECS)
    team.stall_once = {SPECS[1].id}  # problem 2's planner stalls the first time it is asked
    team.install(model_server)
    write_suite(tmp_path / "tasks.jsonl", SPECS)
    config = eval_config(tmp_path, model_server.base_url)
    run = ["--suite", "tasks.jsonl", "--modes", "single,team"]

    started: list = []
    first = asyncio.create_task(eval_cli(tmp_path, *run, "--out", "run", config=config, wait_s=300, started=started))
    results = tmp_path / "run" / "results.jsonl"
    for _ in range(3000):  # problem 1 in both modes and problem 2 alone, then the stall
        if results.exists() and results.read_text().count("\n") == 3 and any(
                r.agent == "planner" and "mod2.py" in str(r.body) for r in model_server.requests):
            break
        await asyncio.sleep(0.1)
    started[0].send_signal(2)  # Ctrl-C
    code, out, err = await first
    assert code == 130, err
    assert "stopped; the results so far are kept. Run the rest with: codegen-chat eval --out run --resume" in err
    assert "Not finished: 3 attempt(s) still to run" in out
    assert results.read_text().count("\n") == 3 and await model_server.hung_up() == 1

    code, _, err = await eval_cli(tmp_path, *run, "--out", "run", config=config)
    assert code == 2 and "run already holds an eval: add --resume to finish it" in err
    code, _, err = await eval_cli(tmp_path, "--out", "run", "--resume", "--modes", "team", config=config)
    assert code == 2 and "ran with --modes single,team; resume it with the same" in err

    code, resumed, err = await eval_cli(tmp_path, "--out", "run", "--resume", config=config, wait_s=300)
    assert code == 0, err
    assert "3 of 6 attempts already done" in err
    code, whole, err = await eval_cli(tmp_path, *run, "--out", "whole", config=config, wait_s=300)
    assert code == 0, err

    reports = [build_report(folder.read_meta(), folder.read_results())
               for folder in (EvalFolder(tmp_path / "run"), EvalFolder(tmp_path / "whole"))]
    assert without_times(reports[0]) == without_times(reports[1])
    single, team_line = reports[0].modes
    assert (single.passed, team_line.passed, reports[0].missing) == (1, 2, 0)

    code, again, _ = await eval_cli(tmp_path, "--report", "run", config=config)
    assert code == 0 and again == resumed  # the same figures, printed again from the files
    assert "team, not single (1): python-2-after-failure" in again
    assert (tmp_path / "run" / "report.html").exists() and (tmp_path / "run" / "chart.svg").exists()


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP])
async def test_an_eval_a_supervisor_stops_says_what_it_kept_and_how_to_resume(tmp_path, model_server, docker_client,
                                                                            stop):
    team = ScriptedTeam(SPECS[:1])
    team.stall_once = {SPECS[0].id}  # its planner stalls: the eval is under way when the signal comes
    team.install(model_server)
    write_suite(tmp_path / "tasks.jsonl", SPECS[:1])
    config = eval_config(tmp_path, model_server.base_url)
    started: list = []
    first = asyncio.create_task(eval_cli(tmp_path, "--suite", "tasks.jsonl", "--modes", "team", "--out", "run",
                                         config=config, wait_s=300, started=started))
    while not model_server.calls("planner"):
        await asyncio.sleep(0.1)
    started[0].send_signal(stop)
    code, out, err = await first
    assert code == 128 + stop, err  # the shell's code for a process that signal stopped
    assert "stopped; the results so far are kept. Run the rest with: codegen-chat eval --out run --resume" in err
    assert "Not finished: 1 attempt(s) still to run" in out
    assert await model_server.hung_up() == 1
