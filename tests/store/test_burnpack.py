"""``BurnpackStore``: Burn's ``.bpk`` layout, ids, Burn's own files, damaged files.

``burn_model.bpk`` was written by Burn 0.20.1's ``BurnpackStore`` (interop/burn,
``save``) from the interop model of tests/support/burn_interop_model.py.
"""

from __future__ import annotations

import os
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from ferrum.store import BurnpackStore, PytorchStore, StoreError, TensorSnapshot
from ferrum.store.burnpack.cbor import CborError, decode
from ferrum.store.burnpack.format import write_burnpack

from tests.support.burn_interop_model import DEVICE, check, fresh, leaves, model
from tests.support.store_models import STORE_FIXTURES, mlp

BURN_BPK = STORE_FIXTURES / "burn_model.bpk"


def _layout(path: Path) -> tuple[int, int, int, dict[str, object], int]:
    raw = path.read_bytes()
    magic, version, size = struct.unpack_from("<IHI", raw)
    meta = decode(raw[10 : 10 + size])
    assert isinstance(meta, dict)
    return magic, version, size, meta, -(-(10 + size) // 256) * 256


def test_round_trip_restores_values_and_parameter_ids(tmp_path: Path) -> None:
    ours = mlp(DEVICE).load_from(PytorchStore.from_file(STORE_FIXTURES / "mlp.pt"))
    ours.save_into(BurnpackStore.from_file(tmp_path / "m").metadata("note", "hi"))
    assert (tmp_path / "m.bpk").exists()  # Burn's automatic extension
    again = mlp(DEVICE).load_from(BurnpackStore.from_file(tmp_path / "m"))
    for (name, a), (_, b) in zip(ours.named_parameters(), again.named_parameters(), strict=True):
        assert a.id == b.id, name
        np.testing.assert_array_equal(a.val().to_numpy(), b.val().to_numpy(), err_msg=name)
    assert BurnpackStore.from_file(tmp_path / "m").file_metadata()["note"] == "hi"
    assert BurnpackStore.from_file(tmp_path / "m").auto_extension(False).file_path() == tmp_path / "m"


def test_layout_matches_burns_spec(tmp_path: Path) -> None:
    model().save_into(BurnpackStore.from_file(tmp_path / "x.bpk").clear_metadata())
    magic, version, _, meta, data_start = _layout(tmp_path / "x.bpk")
    assert (magic, version) == (0x4255524E, 1) and (tmp_path / "x.bpk").read_bytes()[:4] == b"NRUB"
    tensors = meta["tensors"]
    assert isinstance(tensors, dict) and list(tensors) == sorted(tensors) and "metadata" not in meta
    assert tensors["fc.weight"] == {"dtype": "F32", "shape": [4, 3], "data_offsets": [0, 48],
                                    "param_id": 0x0123456789ABCDEF * 2}  # fmt: skip
    raw = (tmp_path / "x.bpk").read_bytes()
    for name, desc in tensors.items():
        start, end = desc["data_offsets"]
        assert start % 256 == 0, name
        values = np.frombuffer(raw[data_start + start : data_start + end], "<f4").reshape(desc["shape"])
        found = {path: value for path, _, value in leaves(model())}[name]
        np.testing.assert_array_equal(values, found, err_msg=name)


def test_burns_file_loads_with_values_and_ids() -> None:
    check(fresh().load_from(BurnpackStore.from_file(BURN_BPK)))
    assert BurnpackStore.from_file(BURN_BPK).file_metadata() == {
        "format": "burnpack", "producer": "burn", "version": "0.20.1"
    }  # fmt: skip


def test_ferrum_writes_burns_bytes(tmp_path: Path) -> None:
    store = BurnpackStore.from_file(tmp_path / "ours.bpk").clear_metadata()
    for key, value in BurnpackStore.from_file(BURN_BPK).file_metadata().items():
        store = store.metadata(key, value)
    model().save_into(store)
    assert (tmp_path / "ours.bpk").read_bytes() == BURN_BPK.read_bytes()


@pytest.mark.skipif(
    not os.environ.get("FERRUM_BURN_INTEROP"), reason="set FERRUM_BURN_INTEROP to the built interop program"
)
def test_burn_loads_ferrums_file(tmp_path: Path) -> None:
    model().save_into(BurnpackStore.from_file(tmp_path / "ferrum_model.bpk"))
    done = subprocess.run(
        [os.environ["FERRUM_BURN_INTEROP"], "load", str(tmp_path)], capture_output=True, text=True
    )
    assert "ok ferrum_model.bpk (14 tensors applied)" in done.stdout, done.stdout + done.stderr


def test_half_and_integer_tensors_read_back(tmp_path: Path) -> None:
    half = np.array([1.5, -2.25], np.float16)
    snaps = [
        TensorSnapshot.from_numpy("h", half),
        TensorSnapshot.from_numpy("i", np.array([[1, -2]], np.int64)),
        TensorSnapshot.from_numpy("b", np.array([True, False])),
    ]
    write_burnpack(tmp_path / "t.bpk", snaps, {})
    found = BurnpackStore.from_file(tmp_path / "t.bpk").snapshots()
    assert {k: v.dtype for k, v in found.items()} == {"b": "Bool", "h": "F16", "i": "I64"}
    np.testing.assert_array_equal(found["h"].to_numpy(), half)
    np.testing.assert_array_equal(found["b"].to_numpy(), [True, False])


def _damaged(tmp_path: Path, data: bytes) -> BurnpackStore:
    (tmp_path / "d.bpk").write_bytes(data)
    return BurnpackStore.from_file(tmp_path / "d.bpk")


def test_damaged_files_are_store_errors(tmp_path: Path) -> None:
    good = BURN_BPK.read_bytes()
    _, _, size, _, data_start = _layout(BURN_BPK)
    cases = [
        (b"NRU", "too short for a Burnpack header"),
        (b"PK\x03\x04" + good[4:], "not a Burnpack file"),
        (good[:4] + b"\x02\x00" + good[6:], "version 2 is newer"),
        (good[:6] + struct.pack("<I", 1 << 30) + good[10:], "does not fit"),
        (good[: data_start + 100], "runs past the end of the file"),
        (good[:10] + b"\xff" + good[11:], "damaged Burnpack metadata"),
    ]
    for data, message in cases:
        with pytest.raises(StoreError, match=message):
            _damaged(tmp_path, data).keys()
    with pytest.raises(StoreError, match="does not exist"):
        BurnpackStore.from_file(tmp_path / "none.bpk").keys()
    assert size > 0


def test_metadata_items_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("ferrum.store.burnpack.cbor._MAX_ITEMS", 100)
    with pytest.raises(CborError, match="more than 100 items"):
        decode(b"\x98\xc8" + b"\x00" * 200)  # an array of 200 zeros
    assert decode(b"\x98\x32" + b"\x00" * 50) == [0] * 50


def test_a_failed_save_leaves_no_file_behind(tmp_path: Path) -> None:
    def broken() -> np.ndarray:
        raise OSError("disk gone")

    snaps = [TensorSnapshot.from_numpy("a", np.ones(3, np.float32)), TensorSnapshot("b", (2,), "F32", broken)]
    with pytest.raises(OSError, match="disk gone"):
        write_burnpack(tmp_path / "t.bpk", snaps, {})
    assert list(tmp_path.iterdir()) == []
    model().save_into(BurnpackStore.from_file(tmp_path / "ok.bpk"))
    assert oct((tmp_path / "ok.bpk").stat().st_mode & 0o777) == oct(0o666 & ~_umask())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
