"""The CI calls through the real PyGithub against the loopback GitHub: checks and statuses read together,
required checks from branch protection, an Actions job's log through its redirect, the bot's status set."""

from bot.ci.checks import CheckState
from bot.ci.failure import clean
from bot.ci.rest import CiRest
from bot.config.sections import CheckinConfig
from bot.repos.github import GitHubRepos
from tests.ci.conftest import TOKEN
from tests.fakes.github_ci import Job

SHA = "a1" * 20


def repos(github) -> GitHubRepos:
    config = CheckinConfig(github_api_url=github.url, write_interval_s=0, backoff_s=0.01, max_retries=1)
    return GitHubRepos.with_token(config, TOKEN)


def rest(github, **kw) -> CiRest:
    return CiRest(repos(github), **kw)


async def test_statuses_and_check_runs_are_read_as_one_list_of_checks(github):
    github.add_repo("acme/billing")
    github.ci.on_commit("acme/billing", lambda sha: [Job("tests", "failure", pending_reads=1), Job("lint")])
    client = rest(github)
    await repos(github).set_status("acme/billing", SHA, "pending", "Jenkins is building", "ci/jenkins",
                                   "https://ci.example/1")
    first = {c.name: c for c in await client.checks("acme/billing", SHA)}
    assert first["ci/jenkins"].state is CheckState.PENDING and first["ci/jenkins"].kind == "status"
    assert first["ci/jenkins"].url == "https://ci.example/1" and first["tests"].state is CheckState.PENDING
    assert first["lint"].state is CheckState.PASSED and first["lint"].app == "github-actions"
    again = {c.name: c for c in await client.checks("acme/billing", SHA)}
    assert again["tests"].state is CheckState.FAILED and again["tests"].conclusion == "failure"
    assert ("GET", f"/repos/acme/billing/commits/{SHA}/check-runs") in github.calls()
    assert not any("/check-runs/" in path for _, path in github.calls())  # the list says all: no run fetched again


async def test_required_checks_come_from_branch_protection_and_rulesets_and_none_means_every_check(github):
    github.add_repo("acme/billing")
    client = rest(github)
    assert await client.required("acme/billing", "main") is None
    github.ci.require("acme/billing", "main", ["tests", "build"])
    assert await client.required("acme/billing", "main") == frozenset({"tests", "build"})
    assert await client.required("acme/billing", "no-such-branch") is None
    github.ci.require("acme/billing", "main", ["security/scan"], ruleset=True)
    assert await client.required("acme/billing", "main") == frozenset({"tests", "build", "security/scan"})


async def test_an_actions_log_is_read_through_its_redirect_without_the_token_and_from_its_end(github):
    github.add_repo("acme/billing")
    log = "2026-01-01T00:00:01.0000000Z \x1b[31mFAILED\x1b[0m tests/test_money.py::test_cents\n" * 50
    github.ci.on_commit("acme/billing", lambda sha: [Job("tests", "failure", log=log)])
    client = rest(github, log_max_bytes=200)
    (check,) = await client.checks("acme/billing", SHA)
    text = await client.job_log("acme/billing", check.id)
    assert github.ci.log_reads == 1 and len(text) == 200 and log.endswith(text)  # the fake refuses a token
    assert clean(text).endswith("FAILED tests/test_money.py::test_cents\n") and "\x1b" not in clean(text)


async def test_the_bots_status_and_comment_reach_the_pull_request(github):
    github.add_repo("acme/billing")
    client = rest(github)
    await repos(github).set_status("acme/billing", SHA, "success", "x" * 300, "codegen-chat/tests")
    status = github.ci.status_of("acme/billing", SHA, "codegen-chat/tests")
    assert status["state"] == "success" and len(status["description"]) == 140  # GitHub's limit
    await client.comment("acme/billing", 7, "CI still fails")
    assert github.ci.comments == [("acme/billing", 7, "CI still fails")]
