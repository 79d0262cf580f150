"""Replicas sharing one PostgreSQL store: GitHub's redelivery of a comment to another replica starts no second
run, a comment a replica acknowledged and stopped before it took is taken by another, a pull request's runs for the
day are counted across them, and "@codegen-chat stop" stops the pull request's run whichever replica runs it (or
while it waits)."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from github import Auth

from adapters.github.api import PullRequestApi
from adapters.github.events import MARKER, comment_of
from adapters.github.handlers import GitHubBot
from bot.safety.redact import masked_url
from bot.store.postgres import PostgresStore
from tests.conftest import with_changes
from tests.fakes.github_server import FakeGitHub
from tests.fakes.loopback import free_port
from tests.fakes.openai_server import Reply
from tests.github.conftest import AUTHOR, PR, README, REPO, RunningBot, eventually, finals, script_team
from tests.postgres_support import fresh_database
from tests.repos.conftest import TOKEN
from tests.repos.test_pull_request_docker import CODE, PLAN, TESTS

ASK = "@codegen-chat add retries to billing/client.py"


@pytest.fixture
async def replicas(postgres_cluster, github_config, start_bot):
    url = await fresh_database(postgres_cluster)
    stores = [await PostgresStore.open(url, masked_url(url)) for _ in range(2)]
    config = dataclasses.replace(github_config, storage=dataclasses.replace(github_config.storage, url=url))

    bots: list[RunningBot] = []

    async def start(durable: bool = False, limits: dict[str, object] | None = None,
                    storage: dict[str, object] | None = None, **github: object) -> list[RunningBot]:
        """Two replicas; ``durable``: their runs are jobs on the shared queue, as ``serve`` makes them."""
        bots.extend([await start_bot(with_changes(config, github={"port": free_port(), **github},
                                                  storage={"heartbeat_s": 0.3, **(storage or {})},
                                                  limits=limits or {}),
                                     own_store=store, durable=durable)
                     for store in stores])
        return bots

    yield start
    for bot in bots:
        await bot.stop()  # before their stores close under them
    for store in stores:
        await store.close()


async def test_a_delivery_seen_by_one_replica_is_dropped_by_the_other(replicas, github: FakeGitHub, pull_request,
                                                                    model_server):
    script_team(model_server, runs=2)
    first, second = await replicas()
    comment = github.add_issue_comment(REPO, PR, AUTHOR, ASK)
    assert (await first.comment(comment, delivery="one-delivery"))[0] == 202
    assert await second.comment(comment, delivery="one-delivery") == (200, "Already delivered.")
    assert (await second.comment(comment, delivery="another-delivery"))[0] == 202  # the same comment all the same
    await eventually(lambda: finals(github.conversation(REPO, PR)))
    await asyncio.sleep(0.3)
    assert len(finals(github.conversation(REPO, PR))) == 1
    assert len([r for r in model_server.requests if r.agent == "planner"]) == 1


async def test_a_comment_a_replica_acknowledged_and_stopped_before_taking_is_taken_by_another(
        replicas, github: FakeGitHub, pull_request, model_server):
    """GitHub never sends a delivery again by itself once it was answered: the replica keeps it first."""
    script_team(model_server, runs=2)
    first, second = await replicas(durable=True, storage={"owner_lost_after_s": 1.0})
    github.stall(5)  # the first replica's look at who asks hangs...
    assert (await first.comment(github.add_issue_comment(REPO, PR, AUTHOR, ASK)))[0] == 202
    await eventually(lambda: [r for r in github.requests if r.path.endswith(f"/collaborators/{AUTHOR}/permission")])
    await first.stop()  # ...and it stops there, after GitHub was told the delivery arrived
    (final,) = await eventually(lambda: finals(github.conversation(REPO, PR)), within=30)
    assert final.body.startswith("✅ Passed:"), final.body
    await asyncio.sleep(1.5)  # another round of looking for untaken comments starts nothing more
    assert len(finals(github.conversation(REPO, PR))) == 1 and planner_calls(model_server) == 1


async def test_the_runs_of_the_day_are_counted_across_replicas(replicas, github: FakeGitHub, pull_request,
                                                               model_server):
    script_team(model_server, runs=2)
    first, second = await replicas(runs_per_pr_per_day=1)
    await first.comment(github.add_issue_comment(REPO, PR, AUTHOR, ASK))
    await eventually(lambda: finals(github.conversation(REPO, PR)))
    await second.comment(github.add_issue_comment(REPO, PR, AUTHOR, "@codegen-chat also log each retry"))
    await eventually(lambda: [c for c in github.conversation(REPO, PR) if "runs for today" in c.body])
    assert len([r for r in model_server.requests if r.agent == "planner"]) == 1


def planner_calls(model_server) -> int:
    return len([r for r in model_server.requests if r.agent == "planner"])


def script_paused_team(model_server) -> None:
    """A team whose planner is still thinking (until ``resume``) when the stop comes."""
    model_server.script("planner", Reply(PLAN, pause_after=5), PLAN)
    for role, reply in {"programmer": CODE, "tester": TESTS, "optimizer": "VERDICT: APPROVE", "checkin": README}.items():
        model_server.script(role, reply, reply)


async def test_a_stop_delivered_to_the_replica_not_running_the_job_stops_it(replicas, github: FakeGitHub,
                                                                           pull_request, model_server):
    script_paused_team(model_server)
    bots = await replicas(durable=True)
    await bots[0].comment(github.add_issue_comment(REPO, PR, AUTHOR, ASK))
    await eventually(lambda: planner_calls(model_server) == 1)
    (owner,) = [bot for bot in bots if bot.service.active_run("github", f"{REPO}#{PR}")]  # it runs the job
    (other,) = [bot for bot in bots if bot is not owner]
    await other.comment(github.add_issue_comment(REPO, PR, AUTHOR, "@codegen-chat stop"))
    (final,) = await eventually(lambda: finals(github.conversation(REPO, PR)), within=30)
    model_server.resume.set()
    assert final.body.startswith("⏹️ Stopped:"), final.body


async def test_a_stop_reaches_a_job_still_waiting_in_the_queue(replicas, github: FakeGitHub, pull_request,
                                                              model_server):
    script_paused_team(model_server)
    github.add_pull_request(REPO, PR + 1, "feature")
    # one run at a time across the replicas: the second pull request's waits for the first's
    bots = await replicas(durable=True, limits={"max_concurrent_runs": 1})
    await bots[0].comment(github.add_issue_comment(REPO, PR, AUTHOR, ASK))
    await eventually(lambda: planner_calls(model_server) == 1)
    await bots[1].comment(github.add_issue_comment(REPO, PR + 1, AUTHOR, ASK))
    await eventually(lambda: [c for c in github.conversation(REPO, PR + 1) if MARKER in c.body])  # its status
    await bots[1].comment(github.add_issue_comment(REPO, PR + 1, AUTHOR, "@codegen-chat stop"))
    (final,) = await eventually(lambda: finals(github.conversation(REPO, PR + 1)), within=30)
    assert final.body.startswith("⏹️ Stopped:"), final.body
    assert planner_calls(model_server) == 1  # it never started
    assert not finals(github.conversation(REPO, PR))  # the first goes on
    model_server.resume.set()
    (first,) = await eventually(lambda: finals(github.conversation(REPO, PR)), within=30)
    assert first.body.startswith("✅ Passed:"), first.body


async def test_a_comment_taken_again_after_a_replica_stopped_spends_no_second_run_nor_says_twice(
        replicas, github: FakeGitHub, pull_request, model_server, github_config):
    script_team(model_server, runs=2)
    first, _ = await replicas(durable=True, runs_per_pr_per_day=2)
    # A replica took these comments and stopped before noting them handled: another takes each again (replayed).
    config = with_changes(github_config, github={"runs_per_pr_per_day": 2})
    bot = GitHubBot(first.service, config, PullRequestApi(config.checkin, Auth.Token(TOKEN)))

    def arrived(comment):
        return comment_of(*github.comment_payload(comment))

    nothing = arrived(github.add_issue_comment(REPO, PR, AUTHOR, "@codegen-chat address the review"))
    ask = arrived(github.add_issue_comment(REPO, PR, AUTHOR, ASK))
    for comment in (nothing, ask):
        await bot.on_comment(comment)
        await bot.on_comment(comment, replayed=True)
    await bot.on_comment(arrived(github.add_issue_comment(REPO, PR, AUTHOR, "@codegen-chat also log each retry")))
    await eventually(lambda: len(finals(github.conversation(REPO, PR))) == 2)  # the day's second run is there

    said = [c.body for c in github.conversation(REPO, PR) if MARKER in c.body]
    assert not any("runs for today" in body for body in said)
    assert sum(body.startswith("No review thread") for body in said) == 1
