"""Replicas on one PostgreSQL: the throwaway cluster (``tests.postgres_support``), a database per test."""

from __future__ import annotations

import pytest

from tests.postgres_support import Cluster, fresh_database


@pytest.fixture
async def db_url(postgres_cluster: Cluster) -> str:
    return await fresh_database(postgres_cluster)
