"""What ``codegen-chat doctor`` says about the store: it opens, reads back whole, and takes writes."""

from __future__ import annotations

from bot.config.doctor_types import CheckResult
from bot.config.sections import Config, Secrets
from bot.store.errors import StoreError
from bot.store.open import open_store


async def store_checks(config: Config, secrets: Secrets) -> list[CheckResult]:
    del secrets  # the store needs none
    path = config.db_path()
    try:
        store = await open_store(config)
        try:
            await store.check()
        finally:
            await store.close()
    except StoreError as error:
        problem, _, fix = str(error).partition("; ")
        return [CheckResult("store", False, problem, fix)]
    return [CheckResult("store", True, f"{path} opens, reads back whole and takes writes")]
