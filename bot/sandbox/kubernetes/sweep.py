"""The garbage sweep: deletes the sandbox's Pods that serve no one.

A Pod is garbage when it has finished (Succeeded or Failed: its deadline passed, it was evicted, the bot that ran it
died) or when the run it is labelled for is not running any more (the store says: it finished, or a crashed replica's
run was marked interrupted). A Pod of a run that is running, whichever replica runs it, is left alone, as is a
running Pod without a run (`sandbox run`, an eval), which its own deadline ends.

The label selector is applied again to what comes back: a server (or an emulator) that ignored it must not make
the sweep delete Pods that are not the sandbox's.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection
from typing import Any

from kubernetes_asyncio.client import CoreV1Api
from kubernetes_asyncio.client.exceptions import ApiException

from bot.sandbox.kubernetes.pods import LABEL, LABEL_RUN

FINISHED = ("Succeeded", "Failed")
# Whether a run is running now (the store's answer); None when nothing can tell, and then only finished Pods go.
RunIsRunning = Callable[[str], Awaitable[bool]]
log = logging.getLogger(__name__)


async def sweep(core: CoreV1Api, namespace: str, running: RunIsRunning | None,
                in_use: Collection[str] = ()) -> list[str]:
    """Delete the garbage Pods of ``namespace`` (never those named in ``in_use``); the names deleted."""
    listed = await core.list_namespaced_pod(namespace, label_selector=f"{LABEL}=1")
    deleted = []
    for pod in listed.items:
        name = str(pod.metadata.name)
        if name in in_use or (pod.metadata.labels or {}).get(LABEL) != "1":
            continue
        if await _garbage(pod, running):
            await delete(core, namespace, name)
            deleted.append(name)
    if deleted:
        log.info("removed %d sandbox Pod(s) no run needs: %s", len(deleted), ", ".join(deleted))
    return deleted


async def _garbage(pod: Any, running: RunIsRunning | None) -> bool:
    if pod.status is not None and pod.status.phase in FINISHED:
        return True
    run = str((pod.metadata.labels or {}).get(LABEL_RUN) or "")
    return bool(run) and running is not None and not await running(run)


async def delete(core: CoreV1Api, namespace: str, name: str) -> None:
    """Delete a Pod now (no grace: nothing in it is worth waiting for); one already gone is fine."""
    try:
        await core.delete_namespaced_pod(name, namespace, grace_period_seconds=0)
    except ApiException as error:
        if error.status != 404:
            raise
