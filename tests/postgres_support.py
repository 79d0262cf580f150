"""A throwaway PostgreSQL cluster for the store's tests: Debian's postgresql (15 or whichever is installed),
initialised in a temp dir owned by an unprivileged user, listening on a free loopback port and a socket in
that dir, with a password for TCP logins (so the tests see the URL's password masked, and refused).

Skipped with a reason when the server's binaries are missing, unless ``CODEGEN_REQUIRE_POSTGRES=1`` (as CI sets),
which makes that a failure instead. Each test gets a database of its own (``fresh_database``).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shlex
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REQUIRE_ENV = "CODEGEN_REQUIRE_POSTGRES"
USER = "codegen"


def server_binaries() -> Path | None:
    """The newest installed server's bin folder (``/usr/lib/postgresql/N/bin``), or None."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parent.parent.name)
                   if p.parent.parent.name.isdigit() else 0)
    return found[-1].parent if found else None


@dataclass(frozen=True)
class Cluster:
    host: str
    port: int
    password: str
    pg_ctl: tuple[str, ...] = ()  # the server's pg_ctl, as its user, with its data dir: to stop and start it

    def stop(self) -> None:
        subprocess.run([*self.pg_ctl, "-m", "fast", "-w", "stop"], check=True, capture_output=True)

    def start(self) -> None:
        subprocess.run([*self.pg_ctl, "-w", "-t", "60", "start"], check=True, capture_output=True)

    def url(self, database: str = "postgres", password: str | None = None) -> str:
        return f"postgresql://{USER}:{self.password if password is None else password}@{self.host}:{self.port}/{database}"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _as_user(user: str) -> list[str]:
    """Run as ``user`` when we are root (PostgreSQL refuses to run as root); as ourselves otherwise."""
    return ["runuser", "-u", user, "--"] if os.geteuid() == 0 else []


@contextlib.contextmanager
def running_cluster() -> Iterator[Cluster]:
    bin_dir = server_binaries()
    if bin_dir is None:
        message = "PostgreSQL's server is not installed (apt-get install postgresql)"
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{message}, and {REQUIRE_ENV}=1 requires the PostgreSQL tests to run")
        pytest.skip(message)
    user = "nobody" if os.geteuid() == 0 else pwd.getpwuid(os.geteuid()).pw_name
    folder = Path(tempfile.mkdtemp(prefix="codegen-pg-"))
    password = secrets.token_urlsafe(12)
    (folder / "pw").write_text(password)
    if os.geteuid() == 0:
        shutil.chown(folder, user)
        shutil.chown(folder / "pw", user)
    data, port = folder / "data", _free_port()
    run = _as_user(user)
    try:
        subprocess.run([*run, str(bin_dir / "initdb"), "-D", str(data), "-U", USER, f"--pwfile={folder / 'pw'}",
                        "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C.UTF-8"],
                       check=True, capture_output=True)
        options = f"-c listen_addresses=127.0.0.1 -p {port} -k {folder} -c fsync=off -c max_connections=200"
        pg_ctl = (*run, str(bin_dir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(folder / "log"))
        subprocess.run([*pg_ctl, "-w", "-t", "60", "start"], check=True, capture_output=True)
        _stop_when_gone(os.getpid(), pg_ctl, folder)
    except subprocess.CalledProcessError as error:
        log = (folder / "log").read_text() if (folder / "log").exists() else ""
        shutil.rmtree(folder, ignore_errors=True)
        pytest.fail(f"could not start PostgreSQL: {error.stderr.decode(errors='replace')}{log}")
    try:
        yield Cluster("127.0.0.1", port, password, pg_ctl)
    finally:
        subprocess.run([*run, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


def _stop_when_gone(pid: int, pg_ctl: tuple[str, ...], folder: Path) -> None:
    """A watcher that stops the server and removes its folder once this process is gone, however it ended (a
    test run killed by a timeout never reaches the fixture's teardown)."""
    stop = " ".join(shlex.quote(part) for part in (*pg_ctl, "-m", "immediate", "stop"))
    subprocess.Popen(["sh", "-c", f"while kill -0 {pid} 2>/dev/null; do sleep 1; done; {stop} >/dev/null 2>&1;"
                      f" rm -rf {shlex.quote(str(folder))}"], start_new_session=True,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


_made = iter(range(1, 1_000_000))


async def fresh_database(cluster: Cluster) -> str:
    """A new, empty database on ``cluster``; its URL."""
    import psycopg

    name = f"test_{os.getpid()}_{next(_made)}"
    async with await psycopg.AsyncConnection.connect(cluster.url(), autocommit=True) as admin:
        await admin.execute(f'CREATE DATABASE "{name}"')
    return cluster.url(name)
