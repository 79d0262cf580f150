"""``codegen-chat run --repo`` as a person types it, in a subprocess, with the real Docker sandbox: on a
GitHub repository (a real git server and the GitHub fake) the run ends with a pull request and ``history``
shows it; on a local folder (a Go project) the work lands as a branch of that folder's repository."""

from __future__ import annotations

import pytest

from tests.repos.conftest import TOKEN
from tests.repos.fixtures import GO_PROJECT, PYTHON_PROJECT, branch_files, git, make_repo
from tests.repos.test_pull_request_docker import CODE, PLAN, TESTS
from tests.terminal.test_terminal import cli, write_config

MUL_PLAN = "1. Add Mul(a, b int) int to calc.go.\n2. Test it in mul_test.go.\nLANGUAGE: go"
MUL_CODE = "```go path=calc.go\n" + GO_PROJECT["calc.go"] + "\nfunc Mul(a, b int) int { return a * b }\n```\n"
MUL_TESTS = ('```go path=mul_test.go\npackage calc\n\nimport "testing"\n\n'
             'func TestMul(t *testing.T) { if Mul(2, 3) != 6 { t.Fatal("mul") } }\n```\n')


README = "# Retries\n\n`fetch` tries a request again on ConnectionError, at most `attempts` times.\n"


def _script(model_server, plan: str, code: str, tests: str) -> None:
    for role, replies in {"planner": [plan], "programmer": [code], "tester": [tests],
                          "optimizer": ["The retries stop after the last attempt and re-raise.\nVERDICT: APPROVE"],
                          "checkin": [README]}.items():
        model_server.script(role, *replies)


@pytest.mark.docker
async def test_a_terminal_run_on_a_github_repository_ends_with_a_pull_request(model_server, git_host, github,
                                                                              tmp_path, docker_client):
    bare = make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing")
    _script(model_server, PLAN, CODE, TESTS)
    config = write_config(tmp_path, model_server.base_url).read_text().replace(
        "[sandbox]\nenabled = false\n", "[sandbox]\nuse_offline_images = true\n")
    config += (f'[checkin]\ngithub_api_url = "{github.url}"\nwrite_interval_s = 0\n'
               f'[repos]\ngit_url = "{git_host.url}"\n[repos."acme/billing"]\nlabels = ["api"]\n')
    (tmp_path / "config.toml").write_text(config)
    env = {"GITHUB_TOKEN": TOKEN}
    code, out, err = await cli(tmp_path, "run", "add retries to billing/client.py", "--repo", "acme/billing",
                               config=tmp_path / "config.toml", env_extra=env)
    assert code == 0, out + err
    assert "Working in acme/billing@main" in out
    assert "already failing: " in out and "test_rounding_half_even" in out
    assert "3 passed, 0 failed (1 already failing before the change)" in out
    (pull,) = github.opened
    assert f"Checked in: http://127.0.0.1:{github.url.rsplit(':', 1)[1]}/acme/billing/pull/{pull.number}" in out
    assert pull.labels == ["codegen-chat", "api"]
    assert "except ConnectionError" in branch_files(bare, pull.head)["billing/client.py"]
    assert TOKEN not in out + err
    code, listing, _ = await cli(tmp_path, "history", config=tmp_path / "config.toml", env_extra=env)
    assert code == 0 and f"Repository: acme/billing, branch {pull.head}, pull request " in listing
    assert f"/acme/billing/pull/{pull.number}, head " in listing


@pytest.mark.docker
async def test_a_terminal_run_on_a_local_go_repository_lands_as_a_branch(model_server, tmp_path, docker_client):
    work = make_repo(tmp_path / "src", "me/calc", GO_PROJECT).parent.parent / "_work" / "me/calc"
    _script(model_server, MUL_PLAN, MUL_CODE, MUL_TESTS)
    config = write_config(tmp_path, model_server.base_url).read_text().replace(
        "[sandbox]\nenabled = false\n", "[sandbox]\nuse_offline_images = true\n")
    (tmp_path / "config.toml").write_text(config)
    code, out, err = await cli(tmp_path, "run", "add Mul to calc.go", "--repo", str(work),
                               config=tmp_path / "config.toml")
    assert code == 0, out + err
    assert "already failing: TestSub" in out  # the baseline run named it; the change is not blamed for it
    assert "(1 already failing before the change)" in out
    branch = next(b.strip().lstrip("* ") for b in git("branch", "--list", "codegen-chat/*", cwd=work).splitlines())
    assert branch.startswith("codegen-chat/add-mul-to-calc-go-")
    assert f"branch {branch}" in out
    files = branch_files(work, branch)
    assert "func Mul" in files["calc.go"] and "TestMul" in files["mul_test.go"]
    assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=work).strip() == "main"  # the folder's checkout untouched
    assert "func Mul" not in (work / "calc.go").read_text()
