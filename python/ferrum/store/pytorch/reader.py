"""Reading the tensors of a ``torch.save`` file: the zip format (PyTorch >= 1.6) and the legacy one.

The zip format holds ``<name>/data.pkl`` (the pickled object, whose tensors
name storages by key) and ``<name>/data/<key>`` (each storage's raw bytes,
stored uncompressed, so they are read straight from a memory map). The
legacy format is a run of pickles (magic number, protocol, system info, the
object, the storage keys) followed by each storage as an 8-byte element
count and its bytes.
"""

from __future__ import annotations

import mmap
import os
import struct
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ferrum.store.pytorch.pickle import PickleError, read_pickle
from ferrum.store.pytorch.torch_globals import ALLOWED, StorageRef, TensorRef, storage_dtype
from ferrum.store.result import StoreError
from ferrum.store.snapshot import DTYPE_SIZES, NUMPY_DTYPES, TensorSnapshot, bf16_to_f32

__all__ = ["flatten", "read_torch_file"]

_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_LEGACY_PROTOCOL = 1001
_MAX_DEPTH = 64
# What zipfile raises for a damaged archive: bad headers, unknown versions or methods, encryption
# (RuntimeError), corrupt deflate streams (zlib.error), short structures (struct.error).
_ZIP_ERRORS = (
    zipfile.BadZipFile,
    OSError,
    ValueError,
    EOFError,
    NotImplementedError,
    RuntimeError,
    zlib.error,
    struct.error,
)
_MAX_PICKLE_BYTES = 256 << 20  # a data.pkl holds structure, not tensor bytes: a few MB for a large model

# Where a storage's bytes are: (file buffer, byte offset) or a callable giving bytes (compressed zip entries).
Located = tuple[Any, int]


def _map(path: Path) -> mmap.mmap:
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size == 0:
                raise StoreError(f"{path} is empty, not a PyTorch file")
            return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except FileNotFoundError:
        raise StoreError(f"PyTorch file {path} does not exist") from None
    except IsADirectoryError:
        raise StoreError(f"{path} is a directory, not a PyTorch file") from None


def read_torch_file(path: Path) -> tuple[Any, Callable[[TensorRef, str], TensorSnapshot]]:
    """The unpickled object (tensors as ``TensorRef``) and a function making a snapshot of a tensor."""
    buffer = _map(path)
    if buffer[:4] == b"PK\x03\x04":
        return _read_zip(path, buffer)
    return _read_legacy(path, buffer)


def _read_zip(path: Path, buffer: mmap.mmap) -> tuple[Any, Callable[[TensorRef, str], TensorSnapshot]]:
    try:
        archive = zipfile.ZipFile(path)
        infos = {info.filename: info for info in archive.infolist()}
    except _ZIP_ERRORS as err:
        raise StoreError(f"{path} is not a readable torch.save zip file: {err}") from None
    pickles = [name for name in infos if name == "data.pkl" or name.endswith("/data.pkl")]
    if len(pickles) != 1:
        raise StoreError(f"{path}: a torch.save zip file has one data.pkl, found {len(pickles)}")
    prefix = pickles[0][: -len("data.pkl")]
    big_endian = _zip_bytes(path, archive, infos.get(prefix + "byteorder"), 16) == b"big"

    def persistent_load(pid: Any) -> StorageRef:
        if not isinstance(pid, tuple) or len(pid) < 5 or pid[0] != "storage":
            raise PickleError(f"{path}: unexpected persistent id {pid!r:.80}")
        _, storage_type, key, _location, numel = pid[:5]
        if not isinstance(key, str) or not isinstance(numel, int) or isinstance(numel, bool) or numel < 0:
            raise PickleError(f"{path}: malformed storage id {pid!r:.80}")
        return StorageRef(key, storage_dtype(storage_type), numel)

    data = _zip_bytes(path, archive, infos[pickles[0]], _MAX_PICKLE_BYTES)
    root, _ = read_pickle(data, ALLOWED, persistent_load, what=f"{path}:data.pkl")

    def locate(ref: StorageRef) -> Located:
        info = infos.get(f"{prefix}data/{ref.key}")
        if info is None:
            raise StoreError(f"{path}: storage '{ref.key}' is not in the archive")
        nbytes = ref.numel * DTYPE_SIZES[ref.dtype]
        if info.file_size < nbytes:
            raise StoreError(f"{path}: storage '{ref.key}' holds {info.file_size} bytes, needs {nbytes}")
        if info.compress_type == zipfile.ZIP_STORED:
            start = _entry_start(path, buffer, info)
            return buffer, start
        return _zip_bytes(path, archive, info, nbytes), 0

    return root, _snapshotter(path, locate, big_endian)


def _zip_bytes(path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo | None, limit: int) -> bytes:
    if info is None:
        return b""
    if info.file_size > limit:
        raise StoreError(f"{path}: archive entry {info.filename} is {info.file_size} bytes, over {limit}")
    try:
        return archive.read(info)
    except _ZIP_ERRORS as err:
        raise StoreError(f"{path}: archive entry {info.filename} cannot be read: {err}") from None


def _entry_start(path: Path, buffer: mmap.mmap, info: zipfile.ZipInfo) -> int:
    at = info.header_offset
    header = buffer[at : at + 30]
    if len(header) < 30 or header[:4] != b"PK\x03\x04":
        raise StoreError(f"{path}: archive entry {info.filename} has no local header")
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    start = at + 30 + int(name_len) + int(extra_len)
    if start + info.file_size > len(buffer):
        raise StoreError(f"{path}: archive entry {info.filename} runs past the end of the file")
    return start


def _read_legacy(path: Path, buffer: mmap.mmap) -> tuple[Any, Callable[[TensorRef, str], TensorSnapshot]]:
    what = f"{path} (legacy torch.save format)"
    try:
        magic, pos = read_pickle(buffer, {}, start=0, what=what)
    except PickleError:
        raise StoreError(f"{path} is neither a torch.save zip file nor a legacy torch.save file") from None
    if magic != _LEGACY_MAGIC:
        raise StoreError(f"{path} is neither a torch.save zip file nor a legacy torch.save file")
    protocol, pos = read_pickle(buffer, {}, start=pos, what=what)
    if protocol != _LEGACY_PROTOCOL:
        raise StoreError(f"{path}: legacy protocol {protocol!r:.20}, expected {_LEGACY_PROTOCOL}")
    sys_info, pos = read_pickle(buffer, {}, start=pos, what=what)
    little = not isinstance(sys_info, dict) or sys_info.get("little_endian", True)
    roots: dict[str, StorageRef] = {}

    def persistent_load(pid: Any) -> StorageRef:
        if not isinstance(pid, tuple) or len(pid) != 6 or pid[0] != "storage":
            raise PickleError(f"{what}: unexpected persistent id {pid!r:.80}")
        _, storage_type, key, _location, numel, view = pid
        if not isinstance(key, str) or not isinstance(numel, int) or isinstance(numel, bool) or numel < 0:
            raise PickleError(f"{what}: malformed storage id {pid!r:.80}")
        root = roots.setdefault(key, StorageRef(key, storage_dtype(storage_type), numel))
        if view is None:
            return root
        if not (isinstance(view, tuple) and len(view) == 3 and all(isinstance(v, int) for v in view[1:])):
            raise PickleError(f"{what}: malformed storage view {view!r:.80}")
        _, offset, size = view
        if offset < 0 or size < 0 or offset + size > root.numel:
            raise PickleError(f"{what}: storage view [{offset}, {offset + size}) outside storage '{key}'")
        return StorageRef(key, root.dtype, root.numel, offset)

    root_obj, pos = read_pickle(buffer, ALLOWED, persistent_load, start=pos, what=what)
    keys, pos = read_pickle(buffer, {}, start=pos, what=what)
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise StoreError(f"{what}: the storage key list is malformed")
    offsets: dict[str, int] = {}
    for key in keys:
        ref = roots.get(key)
        if ref is None:
            raise StoreError(f"{what}: storage '{key}' is listed but no tensor uses it")
        if pos + 8 > len(buffer):
            raise StoreError(f"{what}: truncated before storage '{key}'")
        (numel,) = struct.unpack("<q", buffer[pos : pos + 8])
        nbytes = numel * DTYPE_SIZES[ref.dtype]
        if numel != ref.numel or pos + 8 + nbytes > len(buffer):
            raise StoreError(f"{what}: storage '{key}' has a bad size or is truncated")
        offsets[key] = pos + 8
        pos += 8 + nbytes

    def locate(ref: StorageRef) -> Located:
        if ref.key not in offsets:
            raise StoreError(f"{what}: storage '{ref.key}' has no data")
        return buffer, offsets[ref.key]

    return root_obj, _snapshotter(path, locate, not little)


def _snapshotter(
    path: Path, locate: Callable[[StorageRef], Located], big_endian: bool
) -> Callable[[TensorRef, str], TensorSnapshot]:
    def snapshot(tensor: TensorRef, name: str) -> TensorSnapshot:
        storage = tensor.storage
        offset = tensor.offset + storage.base
        if all(tensor.size):
            last = offset + sum((n - 1) * s for n, s in zip(tensor.size, tensor.stride, strict=True))
            if last >= storage.numel:
                raise StoreError(
                    f"{path}: tensor '{name}' (size {list(tensor.size)}, stride {list(tensor.stride)},"
                    f" offset {offset}) reaches past its storage of {storage.numel} elements"
                )

        def read() -> npt.NDArray[Any]:
            buffer, start = locate(storage)
            return _view(buffer, start, storage, offset, tensor, big_endian)

        return TensorSnapshot(name, tensor.size, storage.dtype, read)

    return snapshot


def _view(
    buffer: Any, start: int, storage: StorageRef, offset: int, tensor: TensorRef, big_endian: bool
) -> npt.NDArray[Any]:
    raw_dtype = np.dtype(np.uint16) if storage.dtype == "BF16" else NUMPY_DTYPES[storage.dtype]
    if storage.dtype == "Bool":
        raw_dtype = np.dtype(np.uint8)
    if big_endian:
        raw_dtype = raw_dtype.newbyteorder(">")
    flat = np.frombuffer(buffer, dtype=raw_dtype, count=storage.numel, offset=start)
    if not all(tensor.size):
        view = np.zeros(tensor.size, dtype=raw_dtype)
    else:
        strides = tuple(s * raw_dtype.itemsize for s in tensor.stride)
        view = np.lib.stride_tricks.as_strided(flat[offset:], tensor.size, strides, writeable=False)
    if storage.dtype == "BF16":
        return bf16_to_f32(view)
    if storage.dtype == "Bool":
        return np.not_equal(view, 0)
    return view if not big_endian else view.astype(raw_dtype.newbyteorder("="))


def flatten(value: object, prefix: str, out: dict[str, TensorRef], depth: int = 0) -> None:
    """Every tensor under ``value`` by dotted path; other leaves (epoch numbers, strings) are left out."""
    if depth > _MAX_DEPTH:
        raise StoreError(f"nesting deeper than {_MAX_DEPTH} levels at '{prefix}'")
    if isinstance(value, TensorRef):
        out[prefix] = value
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, (str, int)) and not isinstance(key, bool):
                flatten(item, f"{prefix}.{key}" if prefix else str(key), out, depth + 1)
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            flatten(item, f"{prefix}.{i}" if prefix else str(i), out, depth + 1)
