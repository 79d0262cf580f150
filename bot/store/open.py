"""Opens the store the config names. Today that is SQLite at ``storage.path``; a backend is chosen here and
nowhere else, so a second one is one branch of ``open_store``."""

from __future__ import annotations

from bot.config.sections import Config
from bot.store.protocol import Store
from bot.store.sqlite import SQLiteStore


async def open_store(config: Config) -> Store:
    """The configured store (created if new), or a ``StoreError`` saying why it cannot be used."""
    return await SQLiteStore.open(config.db_path())
