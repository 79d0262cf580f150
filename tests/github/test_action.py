"""The composite action (``action.yml`` at the repository's root): it parses, it passes the task as data, its
run step keeps the run's exit code, and its outputs come from a real ``codegen-chat run --json``'s result line."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from adapters.terminal import TerminalRun, exit_codes, run_in_terminal
from bot.checkin import FolderPublisher
from bot.config.sections import Config, load_config
from bot.model.client import OpenAIChatModel
from bot.repos.desk import RepoDesk
from bot.runs.service import Service
from tests.fakes.github_server import FakeGitHub
from tests.fakes.team_script import ScriptedSandbox
from tests.github.conftest import REPO, passing, script_team
from tests.repos.conftest import TOKEN

ROOT = Path(__file__).resolve().parents[2]


def action() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "action.yml").read_text())


def step(name: str) -> dict[str, Any]:
    return next(s for s in action()["runs"]["steps"] if s.get("name") == name)


def outputs_written(path: Path) -> dict[str, str]:
    """``$GITHUB_OUTPUT`` as the runner reads it: ``name=value`` lines and ``name<<DELIMITER`` blocks."""
    found, lines = {}, path.read_text().split("\n")
    while lines:
        line = lines.pop(0)
        if match := re.fullmatch(r"([\w-]+)<<(.+)", line):
            end = lines.index(match[2])
            found[match[1]], lines = "\n".join(lines[:end]), lines[end + 1:]
        elif "=" in line:
            name, _, value = line.partition("=")
            found[name] = value
    return found


def test_the_action_is_composite_with_the_documented_outputs_and_the_task_never_in_a_script():
    parsed = action()
    assert parsed["runs"]["using"] == "composite"
    assert {"pr-url", "result-json"} <= set(parsed["outputs"])
    assert parsed["inputs"]["task"]["required"] is True
    used = set(re.findall(r"inputs\.([\w-]+)", (ROOT / "action.yml").read_text()))
    assert used <= set(parsed["inputs"]), used - set(parsed["inputs"])
    for each in parsed["runs"]["steps"]:
        assert "${{" not in each.get("run", ""), each.get("name")  # inputs reach scripts as environment only


async def test_the_outputs_come_from_a_real_run_json_result_line(github_config: Config, store, github_secrets,
                                                                  github: FakeGitHub, pull_request, model_server,
                                                                  tmp_path):
    script_team(model_server)
    service = Service(github_config, store, OpenAIChatModel(github_config, github_secrets),
                      ScriptedSandbox(verdict=passing), repos=RepoDesk(github_config, TOKEN))
    out = io.StringIO()
    code = await run_in_terminal(service, TerminalRun("add retries to billing/client.py", [], str(tmp_path / "out"),
                                                      None, json_lines=True, repo=REPO),
                                 FolderPublisher, 10_000, "session-1", out=out)
    assert code == exit_codes.PASSED
    events = tmp_path / "events.jsonl"
    events.write_text(out.getvalue())
    github_output = tmp_path / "github_output"
    script = tmp_path / "outputs.py"
    script.write_text(step("Outputs")["run"])
    subprocess.run([sys.executable, str(script)], check=True, env={
        **os.environ, "CODEGEN_CHAT_EVENTS": str(events), "GITHUB_OUTPUT": str(github_output)})
    written = outputs_written(github_output)
    (pull,) = github.opened
    assert written["pr-url"].endswith(f"/acme/app/pull/{pull.number}")
    result = json.loads(written["result-json"])
    assert result == json.loads(out.getvalue().splitlines()[-1]) and result["status"] == "passed"


def test_the_run_step_passes_the_task_as_one_argument_and_keeps_the_runs_exit_code(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "codegen-chat"  # stands in for the installed command: records its arguments, fails like a run
    shim.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$ARGS_FILE"\n'
                    'echo \'{"type": "result", "status": "failed", "exit_code": 1}\'\nexit 1\n')
    shim.chmod(0o755)
    github_output = tmp_path / "github_output"
    task = "--help; $(touch pwned) `id` \"quoted\""
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "RUNNER_TEMP": str(tmp_path), "GITHUB_OUTPUT": str(github_output),
           "ARGS_FILE": str(tmp_path / "args"), "TASK": task, "REPOSITORY": REPO, "BASE": "",
           "CODEGEN_CHAT_WORKFLOW_TOKEN": "false"}
    done = subprocess.run(["bash", "-e", "-c", step("Run the team")["run"]], env=env, cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr  # the step itself goes on: the outputs are set, the last step fails
    assert (tmp_path / "args").read_text().splitlines() == ["run", "--json", "--repo", REPO, "--", task]
    assert not (tmp_path / "pwned").exists()
    assert outputs_written(github_output)["exit-code"] == "1"
    assert '"status": "failed"' in (tmp_path / "codegen-chat-events.jsonl").read_text()


def test_without_a_config_the_action_writes_one_allowing_the_workflows_repository(tmp_path):
    github_env = tmp_path / "github_env"
    env = {"PATH": os.environ["PATH"], "RUNNER_TEMP": str(tmp_path), "GITHUB_ENV": str(github_env), "CONFIG": "",
           "REPOSITORY": "acme/app", "MODEL": "gpt-4o", "SERVER_URL": "https://github.example",
           "API_URL": "https://github.example/api/v3", "GITHUB_WORKSPACE": str(tmp_path)}
    done = subprocess.run(["bash", "-e", "-c", step("Configure")["run"]], env=env, cwd=tmp_path, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    name, _, path = github_env.read_text().strip().partition("=")
    config = load_config(Path(path))
    assert name == "CODEGEN_CONFIG" and list(config.repos.allowed) == ["acme/app"]
    assert config.repos.git_url == "https://github.example"
    assert config.checkin.github_api_url == "https://github.example/api/v3"
    assert config.agent("programmer").model == "gpt-4o"

    github_env.unlink()
    subprocess.run(["bash", "-e", "-c", step("Configure")["run"]], env={**env, "CONFIG": ".github/codegen.toml"},
                   cwd=tmp_path, check=True)
    assert github_env.read_text().strip() == f"CODEGEN_CONFIG={tmp_path}/.github/codegen.toml"  # the team's own


# -- the documented workflow ----------------------------------------------------------------------

def documented_workflow() -> dict[str, Any]:
    text = (ROOT / "docs" / "github.md").read_text()
    found = re.search(r"```yaml\n(# \.github/workflows/codegen-chat\.yml\n.*?)```", text, re.DOTALL)
    assert found, "docs/github.md shows the workflow"
    return yaml.safe_load(found[1])


def test_the_documented_workflow_starts_a_run_only_for_someone_with_write_access(tmp_path):
    """The gate is the sender's permission as GitHub's API says it (the webhook's rule), not author_association:
    an organization member or collaborator with read or triage access may not start a run that pushes."""
    job = documented_workflow()["jobs"]["code"]
    assert "author_association" not in job["if"]
    first = job["steps"][0]
    assert "${{ github.event.sender.login }}" in first["env"].values()
    asked = tmp_path / "asked"
    stub = tmp_path / "bin"
    stub.mkdir()
    (stub / "gh").write_text(f'#!/bin/sh\necho "$@" >> {asked}\n[ "$PERMISSION" = fail ] && exit 1\n'
                             'echo "$PERMISSION"\n')
    (stub / "gh").chmod(0o755)

    def gate(permission: str) -> int:
        env = {**os.environ, "PATH": f"{stub}:{os.environ['PATH']}", "PERMISSION": permission,
               "GITHUB_REPOSITORY": "acme/app", "ASKER": "mallory", "GH_TOKEN": "t"}
        return subprocess.run(["bash", "-e", "-c", first["run"]], env=env, capture_output=True).returncode

    assert [gate(p) for p in ("admin", "maintain", "write")] == [0, 0, 0]
    assert [gate(p) for p in ("triage", "read", "none", "fail")] == [1, 1, 1, 1]
    assert "repos/acme/app/collaborators/mallory/permission" in asked.read_text()
