"""The embedded model for the tests that run it: llama-cpp-python's server (the ``local`` extra) in the tests'
own Python, and the default model file, fetched once (by the product's own fetch) into ``.cache/models``
of the repository, where CI keeps it between runs. Without the server the tests skip with the reason;
with ``CODEGEN_REQUIRE_MODEL=1`` (CI) that is a failure instead."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from bot.model.embedded.server import INSTALL_HINT, server_version
from bot.model.embedded.weights import DEFAULT_MODEL, ModelFileError, default_model_path, fetch_default

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache"
REQUIRE_ENV = "CODEGEN_REQUIRE_MODEL"


def unavailable(reason: str) -> None:
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{reason} ({REQUIRE_ENV}=1: the embedded model tests must run here)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def cached_default_model() -> Path:
    """The default model file, assembled and checked once per machine."""
    if server_version() is None:
        unavailable(f"llama-cpp-python's server is not installed here: {INSTALL_HINT}")
    path = default_model_path(CACHE)
    if not path.exists():
        try:
            fetch_default(path, print)
        except ModelFileError as error:
            unavailable(str(error))
    return path


def data_folder_with_model(tmp_path: Path, model: Path) -> Path:
    """A data folder (``[storage] path``'s folder) already holding the default model, as after a first fetch."""
    folder = tmp_path / "data"
    target = default_model_path(folder)
    target.parent.mkdir(parents=True)
    try:
        os.link(model, target)  # no copy of 491 MB per test where the file system allows
    except OSError:
        shutil.copyfile(model, target)
    assert target.stat().st_size == DEFAULT_MODEL.size
    return folder


def servers_of(folder: Path) -> list[int]:
    """Processes serving a model file under ``folder`` (from /proc: whatever started them). The server is given
    the checked file open, so it is known by the files it holds, not by its command line."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
            held = [os.readlink(fd) for fd in (entry / "fd").iterdir()] if b"llama_cpp.server" in words else []
        except OSError:
            continue
        if any(name.startswith(str(folder)) for name in held):
            found.append(int(entry.name))
    return found
