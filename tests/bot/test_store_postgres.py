"""The PostgreSQL store's own behaviour, on a throwaway server (tests/postgres_support.py): numbered migrations
applied once (also by `codegen-chat store migrate`), redeliveries deduplicated across replicas, a dead owner on
another host told by its stopped heartbeat, a server that refuses or restarts, and the URL's password masked.
The contract both stores keep is in test_store.py."""

import asyncio
import os
import subprocess
import sys

import psycopg
import pytest

from agents.events import Notice, TurnFinished
from bot.config.sections import Config, ConfigError, Secrets, StorageConfig, load_config
from bot.safety.redact import Redactor, masked_url
from bot.store.doctor import store_checks
from bot.store.errors import StoreError
from bot.store.migrations import LATEST, MIGRATIONS
from bot.store.open import open_store, store_location
from bot.store.postgres import OWNER_LOST_AFTER, PostgresStore, migrate
from tests.postgres_support import fresh_database


@pytest.fixture
async def url(postgres_cluster):
    return await fresh_database(postgres_cluster)


async def applied_versions(url):
    async with await psycopg.AsyncConnection.connect(url) as db:
        cursor = await db.execute("SELECT version FROM schema_migrations ORDER BY version")
        return [row[0] for row in await cursor.fetchall()]


async def test_a_new_database_gets_every_migration_once_and_a_second_open_applies_none(url):
    store = await PostgresStore.open(url, masked_url(url))
    await store.close()
    assert await applied_versions(url) == [m.version for m in MIGRATIONS]
    assert await migrate(url, masked_url(url)) == []
    store = await PostgresStore.open(url, masked_url(url))
    await store.check()
    await store.close()


async def test_replicas_starting_together_apply_each_migration_once(url):
    applied = await asyncio.gather(*(migrate(url, masked_url(url)) for _ in range(4)))
    assert sorted(step.version for steps in applied for step in steps) == [m.version for m in MIGRATIONS]
    assert await applied_versions(url) == [m.version for m in MIGRATIONS]


async def test_a_database_migrated_by_a_newer_version_is_refused_with_what_to_do(url):
    await migrate(url, masked_url(url))
    async with await psycopg.AsyncConnection.connect(url) as db:
        await db.execute("INSERT INTO schema_migrations VALUES (%s, 'from the future', 0)", (LATEST + 1,))
    with pytest.raises(StoreError, match=rf"its schema is at migration {LATEST + 1}, newer than this version of "
                                         r"codegen-chat knows .*; upgrade codegen-chat"):
        await PostgresStore.open(url, masked_url(url))


def test_store_migrate_applies_what_is_missing_and_then_says_it_is_up_to_date(url, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\nurl = "{url}"\n')

    def migrate_command():
        return subprocess.run([sys.executable, "-m", "codegen_chat.cli", "--config", str(config), "store", "migrate"],
                              cwd=os.getcwd(), capture_output=True, text=True, timeout=60)

    first = migrate_command()
    assert first.returncode == 0, first.stderr
    assert [line.split(":")[0] for line in first.stdout.splitlines()[:-1]] == [
        f"applied migration {m.version}" for m in MIGRATIONS]
    again = migrate_command()
    assert again.returncode == 0 and again.stdout.splitlines() == [
        f"{masked_url(url)} is up to date (schema migration {LATEST})"]
    password = url.split(":")[2].split("@")[0]
    assert password not in first.stdout + first.stderr + again.stdout + again.stderr


async def test_every_replica_sees_a_redelivered_event_once(url):
    first, second = [await PostgresStore.open(url, masked_url(url)) for _ in range(2)]
    try:
        sightings = await asyncio.gather(*(store.first_sighting("slack:Ev1") for store in [first, second] * 10))
        assert sightings.count(True) == 1
        assert await second.first_sighting("slack:Ev2") and not await first.first_sighting("slack:Ev2")
    finally:
        await first.close()
        await second.close()


async def test_runs_of_an_owner_on_another_host_are_interrupted_once_its_heartbeat_stops(url):
    beat = 0.1
    elsewhere = await PostgresStore.open(url, masked_url(url), heartbeat_s=beat)
    elsewhere.owner = "another-host:4242:123.0"  # a replica on another machine: its pid says nothing here
    here = await PostgresStore.open(url, masked_url(url), heartbeat_s=beat)
    try:
        conversation = await elsewhere.conversation("slack", "C1/1")
        await elsewhere.create_run("r1", conversation, "a task", "ann", [])
        await elsewhere.record(TurnFinished("r1", agent="planner", round=0, text="a plan worth keeping"))
        await asyncio.sleep(beat * OWNER_LOST_AFTER * 2)
        assert await here.mark_interrupted() == 0  # its owner beats: a live replica keeps its runs
        await elsewhere.close()  # the other replica dies: no more heartbeats
        await asyncio.sleep(beat * OWNER_LOST_AFTER * 2)
        assert await here.mark_interrupted() == 1
        record = await here.run("r1")
        assert record.summary.status == "interrupted" and record.turns[0].text == "a plan worth keeping"
        assert [i.id for i in await here.untold_interrupted("slack")] == ["r1"]
    finally:
        await here.close()


async def test_refusals_are_one_sentence_that_names_the_database_without_its_password(postgres_cluster, url):
    database = url.rsplit("/", 1)[1]
    cases = [
        (postgres_cluster.url(database, password="wrong-password"), "the server refused the password; check the "
                                                                    "password in storage.url"),
        (postgres_cluster.url("no_such_database"), "the database does not exist; create it"),
        (f"postgresql://codegen:{postgres_cluster.password}@127.0.0.1:1/x", "the database server cannot be reached"),
    ]
    for bad_url, expected in cases:
        with pytest.raises(StoreError) as caught:
            await PostgresStore.open(bad_url, masked_url(bad_url))
        message = str(caught.value)
        assert message.startswith(f"could not open {masked_url(bad_url)}: ") and expected in message, message
        assert "\n" not in message and postgres_cluster.password not in message and "wrong-password" not in message


async def test_a_server_restart_fails_the_writes_meanwhile_and_the_store_works_again_after(postgres_cluster, url):
    store = await PostgresStore.open(url, masked_url(url))
    try:
        conversation = await store.conversation("terminal", "t1")
        await store.create_run("r1", conversation, "a task", "ann", [])
        postgres_cluster.stop()
        try:
            with pytest.raises(StoreError, match=r"could not save the run to postgresql://codegen:\*\*\*@.*; what was "
                                                 "saved before is kept") as caught:
                await store.record(Notice("r1", "while the server is down"))
            assert "\n" not in str(caught.value)
        finally:
            postgres_cluster.start()
        await store.record(Notice("r1", "after the restart"))
        assert [body for _, body in (await store.run("r1")).notes] == ['{"text": "after the restart"}']
    finally:
        await store.close()


async def test_doctor_checks_the_configured_database(postgres_cluster, url):
    config = Config(storage=StorageConfig(url=url))
    store = await open_store(config)
    assert isinstance(store, PostgresStore) and store.location == masked_url(url)
    await store.close()
    [result] = await store_checks(config, Secrets())
    assert result.ok and result.detail == f"PostgreSQL at {masked_url(url)} opens, reads back whole and takes writes"
    refused = Config(storage=StorageConfig(url=postgres_cluster.url(url.rsplit("/", 1)[1], password="nope")))
    [result] = await store_checks(refused, Secrets())
    assert not result.ok and "refused the password" in result.detail and "nope" not in result.detail + result.fix


def test_the_database_url_s_password_is_masked_and_its_user_name_is_not(tmp_path):
    url = "postgresql://codegen:s3cret%21pw@db.internal:5432/codegen?sslmode=require"
    config = Config(storage=StorageConfig(url=url))
    assert store_location(config) == "postgresql://codegen:***@db.internal:5432/codegen?sslmode=require"
    redact = Redactor(Secrets().for_config(config).values())
    shown = redact(f"connecting to {url} as codegen with s3cret!pw")
    assert "s3cret" not in shown and "codegen" in shown
    no_password = Config(storage=StorageConfig(url="postgresql://codegen@db.internal/codegen"))
    assert Redactor(Secrets(pgpassword="from-env-pw").for_config(no_password).values())(
        "codegen uses from-env-pw") == "codegen uses [redacted]"


def test_a_storage_url_that_is_not_postgresql_names_the_key_and_not_the_value(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text('[storage]\nurl = "mysql://root:hunter2@db/codegen"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert "storage.url" in str(caught.value) and "postgresql://" in str(caught.value)
    assert "hunter2" not in str(caught.value)
