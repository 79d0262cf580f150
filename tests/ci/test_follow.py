"""Following one commit's CI without a webhook (polls whose pauses double, within the time bounds) and with one
(a nudge makes the follower look at once), through the real PyGithub against the loopback GitHub."""

import asyncio

from bot.ci.checks import CheckState
from bot.ci.follow import CiFollower
from bot.ci.nudges import CiNudges
from bot.config.sections import CiConfig
from tests.ci.test_rest import SHA, repos, rest
from tests.fakes.github_ci import Job


class CountedNudges(CiNudges):
    """The real nudges, keeping how long each wait was allowed to last."""

    def __init__(self) -> None:
        super().__init__()
        self.waits: list[float] = []

    async def wait(self, full_name: str, sha: str, within_s: float) -> bool:
        self.waits.append(within_s)
        return await super().wait(full_name, sha, within_s)


async def follow(github, config, nudges=None, changed=None):
    seen = []

    async def keep(verdict):
        seen.append(verdict.detail())

    follower = CiFollower(rest(github), nudges or CiNudges(), config)
    return await follower.follow("acme/billing", SHA, "main", changed or keep), seen


async def test_without_a_webhook_polling_backs_off_and_reaches_the_result(github):
    github.add_repo("acme/billing")
    github.ci.on_commit("acme/billing", lambda sha: [Job("tests", "success", pending_reads=4), Job("lint")])
    nudges = CountedNudges()
    config = CiConfig(poll_first_s=0.01, poll_max_s=0.04)
    outcome, seen = await follow(github, config, nudges)
    assert outcome.state is CheckState.PASSED and outcome.verdict.detail() == "2 checks passed"
    assert seen == ["1 of 2 checks done"]  # told once: the picture did not change while it waited
    assert nudges.waits == [0.01, 0.02, 0.04, 0.04]  # doubling up to poll_max_s, one pause per pending read


async def test_a_nudge_wakes_the_follower_long_before_its_next_poll(github):
    github.add_repo("acme/billing")
    github.ci.on_commit("acme/billing", lambda sha: [Job("tests", pending_reads=None)])
    nudges = CiNudges()
    looked = asyncio.Event()

    async def changed(verdict):
        looked.set()

    following = asyncio.create_task(follow(github, CiConfig(poll_first_s=600), nudges, changed))
    await asyncio.wait_for(looked.wait(), 10)
    github.ci.finish("acme/billing", SHA, "tests", "failure")
    nudges.nudge("acme/billing", SHA)  # what the webhook endpoint does on a check_run delivery
    outcome, _ = await asyncio.wait_for(following, 10)  # a poll would come after 600 s
    assert outcome.state is CheckState.FAILED and [c.name for c in outcome.verdict.failed] == ["tests"]


async def test_a_commit_no_ci_reports_on_is_left_after_no_checks_s(github):
    github.add_repo("acme/billing")
    outcome, _ = await follow(github, CiConfig(poll_first_s=0.01, poll_max_s=0.01, no_checks_s=0.05))
    assert outcome.state is None and outcome.reason.startswith("no check or status appeared on the commit")


async def test_a_required_check_that_never_appears_is_not_waited_for_past_no_checks_s(github):
    github.add_repo("acme/billing")
    github.ci.require("acme/billing", "main", ["tests"])  # e.g. a workflow a push by Actions' own token never starts
    outcome, _ = await follow(github, CiConfig(poll_first_s=0.01, poll_max_s=0.01, no_checks_s=0.05))
    assert outcome.state is None and outcome.reason.endswith("(required: tests)")


async def test_ci_that_never_ends_is_followed_only_up_to_max_wait_s(github):
    github.add_repo("acme/billing")
    github.ci.on_commit("acme/billing", lambda sha: [Job("tests", pending_reads=None)])
    outcome, seen = await follow(github, CiConfig(poll_first_s=0.01, poll_max_s=0.01, max_wait_s=0.1))
    assert outcome.state is None and outcome.reason.startswith("CI was still running after")
    assert seen == ["0 of 1 checks done"]


async def test_the_bots_own_status_does_not_end_the_wait_and_required_checks_decide(github):
    github.add_repo("acme/billing")
    github.ci.require("acme/billing", "main", ["tests"])
    github.ci.on_commit("acme/billing", lambda sha: [Job("tests", pending_reads=2), Job("optional", "failure")])
    await repos(github).set_status("acme/billing", SHA, "failure", "The sandbox's tests failed", "codegen-chat/tests")
    outcome, _ = await follow(github, CiConfig(poll_first_s=0.01, poll_max_s=0.01))
    assert outcome.state is CheckState.PASSED and [c.name for c in outcome.verdict.counted] == ["tests"]
