"""Packing a job's files for the container.

The files travel as a tar, base64 encoded in ``docker exec`` arguments, unpacked by the run's first
command. That needs nothing but ``sh``, ``base64`` and ``tar`` in the image and works over every
transport the SDK speaks (unix socket, TLS, ssh), unlike ``put_archive``, which cannot write into the
tmpfs work dir of a running container.
"""

from __future__ import annotations

import base64
import io
import secrets
import tarfile
from collections.abc import Mapping

from agents.errors import SandboxError
from agents.paths import UnsafePath, project_path

CHUNK_CHARS = 96 * 1024  # below Linux's 128 KiB limit on one argument
# A name of its own for each staging (``upload_path``): the judge's and the commands' user's stagings of one run go
# side by side, and a file the team's code left in /tmp by a guessable name is never appended to.
UPLOAD_PREFIX = "/tmp/.upload-"


def safe_path(path: str) -> str:
    """The path relative to the work dir, by the rule every writer shares (``agents.paths``)."""
    try:
        return project_path(path)
    except UnsafePath as error:
        raise SandboxError(f"cannot copy into the sandbox: {error}") from None


def pack(files: Mapping[str, str]) -> bytes:
    """A tar of the files, readable by the sandbox user, with no host owner or time leaking in."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path, content in files.items():
            data = content.encode("utf-8")
            info = tarfile.TarInfo(safe_path(path))
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


UNPACK_FAILED = "[sandbox] could not unpack the files"
UNPACK_EXIT = 125


def staged(files: Mapping[str, str], workdir: str, limit: int, command: str,
           before: str = "") -> tuple[list[list[str]], list[str]]:
    """Exec commands that stage all but the last chunk, and one that runs the shell ``before``, unpacks
    everything, then runs ``command``.

    Unpacking in the same exec as the first command saves a whole ``docker exec`` per run. A failed
    unpack exits ``UNPACK_EXIT`` after printing ``UNPACK_FAILED``, so it is told apart from the command.
    """
    archive = pack(files)
    if len(archive) > limit:
        raise SandboxError(f"the files to test are {len(archive)} bytes, over the sandbox limit of {limit}")
    encoded = base64.b64encode(archive).decode("ascii")
    chunks = [encoded[i:i + CHUNK_CHARS] for i in range(0, len(encoded), CHUNK_CHARS)] or [""]
    upload = f"{UPLOAD_PREFIX}{secrets.token_hex(8)}.b64"
    stage = [["sh", "-c", f'printf %s "$1" >> {upload}', "sh", chunk] for chunk in chunks[:-1]]
    staged_part = f"cat {upload}; rm -f {upload}; " if stage else ""
    script = before + (
        f'{{ {staged_part}printf %s "$1"; }} | base64 -d | tar -x -m -f - -C {workdir} '
        f'|| {{ echo "{UNPACK_FAILED}" >&2; exit {UNPACK_EXIT}; }}; exec sh -c "$0"'
    )
    return stage, ["sh", "-c", script, command, chunks[-1]]
