"""Who owns a running run: the host, pid and start time of the process running it, so that after a crash the
next start on that host can tell the owner is gone (another host's runs are judged by their heartbeat, where
the store keeps one: ``bot.store.postgres``)."""

from __future__ import annotations

import socket

from bot.process import liveness as processes


def this_process() -> str:
    """This host, pid and process start time: enough to tell, after a crash, that the owner is gone."""
    pid, started = processes.this_process()
    return f"{socket.gethostname()}:{pid}:{started}"


def gone_from(owner: str, host: str) -> bool:
    """Whether the process that owned a run on this host has ended (another host's runs are its own to judge)."""
    owner_host, pid, started = [*owner.split(":"), "", "", ""][:3]
    return owner_host == host and processes.gone(pid, started)


def on_host(owner: str, host: str) -> bool:
    """Whether the process that owns a run is (or was) on ``host``."""
    return owner.split(":", 1)[0] == host
