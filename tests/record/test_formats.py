"""ferrum's record files read back with the independent msgpack/json/gzip readers, against Burn's layout."""

from __future__ import annotations

import gzip
import json
import struct
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import numpy as np
from ferrum import Tensor
from ferrum.backend import NdArray
from ferrum.record import (
    FullPrecisionSettings,
    HalfPrecisionSettings,
    JsonGzFileRecorder,
    NamedMpkFileRecorder,
    NamedMpkGzFileRecorder,
    PrettyJsonFileRecorder,
)

DEVICE = NdArray.device()
WEIGHT = [[1.0, -2.5, 0.25], [3.0, 0.5, -1.0]]


def _record() -> dict[str, Any]:
    return {"fc": {"weight": {"id": "1", "param": Tensor.from_floats(WEIGHT, DEVICE)}}}


def _read_mpk(path: Path) -> Any:
    return msgpack.unpackb(path.read_bytes(), raw=False)


def test_mpk_top_level_and_metadata(tmp_path: Path) -> None:
    NamedMpkFileRecorder(FullPrecisionSettings).record(_record(), tmp_path / "m")
    top = _read_mpk(tmp_path / "m.mpk")
    assert list(top) == ["metadata", "item", "_b"]
    assert top["_b"] == []
    meta = top["metadata"]
    assert list(meta) == ["float", "int", "format", "version", "settings"]
    assert (meta["float"], meta["int"], meta["version"], meta["settings"]) == (
        "f32",
        "i32",
        "0.20.1",
        "FullPrecisionSettings",
    )
    assert "NamedMpkFileRecorder" in meta["format"]
    assert (tmp_path / "m.mpk").read_bytes()[:1] == b"\x83"  # fixmap of 3 entries


def test_mpk_param_and_tensor_data(tmp_path: Path) -> None:
    NamedMpkFileRecorder(FullPrecisionSettings).record(_record(), tmp_path / "m")
    param = _read_mpk(tmp_path / "m.mpk")["item"]["fc"]["weight"]
    assert list(param) == ["id", "param"]
    # id 1 as 8 LE bytes in lowercase base32hex without padding.
    assert param["id"] == "0400000000000"
    data = param["param"]
    assert list(data) == ["bytes", "shape", "dtype"]
    assert data["shape"] == [2, 3] and data["dtype"] == "F32"
    assert isinstance(data["bytes"], bytes)
    assert data["bytes"] == struct.pack("<6f", *np.array(WEIGHT, dtype=np.float32).ravel())


def test_half_precision_stores_f16(tmp_path: Path) -> None:
    NamedMpkFileRecorder(HalfPrecisionSettings).record(_record(), tmp_path / "h")
    top = _read_mpk(tmp_path / "h.mpk")
    # Burn writes type_name::<half::f16>().
    assert (top["metadata"]["float"], top["metadata"]["int"]) == ("half::binary16::f16", "i16")
    data = top["item"]["fc"]["weight"]["param"]
    assert data["dtype"] == "F16"
    assert data["bytes"] == np.array(WEIGHT, dtype="<f2").tobytes()


def test_gzip_and_json_layouts(tmp_path: Path) -> None:
    NamedMpkGzFileRecorder(FullPrecisionSettings).record(_record(), tmp_path / "g")
    raw = (tmp_path / "g.mpk.gz").read_bytes()
    assert raw[:2] == b"\x1f\x8b"
    assert msgpack.unpackb(gzip.decompress(raw))["item"]["fc"]["weight"]["id"] == "0400000000000"

    JsonGzFileRecorder(FullPrecisionSettings).record(_record(), tmp_path / "j")
    doc = json.loads(gzip.decompress((tmp_path / "j.json.gz").read_bytes()))
    assert list(doc) == ["metadata", "item", "_b"] and doc["_b"] is None
    data = doc["item"]["fc"]["weight"]["param"]
    assert data["bytes"] == list(np.array(WEIGHT, dtype=np.float32).tobytes())
    assert data["shape"] == [2, 3] and data["dtype"] == "F32"

    PrettyJsonFileRecorder(FullPrecisionSettings).record(_record(), tmp_path / "p")
    text = (tmp_path / "p.json").read_text()
    assert "\n  " in text
    assert json.loads(text)["metadata"]["settings"] == "FullPrecisionSettings"


def test_reads_a_file_written_by_another_msgpack_writer(tmp_path: Path) -> None:
    # A Burn-style file built with msgpack, holding an old UUID id and f64 data.
    payload = {
        "metadata": {
            "float": "f64",
            "int": "i64",
            "format": "x",
            "version": "0.20.1",
            "settings": "DoublePrecisionSettings",
        },
        "item": {
            "w": {
                "id": "01000000-0000-0000-0000-000000000000",
                "param": {"bytes": struct.pack("<2d", 1.5, -2.0), "shape": [2], "dtype": "F64"},
            },
            "extra": None,
        },
        "_b": None,
    }
    (tmp_path / "b.mpk").write_bytes(msgpack.packb(payload, use_bin_type=True))
    schema = {"w": {"id": "5", "param": Tensor.zeros((2,), DEVICE)}}
    loaded = NamedMpkFileRecorder(FullPrecisionSettings).load(tmp_path / "b", DEVICE, schema)
    assert loaded["w"]["id"] == "1"
    assert loaded["w"]["param"].to_data().to_list() == [1.5, -2.0]
