"""Interop with Burn 0.20.1 itself, without compiling Burn.

tests/fixtures/burn/ holds the files interop/burn (a Burn program) wrote with
every file recorder at every precision: a model with a Linear with and
without bias, a Conv2d, a BatchNorm, an Embedding and a list of Linears, and
an Adam record; configs/ holds every config class written by Burn's
Config::save (tests/support/burn_interop_configs.py builds the same ones). ferrum must
load each one to the values of the formulas (computed here with NumPy), and
write the same bytes (or, where Burn's output is not deterministic, the same
decoded structure; for configs the same JSON values). The Burn SQLite dataset
(dataset.db) is read in tests/data/test_dataset_sqlite.py. The last test runs the
Burn program on ferrum's files when it has been built (see interop/burn/README.md).
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import numpy as np
import pytest
from ferrum import Tensor, _ferrum
from ferrum.data.dataset import SqliteDatasetWriter
from ferrum.module import Module
from ferrum.optim import AdamConfig
from ferrum.record import FileRecorder

from tests.support.burn_interop_configs import CONFIGS
from tests.support.burn_interop_model import (
    ADAM_LAYOUT,
    ADAM_TIME,
    DEVICE,
    FIXTURES,
    check,
    fresh,
    id_of,
    model,
    moment_2,
    values,
)
from tests.support.burn_interop_quantized import CASES as QUANTIZED_CASES
from tests.support.burn_interop_quantized import write_quantized
from tests.support.burn_interop_sqlite import SPLITS as SQLITE_SPLITS
from tests.support.burn_interop_sqlite import Item as SqliteItem
from tests.support.burn_interop_sqlite import item as sqlite_item
from tests.support.recorders import PRECISIONS, RECORDERS, SELF_DESCRIBING

CASES = [(r, p) for r in RECORDERS for p in PRECISIONS]
BURN_BINARY_ENV = "FERRUM_BURN_INTEROP"
DEFAULT_BINARY = (
    Path(__file__).resolve().parents[2] / "interop" / "burn" / "target" / "debug" / "ferrum-burn-interop"
)


def _recorder(name: str, precision: str) -> FileRecorder:
    return RECORDERS[name](PRECISIONS[precision])


def _decoded(path: Path) -> Any:
    """The structure of a record file, read with Python's own msgpack/json/gzip."""
    raw = path.read_bytes()
    if path.name.endswith(".gz"):
        raw = gzip.decompress(raw)
    if ".json" in path.name:
        return json.loads(raw)
    if ".mpk" in path.name:
        return msgpack.unpackb(raw, raw=False)
    return raw


@pytest.mark.parametrize(("name", "precision"), CASES)
def test_burn_written_model_loads_with_every_value(name: str, precision: str) -> None:
    recorder = _recorder(name, precision)
    net = fresh().load_file(FIXTURES / f"{name}_{precision}", recorder, DEVICE)
    check(net)


def _assert_written_as_burn(
    net: Module[Any], tmp_path: Path, fixture: str, name: str, precision: str
) -> None:
    """``net`` saved with recorder ``name`` at ``precision`` has the bytes of Burn's ``fixture``."""
    recorder = _recorder(name, precision)
    net.save_file(tmp_path / "net", recorder)
    ours = Path(recorder.file_path(tmp_path / "net"))
    burns = Path(recorder.file_path(FIXTURES / fixture))
    if name.endswith("_gz"):
        # gzip headers and deflate choices may differ between writers: compare the payload.
        assert gzip.decompress(ours.read_bytes()) == gzip.decompress(burns.read_bytes())
    else:
        assert ours.read_bytes() == burns.read_bytes()


@pytest.mark.parametrize(("name", "precision"), CASES)
def test_ferrum_writes_what_burn_writes(tmp_path: Path, name: str, precision: str) -> None:
    _assert_written_as_burn(model(), tmp_path, f"{name}_{precision}", name, precision)


def test_bincode_marks_the_optional_bias(tmp_path: Path) -> None:
    # Burn writes a 1 before a present Option field and a 0 for None (head has no bias).
    raw = (FIXTURES / "bin_full.bin").read_bytes()
    head_weight = values((3, 2), 3).astype("<f4").tobytes()
    at = raw.index(head_weight) + len(head_weight)
    assert raw[at : at + 5] == bytes([2, 3, 2, 1, 0])  # shape [3, 2], dtype F32 (1), bias None (0)
    fc_bias = values((3,), 2).astype("<f4").tobytes()
    before = raw.index(fc_bias)
    assert raw[before - 16] == 1  # Some: 1, then the id (13 chars + length) and the bytes length


def _adam_check(record: dict[str, Any]) -> None:
    optim = AdamConfig().init().load_record(record)
    state = optim.to_record()
    assert sorted(state) == sorted(str(id_of(salt)) for _, _, salt in ADAM_LAYOUT)
    for _, shape, salt in ADAM_LAYOUT:
        versioned = state[str(id_of(salt))]
        assert list(versioned) == ["V1"] and list(versioned["V1"]) == [f"Rank{len(shape)}"]
        momentum = versioned["V1"][f"Rank{len(shape)}"]["momentum"]
        assert momentum["time"] == ADAM_TIME
        np.testing.assert_array_equal(momentum["moment_1"].to_numpy(), values(shape, salt))
        np.testing.assert_array_equal(momentum["moment_2"].to_numpy(), moment_2(shape, salt))


def _adam_record() -> dict[str, Any]:
    def tensor(array: np.ndarray[Any, Any]) -> Tensor[Any, Any, Any]:
        return Tensor.from_numpy(array.astype(np.float32), DEVICE)

    return {
        str(id_of(salt)): {
            "V1": {
                f"Rank{len(shape)}": {
                    "momentum": {
                        "time": ADAM_TIME,
                        "moment_1": tensor(values(shape, salt)),
                        "moment_2": tensor(moment_2(shape, salt)),
                    }
                }
            }
        }
        for _, shape, salt in ADAM_LAYOUT
    }


@pytest.mark.parametrize("name", SELF_DESCRIBING)
@pytest.mark.parametrize("precision", list(PRECISIONS))
def test_burn_written_adam_record_loads(name: str, precision: str) -> None:
    record = _recorder(name, precision).load(FIXTURES / f"adam_{name}_{precision}", DEVICE)
    _adam_check(record)


@pytest.mark.parametrize("name", SELF_DESCRIBING)
@pytest.mark.parametrize("precision", list(PRECISIONS))
def test_ferrum_adam_record_has_burns_structure(tmp_path: Path, name: str, precision: str) -> None:
    recorder = _recorder(name, precision)
    optim = AdamConfig().init().load_record(_adam_record())
    recorder.record(optim.to_record(), tmp_path / "adam")
    # Burn keeps the states in a HashMap, so its key order varies: compare decoded maps.
    ours = _decoded(Path(recorder.file_path(tmp_path / "adam")))
    burns = _decoded(Path(recorder.file_path(FIXTURES / f"adam_{name}_{precision}")))
    assert ours == burns
    _adam_check(recorder.load(tmp_path / "adam", DEVICE))


BINCODE = ["bin", "bin_gz"]


def _payload(path: Path) -> bytes:
    raw = path.read_bytes()
    return gzip.decompress(raw) if path.name.endswith(".gz") else raw


@pytest.mark.parametrize("name", BINCODE)
@pytest.mark.parametrize("precision", list(PRECISIONS))
def test_burn_written_bincode_adam_record_loads(name: str, precision: str) -> None:
    recorder = _recorder(name, precision)
    schema = AdamConfig().init().record_schema(DEVICE)
    _adam_check(recorder.load(FIXTURES / f"adam_{name}_{precision}", DEVICE, schema))


@pytest.mark.parametrize("name", BINCODE)
@pytest.mark.parametrize("precision", list(PRECISIONS))
def test_ferrum_bincode_adam_record_has_burns_bytes(tmp_path: Path, name: str, precision: str) -> None:
    # Burn's HashMap writes its entries in any order: Burn's file must be the header, the
    # map length 2 and ferrum's bytes of each entry (each written alone) in some order.
    recorder = _recorder(name, precision)
    record = AdamConfig().init().load_record(_adam_record()).to_record()
    header, entries = b"", []
    for key, value in record.items():
        recorder.record({key: value}, tmp_path / key)
        single = _payload(Path(recorder.file_path(tmp_path / key)))
        text = _ferrum.param_id_encode(int(key)).encode()
        at = single.index(bytes([len(text)]) + text)
        assert single[at - 1] == 1  # a map of one entry
        header, entry = single[: at - 1], single[at:]
        rank = int(next(iter(value["V1"]))[4:])
        assert entry[len(text) + 1 : len(text) + 3] == bytes([0, rank])  # V1 is variant 0, Rank<N> is N
        entries.append(entry)
    burns = _payload(Path(recorder.file_path(FIXTURES / f"adam_{name}_{precision}")))
    start = header + bytes([2])
    assert burns in {start + entries[0] + entries[1], start + entries[1] + entries[0]}


def _write_all(out: Path) -> None:
    net = model()
    optim = AdamConfig().init().load_record(_adam_record())
    for name, precision in CASES:
        recorder = _recorder(name, precision)
        net.save_file(out / f"{name}_{precision}", recorder)
        recorder.record(optim.to_record(), out / f"adam_{name}_{precision}")
    write_quantized(out)
    (out / "configs").mkdir()
    for stem, config in CONFIGS:
        config.save(out / "configs" / f"{stem}.json")
    with SqliteDatasetWriter(out / "dataset.db", SqliteItem, row_serialized=True) as writer:
        for split, n in SQLITE_SPLITS.items():
            writer.write_all(split, [sqlite_item(i) for i in range(n)])


@pytest.mark.parametrize(("stem", "config"), CONFIGS, ids=[stem for stem, _ in CONFIGS])
def test_burn_written_config_loads(stem: str, config: Any) -> None:
    path = FIXTURES / "configs" / f"{stem}.json"
    assert type(config).load(path) == config


@pytest.mark.parametrize(("stem", "config"), CONFIGS, ids=[stem for stem, _ in CONFIGS])
def test_ferrum_writes_burns_config_json(tmp_path: Path, stem: str, config: Any) -> None:
    # Same JSON values (key order and float spelling aside); Burn reading them is checked below.
    config.save(tmp_path / "config.json")
    written = json.loads((tmp_path / "config.json").read_text())
    assert written == json.loads((FIXTURES / "configs" / f"{stem}.json").read_text())


def test_every_burn_config_file_has_a_case() -> None:
    stems = {path.stem for path in (FIXTURES / "configs").glob("*.json")}
    assert stems == {stem for stem, _ in CONFIGS}


def _burn_binary() -> Path | None:
    configured = os.environ.get(BURN_BINARY_ENV)
    binary = Path(configured) if configured else DEFAULT_BINARY
    return binary if binary.is_file() else None


def test_burn_loads_ferrum_files(tmp_path: Path) -> None:
    binary = _burn_binary()
    if binary is None:
        pytest.skip(
            f"the Burn interop program is not built: cargo build in interop/burn, or set {BURN_BINARY_ENV}"
        )
    _write_all(tmp_path)
    proc = subprocess.run(
        [str(binary), "load", str(tmp_path)], capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ok = [line for line in proc.stdout.splitlines() if line.startswith("ok")]
    assert len([line for line in ok if "/configs/" in line]) == len(CONFIGS), proc.stdout
    assert len([line for line in ok if line.endswith("dataset.db")]) == 1, proc.stdout
    others = ("/adam_", "/configs/", "/quantized_")
    model_lines = [line for line in ok if all(o not in line for o in others) and not line.endswith(".db")]
    assert len(model_lines) == len(CASES), proc.stdout
    # Quantized modules: Burn finds the int8 values and scales of its own quantization.
    assert len([line for line in ok if "/quantized_" in line]) == len(QUANTIZED_CASES), proc.stdout
    adam_lines = [line for line in ok if "/adam_" in line]
    assert len(adam_lines) == len(CASES), proc.stdout  # bincode Adam records included


@pytest.mark.parametrize("name", BINCODE)
def test_ferrum_bincode_adam_record_round_trips(tmp_path: Path, name: str) -> None:
    recorder = _recorder(name, "full")
    optim = AdamConfig().init().load_record(_adam_record())
    recorder.record(optim.to_record(), tmp_path / "adam")
    _adam_check(recorder.load(tmp_path / "adam", DEVICE, optim.record_schema(DEVICE)))
