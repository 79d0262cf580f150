"""From Slack, in a channel whose default repository is acme/billing: a mention becomes a pull request linked
in the thread, and a reply in the thread adds a commit to the same branch and updates the pull request."""

from __future__ import annotations

import dataclasses

from agents.types import TestJob, TestReport, TestStatus
from bot.config.sections import ReposConfig, RepoSettings
from bot.repos.desk import RepoDesk
from tests.conftest import with_changes
from tests.fakes.github_server import FakeGitHub
from tests.fakes.slack_api import FakeSlack
from tests.fakes.team_script import ScriptedSandbox
from tests.repos.conftest import TOKEN, git_host, github  # noqa: F401  (fixtures)
from tests.repos.fixtures import PYTHON_PROJECT, branch_files, git, make_repo
from tests.repos.test_pull_request_docker import CODE, CODE_LOGGED, PLAN, TESTS
from tests.slack.conftest import finished, mention

README = "# Retries\n\n`fetch` tries again on ConnectionError.\n"


def _passing(job: TestJob) -> TestReport:
    return TestReport(TestStatus.PASSED, 0, 0.1, 3, 0, "3 passed")


async def test_a_mention_in_a_channel_with_a_default_repository_ends_with_a_pull_request(
        model_server, slack_config, start_bot, git_host, github):  # noqa: F811
    bare = make_repo(git_host.root, "acme/billing", PYTHON_PROJECT)
    github.add_repo("acme/billing")
    for role, replies in {"planner": [PLAN, PLAN], "programmer": [CODE, CODE_LOGGED], "tester": [TESTS, TESTS],
                          "optimizer": ["VERDICT: APPROVE"] * 2, "checkin": [README] * 2}.items():
        model_server.script(role, *replies)
    repos = ReposConfig(git_url=git_host.url, allowed={"acme/billing": RepoSettings(defaults_for=("slack:C1",))})
    config = dataclasses.replace(with_changes(slack_config, checkin={"github_api_url": github.url,
                                                                     "write_interval_s": 0}), repos=repos)
    async with FakeSlack() as slack:
        config = with_changes(config, slack={"api_url": slack.api_url})
        await start_bot(config, sandbox=ScriptedSandbox(verdict=_passing), fake=slack, repos=RepoDesk(config, TOKEN))
        message, _ = await mention(slack, "add retries to billing/client.py")
        thread = await finished(slack, "C1", message.ts)
        (pull,) = github.opened
        assert f"Asked for in https://fake.slack.test/archives/C1/p{message.ts.replace('.', '')}" in pull.body
        assert f"Pull request: {pull_url(github, pull.number)}" in thread[-1].text
        assert f"acme/billing/pull/{pull.number}" in thread[0].text  # the status message links it too
        await mention(slack, "also print each retry", thread_ts=message.ts)
        thread = await finished(slack, "C1", message.ts, count=2)
    assert len(github.opened) == 1 and "also print each retry" in github.opened[0].body
    assert "updated" in thread[-1].text
    assert "retry {attempt + 1}'" in branch_files(bare, pull.head)["billing/client.py"]
    assert len(git("log", "--format=%H", f"main..{pull.head}", cwd=bare).split()) >= 2


def pull_url(fake: FakeGitHub, number: int) -> str:
    return f"http://127.0.0.1:{fake.url.rsplit(':', 1)[1]}/acme/billing/pull/{number}"
