"""Reading the tensors of a ``torch.save`` file: the zip format (PyTorch >= 1.6) and the legacy one.

The zip format holds ``<name>/data.pkl`` (the pickled object, whose tensors
name storages by key) and ``<name>/data/<key>`` (each storage's raw bytes,
stored uncompressed, so they are read straight from a memory map). The
legacy format is a run of pickles (magic number, protocol, system info, the
object, the storage keys) followed by each storage as an 8-byte element
count and its bytes.
"""

from __future__ import annotations

import dataclasses
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

from ferrum.store.pytorch.pickle import PickleError, bounded_repr, read_pickle
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
# A compressed storage is inflated whole (once, up to the last byte a tensor reads), so one that inflates
# far beyond what its tensors use is a deflate bomb: 1 MiB of deflate becomes 1 GiB.
_INFLATE_FACTOR = 4
_INFLATE_SLACK = 64 << 10
_INFLATE_CHUNK = 1 << 20
# The shared references of a pickle let a few hundred bytes name one tensor along 2**40 paths. Walking the
# object tree may visit this many times the distinct items it holds (a checkpoint holding the same state
# dict under two keys is legitimate), plus a fixed allowance; beyond that the file is refused.
_EXPANSION_FACTOR = 4
_EXPANSION_SLACK = 100_000

# Where a storage's bytes are: (buffer, byte offset of the storage's first element in it).
Located = tuple[Any, int]


@dataclasses.dataclass
class StorageUse:
    """What the tensors listed so far read of one storage: the sum of their spans and the furthest byte."""

    nbytes: int = 0
    end: int = 0


Locate = Callable[[StorageRef, StorageUse], Located]


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
            raise PickleError(f"unexpected persistent id {bounded_repr(pid, 80)}")
        _, storage_type, key, _location, numel = pid[:5]
        if not isinstance(key, str) or not isinstance(numel, int) or isinstance(numel, bool) or numel < 0:
            raise PickleError(f"malformed storage id {bounded_repr(pid, 80)}")
        return StorageRef(key, storage_dtype(storage_type), numel)

    data = _zip_bytes(path, archive, infos[pickles[0]], _MAX_PICKLE_BYTES)
    root, _ = read_pickle(data, ALLOWED, persistent_load, what=f"{path}:data.pkl")
    inflated: dict[str, bytes] = {}

    def locate(ref: StorageRef, use: StorageUse) -> Located:
        info = infos.get(f"{prefix}data/{ref.key}")
        if info is None:
            raise StoreError(f"{path}: storage '{ref.key}' is not in the archive")
        nbytes = ref.numel * DTYPE_SIZES[ref.dtype]
        if info.file_size < nbytes:
            raise StoreError(f"{path}: storage '{ref.key}' holds {info.file_size} bytes, needs {nbytes}")
        if info.compress_type == zipfile.ZIP_STORED:
            start = _entry_start(path, buffer, info)
            return buffer, start
        limit = _INFLATE_FACTOR * use.nbytes + _INFLATE_SLACK
        if info.file_size > limit:
            raise StoreError(
                f"{path}: compressed storage '{ref.key}' inflates to {info.file_size} bytes while its"
                f" tensors read {use.nbytes}; at most {_INFLATE_FACTOR} times that plus {_INFLATE_SLACK}"
                f" ({limit} bytes) is inflated (a deflate bomb?)"
            )
        data = inflated.get(ref.key, b"")
        if len(data) < use.end:
            data = inflated[ref.key] = _inflate(path, archive, info, use.end)
        return data, 0

    return root, _snapshotter(path, locate, big_endian)


def _inflate(path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo, size: int) -> bytes:
    """The first ``size`` bytes of a compressed entry, inflated in chunks so nothing past them is made."""
    out = bytearray()
    try:
        with archive.open(info) as entry:
            while len(out) < size:
                chunk = entry.read(min(size - len(out), _INFLATE_CHUNK))
                if not chunk:
                    break
                out += chunk
    except _ZIP_ERRORS as err:
        raise StoreError(f"{path}: archive entry {info.filename} cannot be read: {err}") from None
    if len(out) < size:
        raise StoreError(f"{path}: archive entry {info.filename} inflates to {len(out)} bytes, needs {size}")
    return bytes(out)


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
        raise StoreError(f"{path}: legacy protocol {bounded_repr(protocol, 20)}, expected {_LEGACY_PROTOCOL}")
    sys_info, pos = read_pickle(buffer, {}, start=pos, what=what)
    little = not isinstance(sys_info, dict) or sys_info.get("little_endian", True)
    roots: dict[str, StorageRef] = {}

    def persistent_load(pid: Any) -> StorageRef:
        if not isinstance(pid, tuple) or len(pid) != 6 or pid[0] != "storage":
            raise PickleError(f"unexpected persistent id {bounded_repr(pid, 80)}")
        _, storage_type, key, _location, numel, view = pid
        if not isinstance(key, str) or not isinstance(numel, int) or isinstance(numel, bool) or numel < 0:
            raise PickleError(f"malformed storage id {bounded_repr(pid, 80)}")
        root = roots.setdefault(key, StorageRef(key, storage_dtype(storage_type), numel))
        if view is None:
            return root
        if not (isinstance(view, tuple) and len(view) == 3 and all(isinstance(v, int) for v in view[1:])):
            raise PickleError(f"malformed storage view {bounded_repr(view, 80)}")
        _, offset, size = view
        if offset < 0 or size < 0 or offset + size > root.numel:
            raise PickleError(f"storage view [{offset}, {offset + size}) outside storage '{key}'")
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

    def locate(ref: StorageRef, use: StorageUse) -> Located:
        if ref.key not in offsets:
            raise StoreError(f"{what}: storage '{ref.key}' has no data")
        return buffer, offsets[ref.key]

    return root_obj, _snapshotter(path, locate, not little)


def _snapshotter(path: Path, locate: Locate, big_endian: bool) -> Callable[[TensorRef, str], TensorSnapshot]:
    # Snapshots are all made before any is read, so a storage's reader knows every tensor's span.
    uses: dict[str, StorageUse] = {}
    counted: set[TensorRef] = set()

    def snapshot(tensor: TensorRef, name: str) -> TensorSnapshot:
        storage = tensor.storage
        offset = tensor.offset + storage.base
        span = 0
        if all(tensor.size):
            last = offset + sum((n - 1) * s for n, s in zip(tensor.size, tensor.stride, strict=True))
            if last >= storage.numel:
                raise StoreError(
                    f"{path}: tensor '{name}' (size {list(tensor.size)}, stride {list(tensor.stride)},"
                    f" offset {offset}) reaches past its storage of {storage.numel} elements"
                )
            span = last + 1 - offset
        itemsize = DTYPE_SIZES[storage.dtype]
        use = uses.setdefault(storage.key, StorageUse())
        if span and tensor not in counted:  # a tensor named along many paths reads its bytes once
            counted.add(tensor)
            use.nbytes += span * itemsize
            use.end = max(use.end, (offset + span) * itemsize)

        def read() -> npt.NDArray[Any]:
            buffer, start = locate(storage, use)
            return _view(buffer, start + offset * itemsize, span, storage.dtype, tensor, big_endian)

        return TensorSnapshot(name, tensor.size, storage.dtype, read)

    return snapshot


def _view(
    buffer: Any, start: int, span: int, dtype: str, tensor: TensorRef, big_endian: bool
) -> npt.NDArray[Any]:
    """The tensor whose ``span`` elements (first to last, strides included) start at byte ``start``."""
    raw_dtype = np.dtype(np.uint16) if dtype == "BF16" else NUMPY_DTYPES[dtype]
    if dtype == "Bool":
        raw_dtype = np.dtype(np.uint8)
    if big_endian:
        raw_dtype = raw_dtype.newbyteorder(">")
    if not all(tensor.size):
        view = np.zeros(tensor.size, dtype=raw_dtype)
    else:
        flat = np.frombuffer(buffer, dtype=raw_dtype, count=span, offset=start)
        strides = tuple(s * raw_dtype.itemsize for s in tensor.stride)
        view = np.lib.stride_tricks.as_strided(flat, tensor.size, strides, writeable=False)
    if dtype == "BF16":
        return bf16_to_f32(view)
    if dtype == "Bool":
        return np.not_equal(view, 0)
    return view if not big_endian else view.astype(raw_dtype.newbyteorder("="))


def flatten(value: object, prefix: str, out: dict[str, TensorRef], *, what: str = "state dict") -> None:
    """Every tensor under ``value`` by dotted path; other leaves (epoch numbers, strings) are left out.

    Shared objects are reached once per path; a tree whose paths outnumber its distinct items by more
    than ``_EXPANSION_FACTOR`` (plus ``_EXPANSION_SLACK``) is refused before any path is made.
    """
    sizes: dict[int, tuple[int, int]] = {}
    expanded, _ = _walk_size(value, (None, prefix) if prefix else None, 0, sizes, what)
    distinct = sum(own for _, own in sizes.values()) + 1
    limit = _EXPANSION_FACTOR * distinct + _EXPANSION_SLACK
    if expanded > limit:
        raise StoreError(
            f"{what}: the saved object reaches {expanded} items along all paths of its shared references,"
            f" but holds only {distinct} distinct ones; at most {limit} are walked"
            f" ({_EXPANSION_FACTOR} times that plus {_EXPANSION_SLACK})"
        )
    _flatten(value, prefix, out)


def _children(value: object) -> list[tuple[object, object]]:
    """(key, item) of each item ``_flatten`` descends into."""
    if isinstance(value, dict):
        return [
            (key, item)
            for key, item in value.items()
            if isinstance(key, (str, int)) and not isinstance(key, bool)
        ]
    if isinstance(value, (list, tuple)):
        return list(enumerate(value))
    return []


# A path as a chain of (parent, key): its dotted name is only made for an error message.
_Path = tuple[Any, object] | None


def _path_name(path: _Path) -> str:
    keys: list[str] = []
    while path is not None:
        path, key = path
        keys.append(str(key)[:40])
    return ".".join(reversed(keys))


def _walk_size(
    value: object, path: _Path, depth: int, sizes: dict[int, tuple[int, int]], what: str
) -> tuple[int, int]:
    """(items ``_flatten`` visits under ``value``, items ``value`` holds itself), each container once.

    ``sizes`` maps a container's id to both; every container stays alive under the root meanwhile.
    """
    if not isinstance(value, (dict, list, tuple)):
        return 1, 0
    known = sizes.get(id(value))
    if known is not None:
        return known
    if depth > _MAX_DEPTH:
        raise StoreError(f"{what}: nesting deeper than {_MAX_DEPTH} levels at '{_path_name(path)}'")
    children = _children(value)
    expanded = 1 + sum(_walk_size(item, (path, key), depth + 1, sizes, what)[0] for key, item in children)
    sizes[id(value)] = (expanded, len(children))
    return expanded, len(children)


def _flatten(value: object, prefix: str, out: dict[str, TensorRef]) -> None:
    if isinstance(value, TensorRef):
        out[prefix] = value
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, (str, int)) and not isinstance(key, bool):
                _flatten(item, f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _flatten(item, f"{prefix}.{i}" if prefix else str(i), out)
