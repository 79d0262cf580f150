"""``codegen-chat run`` asks the model first: the Docker SDK and PyGithub are imported when they are needed
(the sandbox while the Planner writes, PyGithub at the check-in), never before the first model request; the
chat platforms' SDKs and packages (Slack, Discord, the web server) not at all, since the terminal needs none;
nor aiohttp (it serves the health checks of ``serve``; the openai SDK would import it for an optional transport
the client does not use). The openai SDK is imported: it sends the model requests. The command's modules load with
the cyclic garbage collector paused, and it runs with the collector on."""

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from tests.fakes import team_script as s
from tests.fakes.openai_server import FakeOpenAI, Reply

ROOT = Path(__file__).resolve().parents[2]
LATER = ("docker", "github")
NEVER = ("slack_bolt", "slack_sdk", "discord", "starlette", "uvicorn", "aiohttp")
# and no package of a chat platform, nor the health checks' server
NOT_NEEDED = ("adapters.slack", "adapters.discord", "adapters.web", "bot.health.http")


async def imports_before_the_first_model_request(tmp_path: Path, *args: str) -> list[str]:
    """The packages the command imported before it sent its first chat request, in order."""
    async with FakeOpenAI() as server:
        server.script("planner", Reply(s.PLAN, stall_after=0))  # the run waits there until it is killed
        config = tmp_path / "config.toml"
        config.write_text(f'[storage]\npath = "{tmp_path}/store.sqlite3"\n')
        env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PYTHONPATH": str(ROOT), "NO_COLOR": "1",
               "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test-0123456789abcdef",
               "GITHUB_TOKEN": "ghp_test0123456789", "CODEGEN_CONFIG": str(config), "CODEGEN_LOG_LEVEL": "DEBUG"}
        # -X importtime writes each import to stderr as it happens, in order with the client's own log
        # line written just before a request goes out.
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-X", "importtime", "-m", "codegen_chat", *args, cwd=tmp_path, env=env,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
        imported: list[str] = []
        try:
            while line := (await asyncio.wait_for(child.stderr.readline(), 60)).decode():
                if "sending POST chat/completions" in line:
                    return imported
                if line.startswith("import time:") and "|" in line:
                    imported.append(line.rsplit("|", 1)[1].strip())
        finally:
            child.kill()
            await child.wait()
    raise AssertionError("the command never sent a model request")


async def test_run_reaches_the_model_before_importing_the_docker_sdk_or_pygithub(tmp_path):
    imported = await imports_before_the_first_model_request(tmp_path, "run", "say hi", "--out", str(tmp_path / "out"))
    needed = ("openai", "bot.model.http", "codegen_chat.build")
    assert all(name in imported for name in needed), imported[-20:]  # what it needs is there
    early = [name for name in imported if name.split(".")[0] in LATER]
    assert early == [], imported[imported.index(early[0]) - 30:imported.index(early[0]) + 3]


async def test_run_imports_no_chat_platform_no_sdk_of_one_nor_a_web_server_before_the_first_model_request(tmp_path):
    imported = await imports_before_the_first_model_request(tmp_path, "run", "say hi", "--out", str(tmp_path / "out"))
    assert "adapters.terminal" in imported, imported[-20:]
    chat = [name for name in imported if name.split(".")[0] in NEVER or name.startswith(NOT_NEEDED)]
    assert chat == [], chat


# Notes, as the installed command starts, whether the collector ran while the openai SDK loaded, then whether it
# is on (and start-up's objects are left out of its passes) once the command is done.
WATCHED_START = """
import gc, importlib.abc, sys
seen = {}
class Watch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "openai":
            seen["openai"] = gc.isenabled()
sys.meta_path.insert(0, Watch())
from codegen_chat.__main__ import main
sys.argv = ["codegen-chat", "history"]
code = main()
print(code, seen["openai"], gc.isenabled(), gc.get_freeze_count() > 0)
"""


def test_the_command_loads_with_the_collector_paused_and_runs_with_it_on(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text(f'[storage]\npath = "{tmp_path}/store.sqlite3"\n')
    done = subprocess.run([sys.executable, "-c", WATCHED_START], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PYTHONPATH": str(ROOT),
                               "CODEGEN_CONFIG": str(config)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-4:] == ["0", "False", "True", "True"], done.stdout
