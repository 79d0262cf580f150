"""The fix round end to end with the real Docker sandbox: the repository's own tests (one already failing before
any change) run in the container for the run and for its fix round, and CI goes green after the fix's push."""

from __future__ import annotations

import pytest

from agents.types import RunStatus
from bot.sandbox import DockerSandbox
from tests.ci.test_fix_rounds import APPROVE, CODE, FIX_PLAN, PLAN, TESTS, ask, lint_ci, start_bot, status_messages
from tests.docker_support import TEST_CONFIG
from tests.fakes.team_script import ScriptedModel
from tests.repos.fixtures import PYTHON_PROJECT, branch_files, make_repo


@pytest.mark.docker
async def test_a_fix_round_runs_the_repositorys_tests_in_the_sandbox_and_ci_goes_green(git_host, github, tmp_path,
                                                                                        docker_client):
    bare = make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing")
    github.ci.on_commit("acme/billing", lint_ci(bare))
    model = ScriptedModel({"planner": [PLAN, FIX_PLAN], "programmer": [CODE.format(extra="print('retry')"),
                                                                      CODE.format(extra="pass")],
                           "optimizer": [APPROVE] * 2, "tester": [TESTS] * 2, "checkin": ["# retries\n"] * 2})
    async with DockerSandbox(TEST_CONFIG, client=docker_client) as sandbox:
        bot = await start_bot(git_host, github, tmp_path, model, sandbox, sandbox_config=TEST_CONFIG)
        try:
            await ask(bot, "add retries to the client in acme/billing")
            runs = await bot.store.runs(5)
        finally:
            await bot.store.close()
    assert [r.status for r in runs] == [RunStatus.PASSED, RunStatus.PASSED], [r.reason for r in runs]
    (pull,) = github.opened
    assert "print(" not in branch_files(bare, pull.head)["billing/client.py"]
    for run in runs:  # counted from the tests that ran in the container, the already failing one named
        status = github.ci.status_of("acme/billing", run.head_commit, "codegen-chat/tests")
        assert status["state"] == "success" and "(1 already failing before the change)" in status["description"]
    first, fix = status_messages(bot.thread)
    assert "❌ CI — failed: lint" in first and "✅ CI — 2 checks passed" in fix
