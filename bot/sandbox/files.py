"""Packing a job's files for the container.

The files travel as a tar, base64 encoded in ``docker exec`` arguments. That needs nothing but ``sh``,
``base64`` and ``tar`` in the image and works over every transport the SDK speaks (unix socket, TLS, ssh),
unlike ``put_archive``, which cannot write into the tmpfs work dir of a running container.
"""

from __future__ import annotations

import base64
import io
import posixpath
import tarfile
from collections.abc import Mapping

from agents.errors import SandboxError

CHUNK_CHARS = 96 * 1024  # below Linux's 128 KiB limit on one argument
UPLOAD_PATH = "/tmp/.upload.b64"


def safe_path(path: str) -> str:
    """The path relative to the work dir; one that climbs out of it (absolute, ``..``) is refused."""
    clean = posixpath.normpath(path.replace("\\", "/"))
    if path.startswith("/") or clean.startswith("..") or clean in ("", "."):
        raise SandboxError(f"the file path {path!r} points outside the work dir; use a relative path")
    return clean


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


def upload_commands(files: Mapping[str, str], workdir: str, limit: int) -> list[list[str]]:
    """The exec commands that, run in order, unpack ``files`` into ``workdir``."""
    archive = pack(files)
    if len(archive) > limit:
        raise SandboxError(f"the files to test are {len(archive)} bytes, over the sandbox limit of {limit}")
    encoded = base64.b64encode(archive).decode("ascii")
    chunks = [encoded[i:i + CHUNK_CHARS] for i in range(0, len(encoded), CHUNK_CHARS)] or [""]
    commands = [["sh", "-c", f'printf %s "$1" >> {UPLOAD_PATH}', "sh", chunk] for chunk in chunks]
    unpack = f"base64 -d {UPLOAD_PATH} | tar -x -m -f - -C {workdir} && rm -f {UPLOAD_PATH}"
    return [*commands, ["sh", "-c", unpack]]
