"""llama.cpp's OpenAI-compatible server (llama-cpp-python's) as a child of the bot, on a free loopback port.

The child never outlives the bot: it runs in a process group of its own (so Ctrl-C at the terminal reaches the
bot, which stops its runs first, and the stop reaches every process the server made), ``stop`` ends that group
(SIGTERM, then SIGKILL), and on Linux the kernel sends it SIGTERM when the bot dies in any way, SIGKILL included
(``PR_SET_PDEATHSIG``: ``bot.model.embedded.child``). That signal follows the thread that started
the child, so it is started from the event loop's thread, which lives as long as the process.
"""

from __future__ import annotations

import asyncio
import fcntl
import importlib.metadata
import importlib.util
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from agents.errors import CodegenError
from bot.config.sections import ConfigError
from bot.model.embedded.child import dies_with_bot
from bot.model.embedded.weights import ModelFile

log = logging.getLogger(__name__)

PACKAGE = "llama-cpp-python"
NEEDED_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")
START_TIMEOUT_S = 300.0  # loading the model on a busy 2-core machine
POLL_S = 0.25
STOP_GRACE_S = 10.0
PORT_TRIES = 5
LOG_TAIL = 600
PORT_TAKEN = ("address already in use", "errno 98", "error while attempting to bind")
# How a llama.cpp build dies on a CPU, or a virtual machine, that lacks instructions it was compiled for: pip
# compiles llama-cpp-python for the newest the building machine offers (AVX-512, AMX), and a machine that lists
# them but cannot run them, or a cached wheel built elsewhere, crashes on the first reply.
CPU_CRASHES = (signal.SIGILL, signal.SIGSEGV)
PORTABLE_BUILD = '-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON'
# The only variables of the bot's environment the server gets: what finds its Python, its libraries, its locale and
# its temporary files, and how many threads its math libraries use. Nothing else: the bot's secrets are no business
# of the server's (a token, a key, a database or proxy URL with a password), and llama-cpp-python reads its own
# settings from the environment over the command line the bot gives it: HOST and PORT (which platforms set for the
# bot's own web server) would move it off loopback or onto a port it cannot bind, CONFIG_FILE would replace the
# whole command line, and MODEL, API_KEY or CACHE (every setting of its, by name) would change what it serves.
PASSED_ENV = frozenset(("PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TEMP", "TMP",
                        "PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONNOUSERSITE", "VIRTUAL_ENV",
                        "LD_LIBRARY_PATH", "LD_PRELOAD", "DYLD_LIBRARY_PATH", "LLAMA_CPP_LIB_PATH"))
PASSED_ENV_PREFIXES = ("LC_", "OMP_", "GGML_", "OPENBLAS_", "MKL_", "CUDA_", "HIP_", "ROCR_")
# from the repository (a wheel install: pip install 'codegen-chat[local]'), compiled as the README's command does
INSTALL_HINT = f"CMAKE_ARGS=\"{PORTABLE_BUILD}\" pip install -e '.[local]'"


class EmbeddedServerError(CodegenError):
    """The embedded model server cannot be started. The message says why and what to do."""


class ServerNotInstalled(ConfigError):
    """The optional extra that holds the server is not installed."""


@dataclass(frozen=True)
class ServerSettings:
    context: int
    threads: int


def server_version() -> str | None:
    """The installed llama-cpp-python's version when its server can run here, else None."""
    if any(importlib.util.find_spec(name) is None for name in NEEDED_MODULES):
        return None
    try:
        return importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return None


def crash_cause(returncode: int | None) -> str:
    """Why a server that ended with ``returncode`` crashed, when it ended as a build for another CPU does ('' if
    it ended any other way)."""
    if returncode is None or -returncode not in CPU_CRASHES:
        return ""
    return (f"It crashed ({signal.Signals(-returncode).name}) as llama-cpp-python does when compiled for instructions "
            "this machine's CPU does not run")


def rebuild_command() -> str:
    """The installed llama-cpp-python again, compiled for the portable set, into this Python (no cache: it holds
    the build that crashed)."""
    return (f"CMAKE_ARGS=\"{PORTABLE_BUILD}\" {sys.executable} -m pip install --force-reinstall --no-deps "
            f"--no-cache-dir {PACKAGE}=={server_version() or '0.3.36'}")


def crash_advice(returncode: int | None) -> str:
    """``crash_cause`` and the command that rebuilds it, as a sentence to follow another one ('' if not that)."""
    cause = crash_cause(returncode)
    return f" {cause}: build it for a portable set with `{rebuild_command()}`." if cause else ""


def missing_server_sentence() -> str:
    return (f"The embedded model needs llama.cpp's server, which is not installed in {sys.prefix}: install it "
            f"with `{INSTALL_HINT}`, or set OPENAI_API_KEY, or OPENAI_BASE_URL (or [llm] base_url) to a model server.")


def loopback_ports() -> Iterator[int]:
    """Ports free on loopback when asked (another process may take one before the server binds it)."""
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        yield port  # closed first, for the server to bind


class EmbeddedServer:
    def __init__(self, process: subprocess.Popen[bytes], port: int, model: ModelFile, settings: ServerSettings,
                 log_path: Path) -> None:
        self.process, self.port, self.model, self.settings, self.log_path = process, port, model, settings, log_path
        self.base_url = f"http://127.0.0.1:{port}/v1"

    @classmethod
    async def start(cls, model: ModelFile, settings: ServerSettings, log_path: Path,
                    ports: Iterator[int] | None = None) -> EmbeddedServer:
        """A server for ``model``, answering once it returns; a port another process holds is passed over."""
        if server_version() is None:
            raise ServerNotInstalled(missing_server_sentence())
        ports = ports or loopback_ports()
        for _ in range(PORT_TRIES):
            port = next(ports)
            process, log_path = _spawn(model, settings, port, log_path)
            server = cls(process, port, model, settings, log_path)
            try:
                if await server._answers_within(START_TIMEOUT_S):
                    log.info("embedded model server on port %d (pid %d)", server.port, server.process.pid)
                    return server
            except BaseException:
                await server.stop()
                raise
            tail = server.log_tail()
            await server.stop()
            if not any(sign in tail.lower() for sign in PORT_TAKEN):
                raise EmbeddedServerError(f"The embedded model server did not start with {model.path}: "
                                          f"{tail or 'it said nothing'} "
                                          f"(its log: {log_path}).{crash_advice(server.process.returncode)}")
            log.warning("port %d was taken before the embedded model server bound it; trying another", server.port)
        raise EmbeddedServerError(f"The embedded model server found no free loopback port in {PORT_TRIES} tries.")

    async def _answers_within(self, limit_s: float) -> bool:
        """True once the server lists its model; False when it ended first. A silent, living server past
        ``limit_s`` is an error."""
        deadline = time.monotonic() + limit_s
        while self.process.poll() is None:
            if self.model.alias in await asyncio.to_thread(_listed_models, self.base_url) and self.process.poll() is None:
                return True
            if time.monotonic() > deadline:
                raise EmbeddedServerError(f"The embedded model server did not answer within {limit_s:.0f}s "
                                          f"(its log: {self.log_path}).")
            await asyncio.sleep(POLL_S)
        return False

    async def stop(self) -> None:
        """End the server and whatever it started: SIGTERM, then SIGKILL after ``STOP_GRACE_S``."""
        if self.process.poll() is not None:
            return
        _signal_group(self.process.pid, signal.SIGTERM)
        try:
            await asyncio.to_thread(self.process.wait, STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            _signal_group(self.process.pid, signal.SIGKILL)
            await asyncio.to_thread(self.process.wait)

    def log_tail(self) -> str:
        try:
            with self.log_path.open("rb") as file:
                file.seek(max(0, file.seek(0, os.SEEK_END) - LOG_TAIL))
                return " ".join(file.read().decode("utf-8", "replace").split())
        except OSError:
            return ""


# Loopback, never through the environment's proxy (HTTP_PROXY), which cannot reach this machine's loopback.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _listed_models(base_url: str) -> set[str]:
    """The model names the server at ``base_url`` lists, or none while it does not answer."""
    try:
        with _DIRECT.open(f"{base_url}/models", timeout=2.0) as reply:
            listing = json.loads(reply.read(1 << 20))
        return {str(entry.get("id")) for entry in listing.get("data", []) if isinstance(entry, dict)}
    except (OSError, ValueError, AttributeError):
        return set()


def _command(model: ModelFile, settings: ServerSettings, port: int) -> list[str]:
    return [sys.executable, "-m", "llama_cpp.server", "--model", model.served_path, "--model_alias", model.alias,
            "--n_ctx", str(settings.context), "--n_threads", str(settings.threads),
            "--n_threads_batch", str(settings.threads), "--verbose", "False", "--host", "127.0.0.1",
            "--port", str(port)]


def _spawn(model: ModelFile, settings: ServerSettings, port: int,
           log_path: Path) -> tuple[subprocess.Popen[bytes], Path]:
    """The server's process, and the log it writes (``_own_log``)."""
    out, log_path = _own_log(log_path)
    with out:
        return subprocess.Popen(_command(model, settings, port), stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True, pass_fds=(model.opened.fileno(),),
                                preexec_fn=dies_with_bot(), env=_server_env()), log_path


def _own_log(log_path: Path) -> tuple[BinaryIO, Path]:
    """A log for a new server, emptied for it: ``log_path``, or one named for this process while another bot
    process's server writes there (a ``doctor`` beside a ``serve``, two ``run``s), whose log it must not empty.
    The lock is on the open log itself, which the server holds as its output: it lasts exactly as long as the
    server that writes there."""
    try:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        out = _opened_log(log_path)
        if not _locked(out):
            out.close()
            log_path = log_path.with_name(f"{log_path.stem}.{os.getpid()}{log_path.suffix}")
            out = _opened_log(log_path)
            _locked(out)  # named for this process: no other process writes it
        out.truncate(0)
    except OSError as error:  # a read-only or full data folder
        raise EmbeddedServerError(f"The embedded model server's log cannot be written at {log_path}: "
                                  f"{error.strerror or error}; set [storage] path to a folder this process can "
                                  "write.") from None
    return out, log_path


def _opened_log(path: Path) -> BinaryIO:
    """``path`` opened to be written, never through a symbolic link: one put in the data folder in its place would
    have the log emptied and written wherever it points."""
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600), "ab")


def _locked(file: BinaryIO) -> bool:
    try:
        fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _server_env() -> dict[str, str]:
    """What the server's Python and llama.cpp need from the bot's environment, and nothing else (``PASSED_ENV``)."""
    return {name: value for name, value in os.environ.items()
            if name in PASSED_ENV or name.startswith(PASSED_ENV_PREFIXES)}


def _signal_group(pid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pid, sig)  # the server leads its own group (start_new_session)
    except (ProcessLookupError, PermissionError):
        pass
