"""The Burnpack file layout (Burn 0.20's ``.bpk``), read and written.

    magic "NRUB" (u32 0x4255524E, little-endian) | version u16 | metadata size u32
    CBOR metadata: {"tensors": {path: {"dtype", "shape", "data_offsets", "param_id"?}},
                    "metadata": {str: str}?}
    zero padding to a multiple of 256 bytes, then the data section: each tensor's
    little-endian bytes at its own 256-byte-aligned offset (relative to the section).

Limits as Burn's: metadata up to 100 MiB, at most 100 000 tensors.
"""

from __future__ import annotations

import mmap
import os
import struct
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt

from ferrum.store.atomic import write_atomically
from ferrum.store.burnpack.cbor import CborError, decode, encode
from ferrum.store.result import StoreError
from ferrum.store.snapshot import DTYPE_SIZES, NUMPY_DTYPES, TensorSnapshot, bf16_to_f32

__all__ = ["read_burnpack", "write_burnpack"]

MAGIC = 0x4255524E
VERSION = 1
HEADER = struct.Struct("<IHI")
ALIGNMENT = 256
MAX_METADATA = 100 * 1024 * 1024
MAX_TENSORS = 100_000


def _align(offset: int) -> int:
    return -(-offset // ALIGNMENT) * ALIGNMENT


def read_burnpack(path: Path) -> tuple[dict[str, TensorSnapshot], dict[str, str]]:
    """The tensors (read lazily from a memory map) and the string metadata of a ``.bpk`` file."""
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size < HEADER.size:
                raise StoreError(f"{path} is {size} bytes, too short for a Burnpack header")
            buffer = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except FileNotFoundError:
        raise StoreError(f"Burnpack file {path} does not exist") from None
    except IsADirectoryError:
        raise StoreError(f"{path} is a directory, not a Burnpack file") from None
    magic, version, meta_size = HEADER.unpack_from(buffer, 0)
    if magic != MAGIC:
        raise StoreError(f"{path} is not a Burnpack file (magic 0x{magic:08x}, expected 0x{MAGIC:08x})")
    if version > VERSION:
        raise StoreError(f"{path}: Burnpack version {version} is newer than the supported {VERSION}")
    if meta_size > MAX_METADATA or HEADER.size + meta_size > size:
        raise StoreError(f"{path}: metadata of {meta_size} bytes does not fit the {size}-byte file")
    try:
        meta = decode(memoryview(buffer)[HEADER.size : HEADER.size + meta_size])
    except CborError as err:
        raise StoreError(f"{path}: damaged Burnpack metadata: {err}") from None
    data_start = _align(HEADER.size + meta_size)
    tensors, extra = _parse_metadata(path, meta)
    snapshots = {name: _snapshot(path, buffer, data_start, name, desc) for name, desc in tensors.items()}
    return snapshots, extra


def _parse_metadata(path: Path, meta: Any) -> tuple[dict[str, Any], dict[str, str]]:
    if not isinstance(meta, dict) or not isinstance(meta.get("tensors"), dict):
        raise StoreError(f"{path}: Burnpack metadata must be a map with 'tensors'")
    tensors = meta["tensors"]
    if len(tensors) > MAX_TENSORS:
        raise StoreError(f"{path}: {len(tensors)} tensors, over Burnpack's limit of {MAX_TENSORS}")
    extra = meta.get("metadata", {})
    if not isinstance(extra, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in extra.items()
    ):
        raise StoreError(f"{path}: Burnpack 'metadata' must map strings to strings")
    return tensors, extra


def _snapshot(path: Path, buffer: mmap.mmap, data_start: int, name: object, desc: object) -> TensorSnapshot:
    if not isinstance(name, str) or not isinstance(desc, dict):
        raise StoreError(f"{path}: tensor entry {name!r:.60} is malformed")
    dtype, shape, offsets, pid = (
        desc.get("dtype"),
        desc.get("shape"),
        desc.get("data_offsets"),
        desc.get("param_id"),
    )
    if not isinstance(dtype, str) or dtype not in DTYPE_SIZES:
        raise StoreError(f"{path}: tensor '{name}' has dtype {dtype!r:.40}, which ferrum cannot load")
    if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
        raise StoreError(f"{path}: tensor '{name}' has a malformed shape {shape!r:.60}")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(isinstance(o, int) for o in offsets)):
        raise StoreError(f"{path}: tensor '{name}' has malformed data offsets {offsets!r:.60}")
    if pid is not None and not (isinstance(pid, int) and 0 <= pid < 1 << 64):
        raise StoreError(f"{path}: tensor '{name}' has a malformed param_id {pid!r:.40}")
    count = 1
    for dim in shape:
        count *= dim
    start, end = offsets
    nbytes = count * DTYPE_SIZES[dtype]
    if start < 0 or end - start != nbytes:
        raise StoreError(
            f"{path}: tensor '{name}' {dtype} {shape} needs {nbytes} bytes, its offsets give {end - start}"
        )
    if data_start + end > len(buffer):
        raise StoreError(f"{path}: tensor '{name}' runs past the end of the file (truncated?)")

    def read() -> npt.NDArray[Any]:
        raw = (
            np.dtype("<u2") if dtype == "BF16" else np.dtype("u1") if dtype == "Bool" else NUMPY_DTYPES[dtype]
        )
        flat = np.frombuffer(buffer, dtype=raw.newbyteorder("<"), count=count, offset=data_start + start)
        values = flat.reshape(shape)
        if dtype == "BF16":
            return bf16_to_f32(values)
        return values != 0 if dtype == "Bool" else values

    return TensorSnapshot(name, tuple(shape), dtype, read, None, pid)


def write_burnpack(path: Path, snapshots: list[TensorSnapshot], metadata: dict[str, str]) -> None:
    """Write ``snapshots`` (in order) and ``metadata`` to ``path``, atomically."""
    descriptors: dict[str, dict[str, Any]] = {}
    placed: list[tuple[int, TensorSnapshot]] = []
    offset = 0
    for snap in snapshots:
        start = _align(offset)
        end = start + snap.num_bytes()
        desc: dict[str, Any] = {"dtype": snap.dtype, "shape": list(snap.shape), "data_offsets": [start, end]}
        if snap.param_id is not None:
            desc["param_id"] = snap.param_id
        descriptors[snap.path] = desc
        placed.append((start, snap))
        offset = end
    meta: dict[str, Any] = {"tensors": dict(sorted(descriptors.items()))}
    if metadata:
        meta["metadata"] = dict(sorted(metadata.items()))
    meta_bytes = encode(meta)
    data_start = _align(HEADER.size + len(meta_bytes))

    def write(out: BinaryIO, _: str) -> None:
        out.write(HEADER.pack(MAGIC, VERSION, len(meta_bytes)))
        out.write(meta_bytes)
        for start, snap in placed:
            out.write(b"\0" * (data_start + start - out.tell()))
            values = np.ascontiguousarray(snap.to_numpy(), dtype=NUMPY_DTYPES[snap.dtype].newbyteorder("<"))
            out.write(values.reshape(-1).view(np.uint8).data)

    write_atomically(path, write)
