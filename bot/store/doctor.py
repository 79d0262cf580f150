"""What ``codegen-chat doctor`` says about the store: it opens (its schema migrated), reads back whole, and takes
writes, whichever backend the config names."""

from __future__ import annotations

from bot.config.doctor_types import CheckResult
from bot.config.sections import Config, Secrets
from bot.store.errors import StoreError
from bot.store.open import open_store, store_location


async def store_checks(config: Config, secrets: Secrets) -> list[CheckResult]:
    del secrets  # the store's password is in its URL or PGPASSWORD, which libpq reads itself
    try:
        store = await open_store(config)
        try:
            await store.check()
        finally:
            await store.close()
    except StoreError as error:
        problem, _, fix = str(error).partition("; ")
        return [CheckResult("store", False, problem, fix)]
    kind = "PostgreSQL at " if config.storage.url else ""
    return [CheckResult("store", True, f"{kind}{store_location(config)} opens, reads back whole and takes writes")]
