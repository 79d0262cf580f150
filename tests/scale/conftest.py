"""Replicas on one PostgreSQL: the throwaway cluster (``tests.postgres_support``), a database per test, and two
stores as two replicas (each its own pool and owner)."""

from __future__ import annotations

import pytest

from bot.safety.redact import masked_url
from bot.store.postgres import PostgresStore
from tests.postgres_support import Cluster, fresh_database


@pytest.fixture
async def db_url(postgres_cluster: Cluster) -> str:
    return await fresh_database(postgres_cluster)


@pytest.fixture
async def replicas(db_url):
    opened = [await PostgresStore.open(db_url, masked_url(db_url)) for _ in range(2)]
    for number, store in enumerate(opened):
        store.queue.owner = f"replica-{number}.example:{1000 + number}:1"  # two hosts, as far as the queue can tell
    yield opened
    for store in opened:
        await store.close()
