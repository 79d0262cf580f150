"""Replicas sharing one PostgreSQL store: GitHub's redelivery of a comment to another replica starts no second
run, and a pull request's runs for the day are counted across them."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from bot.safety.redact import masked_url
from bot.store.postgres import PostgresStore
from tests.conftest import with_changes
from tests.fakes.github_server import FakeGitHub
from tests.fakes.loopback import free_port
from tests.github.conftest import AUTHOR, PR, REPO, eventually, finals, script_team
from tests.postgres_support import fresh_database

ASK = "@codegen-chat add retries to billing/client.py"


@pytest.fixture
async def replicas(postgres_cluster, github_config, start_bot):
    url = await fresh_database(postgres_cluster)
    stores = [await PostgresStore.open(url, masked_url(url)) for _ in range(2)]
    config = dataclasses.replace(github_config, storage=dataclasses.replace(github_config.storage, url=url))

    async def start(**github: object):
        return [await start_bot(with_changes(config, github={"port": free_port(), **github}), own_store=store)
                for store in stores]

    yield start
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


async def test_the_runs_of_the_day_are_counted_across_replicas(replicas, github: FakeGitHub, pull_request,
                                                               model_server):
    script_team(model_server, runs=2)
    first, second = await replicas(runs_per_pr_per_day=1)
    await first.comment(github.add_issue_comment(REPO, PR, AUTHOR, ASK))
    await eventually(lambda: finals(github.conversation(REPO, PR)))
    await second.comment(github.add_issue_comment(REPO, PR, AUTHOR, "@codegen-chat also log each retry"))
    await eventually(lambda: [c for c in github.conversation(REPO, PR) if "runs for today" in c.body])
    assert len([r for r in model_server.requests if r.agent == "planner"]) == 1
