"""What a GGUF file says about itself: its name, architecture, trained context and attention shape.

Only the header's key-value metadata is read (never the tensors), with every length bounded, so a file that is
not GGUF, or is cut short, is told in one sentence (``NotGguf``) rather than read without end.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from agents.errors import CodegenError

MAGIC = b"GGUF"
MAX_KEYS = 100_000
MAX_STRING = 1 << 24  # a chat template is the longest string a header holds; far below this
MAX_ARRAY = 1 << 24
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
STRING, ARRAY = 8, 9
WANTED = ("general.name", "general.architecture")
SHAPE = ("context_length", "block_count", "embedding_length", "attention.head_count", "attention.head_count_kv")


class NotGguf(CodegenError):
    """The file is not a GGUF model (or is cut short)."""


@dataclass(frozen=True)
class GgufInfo:
    name: str
    architecture: str
    context_length: int | None  # tokens it was trained on
    kv_bytes_per_token: int | None  # its key-value cache, at 16 bits, per token of context


def read_gguf(path: Path) -> GgufInfo:
    """The model's metadata from the header of the GGUF file at ``path``."""
    with path.open("rb") as file:
        return read_gguf_from(file, path)


def read_gguf_from(file: BinaryIO, path: Path) -> GgufInfo:
    """The model's metadata from the header of ``file`` (opened from ``path``, named in what is said)."""
    file.seek(0)
    if file.read(4) != MAGIC:
        raise NotGguf(f"{path} is not a GGUF model file (it does not begin with GGUF).")
    version, _tensors, keys = _unpack(file, "<IQQ", path)
    if version < 2 or keys > MAX_KEYS:
        raise NotGguf(f"{path} is a GGUF file of a version this reader does not know ({version}).")
    meta: dict[str, object] = {}
    for _ in range(keys):
        key = _string(file, path)
        (kind,) = _unpack(file, "<I", path)
        value = _value(file, kind, path)
        if key in WANTED or key.rsplit(".", 1)[-1] in ("context_length", "block_count", "embedding_length") \
                or key.endswith((".attention.head_count", ".attention.head_count_kv")):
            meta[key] = value
    arch = str(meta.get("general.architecture", ""))
    shape = {name: meta.get(f"{arch}.{name}") for name in SHAPE}
    return GgufInfo(str(meta.get("general.name", path.stem)), arch, _int(shape["context_length"]), _kv_bytes(shape))


def _kv_bytes(shape: dict[str, object]) -> int | None:
    layers, width, heads = _int(shape["block_count"]), _int(shape["embedding_length"]), _int(shape["attention.head_count"])
    kv_heads = _int(shape["attention.head_count_kv"]) or heads
    if not (layers and width and heads and kv_heads):
        return None
    return 2 * layers * kv_heads * (width // heads) * 2  # keys and values, each 2 bytes a number


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _value(file: BinaryIO, kind: int, path: Path) -> object:
    if kind in _SCALARS:
        return _unpack(file, _SCALARS[kind], path)[0]
    if kind == STRING:
        return _string(file, path)
    if kind == ARRAY:
        item, count = _unpack(file, "<IQ", path)
        if count > MAX_ARRAY or item == ARRAY:
            raise NotGguf(f"{path} has a GGUF header this reader cannot follow (an array of {count:,}).")
        for _ in range(count):  # skipped: arrays are the tokenizer's, not needed here
            _value(file, item, path)
        return None
    raise NotGguf(f"{path} has a GGUF header value of unknown type {kind}.")


def _string(file: BinaryIO, path: Path) -> str:
    (length,) = _unpack(file, "<Q", path)
    if length > MAX_STRING:
        raise NotGguf(f"{path} has a GGUF header string of {length:,} bytes: not a model file this reader trusts.")
    data = file.read(length)
    if len(data) != length:
        raise NotGguf(f"{path} ends inside its GGUF header: the file is cut short.")
    return data.decode("utf-8", "replace")


def _unpack(file: BinaryIO, layout: str, path: Path) -> tuple:
    size = struct.calcsize(layout)
    data = file.read(size)
    if len(data) != size:
        raise NotGguf(f"{path} ends inside its GGUF header: the file is cut short.")
    return struct.unpack(layout, data)
