"""Hostile files cost work and memory bounded by their size: shared-reference pickles, deflate bombs, .npy.

Each hostile file is written here opcode by opcode (no torch) and loaded in a fresh interpreter with a
timeout, so a regression fails instead of hanging, and the child's peak memory growth is measured.
"""

from __future__ import annotations

import json
import os
import pickle
import sqlite3
import struct
import subprocess
import sys
import textwrap
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from ferrum.data.dataset import SqliteDataset, SqliteDatasetWriter
from ferrum.store import PytorchStore, StoreError
from ferrum.store.pytorch.pickle import bounded_repr

LEVELS = 40  # 2**40 paths: the loads below would never end if any walk followed every path
MAX_GROWTH_MIB = 200
TIMEOUT = 60


# --- pickle opcodes ---------------------------------------------------------------------------


def _text(value: str) -> bytes:
    raw = value.encode()
    return pickle.BINUNICODE + struct.pack("<I", len(raw)) + raw


def _global(module: str, name: str) -> bytes:
    return pickle.GLOBAL + f"{module}\n{name}\n".encode()


def _int(value: int) -> bytes:
    return pickle.BININT + struct.pack("<i", value)


def _get(key: int) -> bytes:
    return pickle.BINGET + bytes([key])


def _dag(kind: str, leaf: bytes, levels: int = LEVELS) -> bytes:
    """Pushes a ``kind`` whose each level holds the one below twice (through the memo): 2**levels paths."""
    out = leaf + pickle.BINPUT + bytes([0]) + pickle.POP
    for level in range(1, levels + 1):
        below = _get(level - 1)
        if kind == "list":
            out += pickle.EMPTY_LIST + pickle.MARK + below + below + pickle.APPENDS
        elif kind == "tuple":
            out += below + below + pickle.TUPLE2
        else:
            out += pickle.EMPTY_DICT + pickle.MARK + _text("a") + below + _text("b") + below + pickle.SETITEMS
        out += pickle.BINPUT + bytes([level]) + pickle.POP
    return out + _get(levels)


def _persid(numel: int = 3, storage_type: bytes = _global("torch", "FloatStorage")) -> bytes:
    parts = _text("storage") + storage_type + _text("0") + _text("cpu") + _int(numel)
    return pickle.MARK + parts + pickle.TUPLE + pickle.BINPERSID


def _tensor(
    size: bytes = _int(3) + pickle.TUPLE1,
    stride: bytes = _int(1) + pickle.TUPLE1,
    persid: bytes = b"",
    offset: int = 0,
) -> bytes:
    """``_rebuild_tensor_v2(storage, offset, size, stride, False, OrderedDict())``."""
    hooks = _global("collections", "OrderedDict") + pickle.EMPTY_TUPLE + pickle.REDUCE
    args = (persid or _persid()) + _int(offset) + size + stride + pickle.NEWFALSE + hooks
    return _global("torch._utils", "_rebuild_tensor_v2") + pickle.MARK + args + pickle.TUPLE + pickle.REDUCE


def _dict(*items: tuple[bytes, bytes]) -> bytes:
    return pickle.EMPTY_DICT + pickle.MARK + b"".join(k + v for k, v in items) + pickle.SETITEMS


def _pickled(body: bytes, protocol: int = 2) -> bytes:
    return pickle.PROTO + bytes([protocol]) + body + pickle.STOP


def _torch_zip(path: Path, data_pkl: bytes, storage: bytes = b"\0" * 12) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("archive/data.pkl", data_pkl)
        archive.writestr("archive/data/0", storage)
        archive.writestr("archive/version", "3\n")
    return path


# The placements of a 2**40-path DAG found to hang the loader, and what each one is refused for.
DAG_CASES: dict[str, tuple[bytes, str]] = {
    "state-dict values (list)": (
        _pickled(_dict((_text("w"), _dag("list", _tensor())))),
        "reaches 2199023255552 items along all paths",
    ),
    "state-dict values (dict)": (
        _pickled(_dict((_text("w"), _dag("dict", _tensor())))),
        "reaches 2199023255552 items along all paths",
    ),
    "state-dict values (tuple)": (
        _pickled(_dict((_text("w"), _dag("tuple", _tensor())))),
        "reaches 2199023255552 items along all paths",
    ),
    "dict keys": (
        _pickled(_dict((_dag("tuple", _int(7)), _int(1)))),
        "a dict key or set member expands to more than 10000 values",
    ),
    "frozensets": (
        _pickled(pickle.MARK + _dag("tuple", _int(7)) + pickle.FROZENSET, protocol=4),
        "a dict key or set member expands to more than 10000 values",
    ),
    "set members": (
        _pickled(pickle.EMPTY_SET + pickle.MARK + _dag("tuple", _int(7)) + pickle.ADDITEMS, protocol=4),
        "a dict key or set member expands to more than 10000 values",
    ),
    "persistent ids": (
        _pickled(_dag("tuple", _int(7)) + pickle.BINPERSID),
        "unexpected persistent id ((((((((",
    ),
    "storage types": (
        _pickled(_tensor(persid=_persid(storage_type=_dag("list", _int(7))))),
        "persistent id names [[[[[[",
    ),
    "tensor sizes": (
        _pickled(_tensor(size=_dag("list", _text("x")))),
        "tensor size must be a tuple of non-negative integers, found [[[[",
    ),
    "torch.device args": (
        _pickled(_global("torch", "device") + _dag("tuple", _int(0)) + pickle.TUPLE1 + pickle.REDUCE),
        "is not a device name",
    ),
}

_CHILD = textwrap.dedent("""
    import json, sys, time

    def status(field):
        for line in open("/proc/self/status"):
            if line.startswith(field):
                return int(line.split()[1]) / 1024

    from ferrum.store import PytorchStore, StoreError
    from ferrum.store.pytorch.reader import read_torch_file

    path, key = sys.argv[1], sys.argv[2]
    start_rss, start = status("VmRSS:"), time.perf_counter()
    error = None
    try:
        store = PytorchStore.from_file(path)
        if key:
            store = store.with_top_level_key(key)
        for snapshot in store.snapshots().values():
            snapshot.to_numpy()
    except StoreError as err:
        error = str(err)
    print(json.dumps({
        "error": error,
        "seconds": time.perf_counter() - start,
        "growth_mib": status("VmHWM:") - start_rss,
    }))
""")


@dataclass
class Load:
    error: str | None
    seconds: float
    growth_mib: float


def _load_in_child(path: Path, key: str = "") -> Load:
    """Loads every tensor of ``path`` in a fresh interpreter: the error, the time and the peak RSS growth.

    VmHWM is read in the child itself: getrusage's ru_maxrss would count the parent's peak across exec.
    """
    if not os.path.exists("/proc/self/status"):
        pytest.skip("needs Linux's /proc to read a process's peak memory")
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), key],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )
    return Load(**json.loads(out.stdout))


@pytest.mark.parametrize("case", sorted(DAG_CASES))
def test_a_shared_reference_dag_is_refused_in_bounded_time_and_memory(tmp_path: Path, case: str) -> None:
    data_pkl, message = DAG_CASES[case]
    assert len(data_pkl) < 1200  # a few hundred bytes, 2**40 paths
    path = _torch_zip(tmp_path / "dag.pt", data_pkl)
    load = _load_in_child(path)
    assert load.error is not None and str(path) in load.error and message in load.error, load.error
    assert len(load.error) < 600, load.error  # untrusted values appear cut short
    assert load.growth_mib < MAX_GROWTH_MIB and load.seconds < 10, load


def test_a_top_level_key_error_shows_the_keys_cut_short(tmp_path: Path) -> None:
    long_key = _dag("tuple", _int(7), levels=12)  # 4096 leaves: hashable within the limit, long to print
    path = _torch_zip(tmp_path / "keys.pt", _pickled(_dict((long_key, _int(1)))))
    with pytest.raises(StoreError, match=r"no top-level key 'model' \(its keys: \(\(\(\(") as info:
        PytorchStore.from_file(path).with_top_level_key("model").snapshots()
    assert len(str(info.value)) < 300


def test_a_legacy_file_with_a_dag_for_its_protocol_is_refused_quickly(tmp_path: Path) -> None:
    magic = pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2)
    path = tmp_path / "legacy.pt"
    path.write_bytes(magic + _pickled(_dag("list", _int(1))))
    load = _load_in_child(path)
    assert load.error is not None and "legacy protocol [[[[" in load.error, load.error
    assert load.growth_mib < MAX_GROWTH_MIB and load.seconds < 10, load


def test_shared_state_dicts_within_the_expansion_limit_still_load(tmp_path: Path) -> None:
    # A checkpoint holding one state dict under two keys, and a 12-level DAG (4096 paths): both legitimate
    # in size, each tensor named once per path.
    state = _dict((_text("w"), _tensor()))
    twice = _pickled(
        state
        + pickle.BINPUT
        + bytes([200])
        + pickle.POP
        + _dict((_text("model"), _get(200)), (_text("ema"), _get(200)))
    )
    values = np.arange(3, dtype="<f4")
    snapshots = PytorchStore.from_file(_torch_zip(tmp_path / "twice.pt", twice, values.tobytes())).snapshots()
    assert sorted(snapshots) == ["ema.w", "model.w"]
    np.testing.assert_array_equal(snapshots["ema.w"].to_numpy(), values)
    dag = _pickled(_dict((_text("w"), _dag("list", _tensor(), levels=12))))
    snapshots = PytorchStore.from_file(_torch_zip(tmp_path / "dag12.pt", dag, values.tobytes())).snapshots()
    assert len(snapshots) == 4096 and "w.0.1.0.1.0.1.0.1.0.1.0.1" in snapshots


def test_bounded_repr_cuts_deep_wide_and_long_values() -> None:
    plain: tuple[object, ...] = ({"a": [1, (2,), frozenset(), {3}], "b": None}, (), [()], {}, set(), "x")
    for value in plain:
        assert bounded_repr(value) == repr(value)
    wide = bounded_repr(list(range(10**6)), 40)
    assert len(wide) == 40 and wide.endswith("...")
    assert len(bounded_repr("x" * 10**7, 30)) == 30
    assert bounded_repr(10**400) == "<int of 1329 bits>"
    deep: Any = []
    for _ in range(100_000):
        deep = [deep, deep]
    assert bounded_repr(deep, 20) == "[[[[[[[[[[[[[[[[[..."


# --- deflate bombs ----------------------------------------------------------------------------


def _bomb(path: Path, inflated: int, size: int, offset: int = 0) -> Path:
    """A zip whose one storage deflates ``inflated`` zero bytes, viewed by a tensor of ``size`` floats."""
    numel = inflated // 4
    tensor = _tensor(size=_int(size) + pickle.TUPLE1, persid=_persid(numel), offset=offset)
    pkl = _pickled(_dict((_text("w"), tensor)))
    chunk = bytes(64 << 20)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("archive/data.pkl", pkl)
        with archive.open("archive/data/0", "w", force_zip64=True) as entry:
            for done in range(0, inflated, len(chunk)):
                entry.write(chunk[: min(len(chunk), inflated - done)])
    return path


def test_a_deflate_bomb_storage_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    path = _bomb(tmp_path / "bomb.pt", 2 << 30, size=12)
    assert path.stat().st_size < 4 << 20
    load = _load_in_child(path)
    assert load.error is not None and str(path) in load.error, load
    assert "compressed storage '0' inflates to 2147483648 bytes while its tensors read 48" in load.error
    assert load.growth_mib < MAX_GROWTH_MIB and load.seconds < 10, load


def test_a_compressed_storage_reads_only_up_to_its_tensors(tmp_path: Path) -> None:
    # 16 KiB of storage, 12 floats used at element 100: within the slack, so loaded, inflating 448 bytes.
    values = np.arange(4096, dtype="<f4")
    tensor = _tensor(size=_int(12) + pickle.TUPLE1, persid=_persid(4096), offset=100)
    pkl = _pickled(_dict((_text("w"), tensor)))
    path = tmp_path / "compressed.pt"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("archive/data.pkl", pkl)
        archive.writestr("archive/data/0", values.tobytes())
    np.testing.assert_array_equal(PytorchStore.from_file(path).snapshots()["w"].to_numpy(), values[100:112])


# --- .npy columns -----------------------------------------------------------------------------


@dataclass
class Row:
    x: npt.NDArray[np.float32]


def _dataset_with_blob(tmp_path: Path, blob: bytes) -> Callable[[], Any]:
    db = tmp_path / "data.db"
    with SqliteDatasetWriter(db, Row) as writer:
        writer.write("train", Row(np.zeros(2, dtype=np.float32)))
    with sqlite3.connect(db) as connection:
        connection.execute('UPDATE "train" SET "x" = ?', (blob,))
    connection.close()
    dataset = SqliteDataset.from_db_file(db, "train", Row)
    return lambda: dataset.get(0)


def _npy_header(shape: tuple[int, ...]) -> bytes:
    header = repr({"descr": "<f8", "fortran_order": False, "shape": shape}).encode()
    header += b" " * (63 - (10 + len(header)) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header


def test_an_npy_column_claiming_terabytes_names_the_row_and_field(tmp_path: Path) -> None:
    get = _dataset_with_blob(tmp_path, _npy_header((1 << 40,)) + bytes(10))
    with pytest.raises(
        ValueError,
        match=r"table 'train' row 0: field 'x': \.npy header claims shape \(1099511627776,\) of float64"
        r" \(8796093022208 bytes\), but the BLOB holds 10 bytes of data",
    ):
        get()


def test_an_npy_column_with_a_broken_header_is_a_value_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"row 0: field 'x': BLOB is not a valid \.npy array"):
        _dataset_with_blob(tmp_path, b"\x93NUMPY\x01")()
    exact = _npy_header((2,)) + np.array([1.5, 2.5]).tobytes()
    (tmp_path / "exact").mkdir()
    np.testing.assert_array_equal(_dataset_with_blob(tmp_path / "exact", exact)().x, [1.5, 2.5])
