"""What the embedded server is given from the machine it runs on: threads and the context it can hold."""

from __future__ import annotations

import os

from bot.model.embedded.gguf import GgufInfo

MAX_CONTEXT = 16_384  # tokens: far beyond any prompt of the team's, at half the memory of a 32k window
MIN_CONTEXT = 2_048
FALLBACK_CONTEXT = 8_192  # for a model whose header does not tell its size
KV_SHARE_OF_MEMORY = 0.25  # of the memory free at start, what the context's cache may take
FALLBACK_MEMORY = 4 << 30


MAX_THREADS = 8  # a small model gains little past this, and each thread more is one more to wait for


def thread_count(cores: int | None = None, load: float | None = None) -> int:
    """The cores free for the server: those this process may run on, less those other work keeps busy now.

    llama.cpp's threads wait for each other at every step, so one thread more than the free cores stalls them
    all: on a 2-core machine running something else, one thread answered at 17 tokens/s where two managed 1.3."""
    cores = cores or _usable_cores()
    load = _load() if load is None else load
    return max(1, min(cores - int(load + 0.5), MAX_THREADS))


def _usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))  # a container's or taskset's limit included
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


def context_size(model: GgufInfo, available: int | None = None) -> int:
    """The context to serve: what the model was trained on, within ``MAX_CONTEXT`` and what memory allows."""
    trained = model.context_length or FALLBACK_CONTEXT
    wanted = min(trained, MAX_CONTEXT)
    if model.kv_bytes_per_token:
        memory = available if available is not None else available_memory()
        wanted = min(wanted, int(memory * KV_SHARE_OF_MEMORY) // model.kv_bytes_per_token)
    return max(MIN_CONTEXT, wanted // 1024 * 1024)


def available_memory() -> int:
    """Bytes of memory free for a new process (Linux's MemAvailable, within a cgroup's limit), or a guess."""
    found = _meminfo_available()
    limit = _cgroup_limit()
    if found and limit:
        return min(found, limit)
    return found or limit or FALLBACK_MEMORY


def _meminfo_available() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _cgroup_limit() -> int | None:
    try:
        with open("/sys/fs/cgroup/memory.max", encoding="ascii") as limit:
            text = limit.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None
