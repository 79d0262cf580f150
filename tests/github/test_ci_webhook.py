"""A webhook's CI delivery reaching the CI follower: a run started by a comment on a pull request pushes, its
commit's check stays in progress, and only the ``check_run`` delivery (no polling within the test) makes the
follower read GitHub again and show CI green in the pull request's status comment."""

from __future__ import annotations

from adapters.github.events import MARKER
from tests.conftest import with_changes
from tests.fakes.github_ci import Job
from tests.fakes.github_server import FakeGitHub
from tests.github.conftest import AUTHOR, PR, REPO, eventually, finals, script_team


async def test_a_check_run_delivery_wakes_the_follower_of_the_pushed_commit(github_config, start_bot,
                                                                           github: FakeGitHub, pull_request,
                                                                           model_server):
    github.ci.on_commit(REPO, lambda sha: [Job("tests", pending_reads=None)])  # in progress until finished
    github.ci.require(REPO, "feature", ["tests"])
    script_team(model_server)
    config = with_changes(github_config, ci={"poll_first_s": 600.0, "poll_max_s": 600.0})  # no polling in the test
    bot = await start_bot(config, follow_ci=True)
    await bot.comment(github.add_issue_comment(REPO, PR, AUTHOR, "@codegen-chat add retries to billing/client.py"))
    await eventually(lambda: finals(github.conversation(REPO, PR)))
    (sha,) = await eventually(lambda: [key[1] for key in github.ci.jobs if key[0] == REPO.lower()])
    status = next(c for c in github.conversation(REPO, PR) if MARKER in c.body)
    await eventually(lambda: "CI" in status.body)
    assert "✅ CI" not in status.body  # followed, not yet green
    github.ci.finish(REPO, sha, "tests", "success")
    delivered = await bot.deliver("check_run", {"action": "completed", "repository": {"full_name": REPO},
                                                "check_run": {"head_sha": sha, "name": "tests", "status": "completed"}})
    assert delivered[0] == 202
    await eventually(lambda: "✅ CI" in status.body)
