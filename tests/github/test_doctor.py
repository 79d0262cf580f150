"""``codegen-chat doctor``: Actions' own GITHUB_TOKEN is warned about (its pushes start no workflow runs), and the
pull-request platform's secret and token are checked."""

from __future__ import annotations

import dataclasses

import pytest

from adapters.github.doctor import doctor_checks
from bot.config.sections import Config, Secrets
from bot.health.doctor import run_doctor
from bot.repos.doctor import repo_checks


@pytest.mark.parametrize(("env", "token", "warned"), [
    ({"GITHUB_ACTIONS": "true", "CODEGEN_CHAT_WORKFLOW_TOKEN": "true"}, "ghs_0123456789abcdef", "is the workflow's"),
    ({"GITHUB_ACTIONS": "true"}, "ghs_0123456789abcdef", "looks like the workflow's"),
    ({"GITHUB_ACTIONS": "true"}, "github_pat_0123456789abcdef", ""),
    ({}, "ghs_0123456789abcdef", ""),  # not in Actions: a GitHub App's token, minted elsewhere
])
async def test_doctor_warns_when_the_token_is_the_workflows_own(monkeypatch, capsys, env, token, warned):
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("CODEGEN_CHAT_WORKFLOW_TOKEN", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    code = await run_doctor(Config(), Secrets(github_token=token), [repo_checks])
    out = capsys.readouterr().out
    assert code == 0  # a warning, not a failure
    if warned:
        assert f"[warn] GitHub token in Actions: GITHUB_TOKEN {warned} own token" in out
        assert "start no new workflow runs" in out and "GitHub App installation token" in out
        assert "personal access token" in out
    else:
        assert "[warn]" not in out


async def test_the_platform_needs_its_webhook_secret_and_a_token():
    failed = {r.name for r in await doctor_checks(Config(), Secrets()) if not r.ok and r.required}
    assert failed == {"github webhook secret", "github token"}
    ready = dataclasses.replace(Secrets(), github_webhook_secret="s", github_token="ghp_x")
    assert all(r.ok or not r.required for r in await doctor_checks(Config(), ready))
