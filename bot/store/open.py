"""Opens the store the config names: PostgreSQL when ``storage.url`` is set (replicas sharing one database),
else SQLite at ``storage.path``. A backend is chosen here and nowhere else."""

from __future__ import annotations

from bot.config.sections import Config
from bot.safety.redact import masked_url
from bot.store.migrations import Migration
from bot.store.protocol import Store


def store_location(config: Config) -> str:
    """The configured store as a message names it: the database URL with its password masked, or the file."""
    return masked_url(config.storage.url) if config.storage.url else str(config.db_path())


async def open_store(config: Config) -> Store:
    """The configured store (created, or its schema migrated, if new), or a ``StoreError`` saying why it cannot
    be used."""
    if config.storage.url:
        from bot.store.postgres import PostgresStore  # psycopg is imported only by those who use it

        return await PostgresStore.open(config.storage.url, store_location(config))
    from bot.store.sqlite import SQLiteStore

    return await SQLiteStore.open(config.db_path())


async def migrate_store(config: Config) -> list[Migration]:
    """Bring the configured database's schema up to date: the steps applied (none when it was current). SQLite
    brings its file up to date each time it opens it, so there it is that open."""
    if config.storage.url:
        from bot.store.postgres import migrate

        return await migrate(config.storage.url, store_location(config))
    store = await open_store(config)
    await store.close()
    return []
