"""The embedded model on this machine: what installing it costs, how soon it answers, how fast it writes, and the
README's example task on it end to end.

    python -m benchmarks.embedded_bench [--no-cold] [--no-task]

Run it with a Python that has the ``local`` extra (``pip install -e '.[local]'``). Prints figures side by side;
asserts nothing about time.

1. Installing the extra into a fresh environment that already has the project: cold (``--no-cache-dir``: pip
   downloads and compiles llama-cpp-python) and from pip's cache (the wheel it built before).
2. The server from its start (``EmbeddedServer.start``) to the first token of a reply.
3. Tokens per second of a Programmer reply: the task and a plan in, code out (up to 512 tokens), streamed.
4. ``codegen-chat run`` on the README's example task with the default team, no key and no endpoint set: wall
   time and the status it ended with.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from openai import AsyncOpenAI

from bot.model.embedded.endpoint import settings_for
from bot.model.embedded.server import PORTABLE_BUILD, EmbeddedServer, server_version
from bot.model.embedded.weights import default_model, default_model_path, fetch_default

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache"
README_TASK = ("Write a python function that finds all properties with a key of 'intf' within all nested child "
               "objects and returns a list of all key value pairs that match")
PLAN = ("1. Write find_intf(obj) in main.py: walk dicts and lists recursively.\n2. Collect (key, value) for every "
        "key 'intf' at any depth, in the order found.\n3. Return the list; non-container values are skipped.")


def _install_time(cold: bool) -> float:
    with tempfile.TemporaryDirectory(prefix="bench-venv-") as folder:
        venv = Path(folder) / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
        subprocess.run([*pip, "-e", str(ROOT)], check=True, capture_output=True)  # the project, not timed
        started = time.monotonic()
        subprocess.run([*pip, *(["--no-cache-dir"] if cold else []), "-e", f"{ROOT}[local]"], check=True,
                       capture_output=True, env={**os.environ, "CMAKE_ARGS": PORTABLE_BUILD})  # as the README's
        return time.monotonic() - started


async def _server_figures() -> tuple[float, float, float, int, str]:
    """(start to first token s, Programmer tokens/s, its time to first token s, tokens, settings)."""
    model_path = default_model_path(CACHE)
    if not model_path.exists():
        fetch_default(model_path, print)
    model = default_model(CACHE, print)
    settings = settings_for(model)
    with tempfile.TemporaryDirectory() as folder:
        started = time.monotonic()
        server = await EmbeddedServer.start(model, settings, Path(folder) / "server.log")
        try:
            client = AsyncOpenAI(api_key="not-needed", base_url=server.base_url, max_retries=0, timeout=600)
            first, _, _ = await _stream(client, model.alias, [{"role": "user", "content": "Say hello."}], 8)
            to_first = first - started
            messages = [{"role": "system", "content": "You are the Programmer of a team. Write the code the plan "
                                                      "asks for, as one fenced block named by its file."},
                        {"role": "user", "content": f"Task: {README_TASK}\n\nPlan:\n{PLAN}"}]
            asked = time.monotonic()
            first, last, tokens = await _stream(client, model.alias, messages, 512)
            await client.close()
        finally:
            await server.stop()
    rate = (tokens - 1) / (last - first) if tokens > 1 and last > first else 0.0
    return to_first, rate, first - asked, tokens, f"context {settings.context:,}, {settings.threads} thread(s)"


async def _stream(client: AsyncOpenAI, model: str, messages: list, max_tokens: int) -> tuple[float, float, int]:
    first = last = 0.0
    tokens = 0
    stream = await client.chat.completions.create(model=model, messages=messages, max_tokens=max_tokens,
                                                  stream=True, temperature=0.1)
    async for chunk in stream:  # llama-cpp-python streams one token a chunk
        if chunk.choices and chunk.choices[0].delta.content:
            last = time.monotonic()
            first = first or last
            tokens += 1
    return first, last, tokens


def _readme_task() -> tuple[float, str]:
    model_path = default_model_path(CACHE)
    with tempfile.TemporaryDirectory(prefix="bench-run-") as folder:
        home = Path(folder)
        data = home / "data"
        target = default_model_path(data)
        target.parent.mkdir(parents=True)
        os.link(model_path, target)
        config = home / "config.toml"
        config.write_text(f'[storage]\npath = "{data / "codegen.sqlite3"}"\n')
        env = {"PATH": os.environ["PATH"], "HOME": str(home), "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "codegen_chat", "--config", str(config), "run", README_TASK,
                               "--out", str(home / "out")], env=env, cwd=home, capture_output=True, text=True)
        wall = time.monotonic() - started
    found = re.search(r"Run \w+: (\w+)(.*)", done.stdout)
    tests = re.findall(r"Tests \(\w+\): (.*)", done.stdout)
    status = (found.group(1) + found.group(2)[:80]) if found else f"exit {done.returncode}: {done.stderr[-200:]}"
    return wall, f"{status} (test runs: {len(tests)}; last: {tests[-1][:60] if tests else 'none'})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-cold", action="store_true", help="skip the cold install (it compiles llama.cpp)")
    parser.add_argument("--no-task", action="store_true", help="skip the README task")
    args = parser.parse_args()
    if server_version() is None:
        raise SystemExit("the local extra is not installed in this Python: pip install -e '.[local]'")
    rows: list[tuple[str, str]] = [("machine", f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f} at start")]
    if not args.no_cold:
        rows.append(("install .[local], cold (compiles)", f"{_install_time(cold=True):.0f} s"))
    rows.append(("install .[local], from pip's cache", f"{_install_time(cold=False):.1f} s"))
    to_first, rate, prompt_s, tokens, settings = asyncio.run(_server_figures())
    rows += [("server start to first token", f"{to_first:.1f} s ({settings})"),
             ("Programmer reply", f"{rate:.1f} tokens/s ({tokens} tokens; first after {prompt_s:.1f} s)")]
    if not args.no_task:
        wall, status = _readme_task()
        rows.append(("README task, default team", f"{wall / 60:.1f} min: {status}"))
    width = max(len(name) for name, _ in rows)
    for name, figure in rows:
        print(f"{name:<{width}}  {figure}")


if __name__ == "__main__":
    main()
