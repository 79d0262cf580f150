"""``--repo`` and ``--base`` typed wrong are the person's mistake: refused in one line (exit 2) before the run
starts, with no model call and no run recorded."""

import json
from pathlib import Path

import pytest

from tests.repos.fixtures import git
from tests.terminal.test_terminal import cli, script_team, write_config


def repository(where: Path) -> Path:
    where.mkdir()
    git("init", "-q", "-b", "main", cwd=where)
    (where / "sub").mkdir()
    (where / "sub" / "app.py").write_text("x = 1\n")
    git("add", "-A", cwd=where)
    git("commit", "-q", "-m", "Initial commit", cwd=where)
    return where


@pytest.mark.parametrize("args, said", [
    (["--repo", "{tmp}"], "the folder is not the top of a git repository; --repo takes the folder holding .git"),
    (["--repo", "{repo}/sub"], "the folder is not the top of a git repository"),
    (["--repo", "{repo}", "--base", "nosuch"], "{repo} has no branch 'nosuch' to start from (--base)."),
    (["--base", "main"], "--base main names the branch of the repository in --repo, and there is none"),
])
async def test_a_repository_argument_that_cannot_be_worked_on_is_refused_before_the_run(model_server, tmp_path, args,
                                                                                       said):
    repo, plain = repository(tmp_path / "repo"), tmp_path / "plain"
    plain.mkdir()
    args = [a.format(tmp=plain, repo=repo) for a in args]
    config = write_config(tmp_path, model_server.base_url)
    script_team(model_server)
    code, out, err = await cli(tmp_path, "run", "add a function", *args, config=config)
    assert code == 2 and said.format(repo=repo) in err and len(err.splitlines()) == 1, err
    code, out, _ = await cli(tmp_path, "run", "add a function", *args, "--json", config=config)
    assert code == 2 and json.loads(out)["status"] == "refused"
    _, listing, _ = await cli(tmp_path, "history", config=config)
    assert "add a function" not in listing and model_server.requests == []  # nothing ran, nothing recorded


async def test_a_local_repository_with_its_branch_runs(model_server, tmp_path):
    repo = repository(tmp_path / "repo")
    config = write_config(tmp_path, model_server.base_url)
    script_team(model_server)
    code, out, err = await cli(tmp_path, "run", "add a function", "--repo", str(repo), "--base", "main", config=config)
    assert "── Planner (round 0)" in out and code == 3, err  # it ran (the sandbox is disabled in this config)
