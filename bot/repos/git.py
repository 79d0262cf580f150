"""git itself, run on the host with nothing of the repository's able to run: the one way the bot calls git.

Every call gets a minimal environment and the configuration below through ``GIT_CONFIG_*`` (never the
command line, never a file): no system or global config, no hooks, no filter or LFS drivers, no submodules,
no credential helpers or prompts, only the transports the run needs, and fsck of everything fetched (git then
refuses trees with ``..``, ``.git`` or other hostile paths). The token travels as an HTTP header scoped to the
git host's URL, so it is in no URL, no file, no command line and no log line.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import os
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.repos.errors import RepoError, TooLarge

log = logging.getLogger(__name__)

BOT_NAME = "codegen-chat"
BOT_EMAIL = "codegen-chat@users.noreply.github.com"
OUTPUT_LIMIT = 4_000  # characters of git's error output kept for a sentence

SAFE_CONFIG: Mapping[str, str] = {
    "core.hooksPath": "/dev/null",  # no hook of any kind runs (pre-push, post-checkout, reference-transaction...)
    "core.symlinks": "false",
    "core.fsmonitor": "false",
    "core.protectNTFS": "true",
    "core.protectHFS": "true",
    "credential.helper": "",
    "submodule.recurse": "false",
    "filter.lfs.required": "false",
    "filter.lfs.smudge": "",
    "filter.lfs.process": "",
    "transfer.fsckObjects": "true",
    "fetch.fsckObjects": "true",
    "protocol.allow": "never",
    "protocol.https.allow": "always",
    "protocol.http.allow": "always",  # an Enterprise host or a loopback server on plain http, if configured so
    "commit.gpgSign": "false",
    "advice.detachedHead": "false",
    "init.defaultBranch": "main",
    "user.name": BOT_NAME,
    "user.email": BOT_EMAIL,
}


# A local folder's git answers a fetch or a push in that folder, and git clears the GIT_CONFIG_* settings above
# for it (they are the client's): these commands give it the settings that matter there. Fetching, it serves the
# partial clone's filters (without them every blob would come, however large); pushed to, it runs none of the
# folder's hooks (pre-receive, update, post-receive...) and never updates a checked-out branch's work tree
# (``receive.denyCurrentBranch = updateInstead`` would check files out there, through the folder's filters).
# receive-pack also lists the refs of the repositories the folder borrows objects from (objects/info/alternates)
# with whatever command ``core.alternateRefsCommand`` names: ``true`` lists none, and runs nothing of the folder's.
LOCAL_UPLOAD_PACK = "git -c uploadpack.allowFilter=true -c uploadpack.allowAnySHA1InWant=true upload-pack"
LOCAL_RECEIVE_PACK = ("git -c core.hooksPath=/dev/null -c core.fsmonitor=false -c core.alternateRefsCommand=true "
                      "-c receive.denyCurrentBranch=refuse -c receive.autogc=false receive-pack")


@dataclass(frozen=True)
class GitAccess:
    """How git reaches a repository: its URL (no credentials in it) and the token for the host, if any."""

    url: str
    token: str = ""
    local: bool = False  # a folder on this machine (file://)

    def config(self) -> dict[str, str]:
        config = dict(SAFE_CONFIG)
        if self.local:
            config["protocol.file.allow"] = "always"
            config["remote.origin.uploadpack"] = LOCAL_UPLOAD_PACK
            config["remote.origin.receivepack"] = LOCAL_RECEIVE_PACK
        if self.token:
            basic = base64.b64encode(f"x-access-token:{self.token}".encode()).decode()
            host = self.url.split("/", 3)
            scope = "/".join(host[:3]) + "/"  # scheme://host/: the header goes nowhere else, redirects included
            config[f"http.{scope}.extraHeader"] = f"Authorization: Basic {basic}"
        return config

    def clone_options(self) -> list[str]:
        """``git clone`` names its upload-pack itself (it does not read ``remote.origin.uploadpack``)."""
        return ["--upload-pack", LOCAL_UPLOAD_PACK] if self.local else []


@dataclass(frozen=True)
class Completed:
    code: int
    stdout: bytes
    stderr: str


class Git:
    """Runs git in ``home`` (an empty folder of the run's own, as HOME) for one repository's access."""

    def __init__(self, access: GitAccess, home: Path, timeout_s: float) -> None:
        self._access, self._home, self._timeout_s = access, home, timeout_s

    @property
    def access(self) -> GitAccess:
        return self._access

    def environment(self) -> dict[str, str]:
        config = self._access.config()
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self._home),
            "XDG_CONFIG_HOME": str(self._home / ".config"), "LANG": "C", "LC_ALL": "C",
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0",
            "GIT_ASKPASS": "/bin/false", "SSH_ASKPASS": "/bin/false", "GIT_LFS_SKIP_SMUDGE": "1",
            "GIT_ALLOW_PROTOCOL": "file" if self._access.local else "https:http",
            "GIT_PROTOCOL_FROM_USER": "0", "GIT_CONFIG_COUNT": str(len(config)),
            "GIT_AUTHOR_NAME": BOT_NAME, "GIT_AUTHOR_EMAIL": BOT_EMAIL,
            "GIT_COMMITTER_NAME": BOT_NAME, "GIT_COMMITTER_EMAIL": BOT_EMAIL,
        }
        for i, (key, value) in enumerate(config.items()):
            env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"] = key, value
        return env

    async def run(self, args: Sequence[str], cwd: Path, stdin: bytes | None = None, check: bool = True,
                  timeout_s: float | None = None, watch: Path | None = None, max_bytes: int = 0,
                  env: Mapping[str, str] | None = None) -> Completed:
        """git ``args`` in ``cwd``; ``RepoError`` (git's own words, without the token) when it fails or takes
        longer than the timeout. With ``watch``, the call is stopped once that folder holds over ``max_bytes``."""
        process = await asyncio.create_subprocess_exec(
            "git", *args, cwd=cwd, env={**self.environment(), **(env or {})}, start_new_session=True,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        talk = asyncio.ensure_future(process.communicate(stdin))
        guards = [asyncio.ensure_future(_grows_past(watch, max_bytes))] if watch is not None and max_bytes else []
        try:
            done, _ = await asyncio.wait([talk, *guards], timeout=timeout_s or self._timeout_s,
                                         return_when=asyncio.FIRST_COMPLETED)
            if talk not in done:
                _kill(process)
                await talk
                if guards and guards[0] in done:
                    raise TooLarge(f"The repository is larger than the {max_bytes:,} bytes this bot fetches "
                                   "([repos] max_bytes); the fetch was stopped.")
                raise RepoError(f"git {args[0]} took longer than {timeout_s or self._timeout_s:.0f}s and was stopped.")
        except asyncio.CancelledError:
            _kill(process)
            raise
        finally:
            for guard in guards:
                guard.cancel()
        out, err = talk.result()
        text = self._clean(err.decode("utf-8", "replace"))
        if check and process.returncode != 0:
            raise GitFailed(args[0], process.returncode or 1, text)
        return Completed(process.returncode or 0, out, text)

    def _clean(self, text: str) -> str:
        if self._access.token:
            text = text.replace(self._access.token, "[token]")
        return text[-OUTPUT_LIMIT:]


class GitFailed(RepoError):
    def __init__(self, command: str, code: int, stderr: str) -> None:
        lines = [line.strip() for line in stderr.splitlines() if line.strip()]
        said = next((line for line in reversed(lines) if line.startswith(("fatal:", "error:", "remote:", " !"))),
                    lines[-1] if lines else f"exit code {code}")
        super().__init__(f"git {command} failed: {said}")
        self.stderr = stderr


def _kill(process: asyncio.subprocess.Process) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)  # git's own children (remote helpers, index-pack) too
    except ProcessLookupError:
        pass


async def _grows_past(folder: Path, max_bytes: int) -> None:
    """Returns once ``folder`` holds more than ``max_bytes`` (checked a few times a second)."""
    while True:  # polling: a folder's growth has no event to wait on
        if await asyncio.to_thread(_size, folder) > max_bytes:
            return
        await asyncio.sleep(0.2)


def _size(folder: Path) -> int:
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total
