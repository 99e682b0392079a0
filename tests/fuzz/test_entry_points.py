"""Fuzzing the Python entry points that parse untrusted bytes: ``Recorder.load``,
``Module.load_file``, ``BytesRecorder.load``, ``Config.load`` and the item
blobs ``SqliteDataset`` reads from Burn's dataset files.

Whatever the bytes, each raises only its typed error (``RecordError``,
``ConfigError``), never another exception, a crash or a hang. The seeds are the
fuzz corpus (``fuzz/corpus/``) and every crasher ever found
(``fuzz/regressions/``); hypothesis mutates them. ``FERRUM_FUZZ_EXAMPLES`` sets
the examples per test (default 100) for a long run by hand:
``FERRUM_FUZZ_EXAMPLES=100000 python -m pytest tests/fuzz/test_entry_points.py``.

A new parser of untrusted bytes (a store, an importer) adds its loader to
``RECORD_LOADERS`` or a test of its own here, and its seeds to ``fuzz/corpus``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from ferrum import ConfigError, config
from ferrum.backend import Backend, NdArray
from ferrum.data.dataset.sqlite_serialized import item_from_blob
from ferrum.module import Module
from ferrum.nn import Linear, LinearConfig
from ferrum.record import BinBytesRecorder, FileRecorder, NamedMpkBytesRecorder, RecordError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.burn_interop_sqlite import Item as BurnItem
from tests.support.fuzz_inputs import inputs, mutated
from tests.support.recorders import BINCODE_RECORDERS, RECORDERS

B = TypeVar("B", bound=Backend)
DEVICE = NdArray.device()
EXAMPLES = int(os.environ.get("FERRUM_FUZZ_EXAMPLES", "100"))
FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


# The record seeds start with the byte that picks their format, in ferrum_core::record::fuzz's order.
SELF_DESCRIBING = [RECORDERS[name] for name in ("named_mpk", "pretty_json", "named_mpk_gz", "json_gz")]
RECORD_SEEDS = [
    (name, SELF_DESCRIBING[data[0] % 4], data[1:]) for name, data in inputs("record_self_describing") if data
] + [
    (name, BINCODE_RECORDERS[data[0] & 1], data[1:])
    for name, data in inputs("record_bincode")
    if data
]
CONFIG_SEEDS = inputs("config")


class Net(Module[B]):
    """The model of the fuzz targets' schema: ferrum_core::record::fuzz::model_schema."""

    first: Linear[B]
    layers: list[Linear[B]]
    scale: float


def _net() -> Net[NdArray]:
    return Net(
        LinearConfig(3, 4).init(DEVICE),
        [LinearConfig(4, 2).init(DEVICE), LinearConfig(2, 2).init(DEVICE)],
        0.5,
    )


@config
class InnerConfig:
    depth: int
    flags: list[bool] = dataclasses.field(default_factory=list)
    nested: InnerConfig | None = None


@config
class FuzzConfig:
    name: str
    sizes: list[int]
    kernel: tuple[int, int] = (3, 3)
    rate: float = 0.1
    mode: str = "train"
    optional: float | None = None
    extra: dict[str, float] = dataclasses.field(default_factory=dict)
    inner: InnerConfig | None = None


def _record_loaders(recorder: FileRecorder) -> list[Callable[[Path], object]]:
    loaders: list[Callable[[Path], object]] = [lambda stem: _net().load_file(stem, recorder, DEVICE)]
    if not recorder.extension.startswith("bin"):
        loaders.append(lambda stem: _net().load_record(recorder.load(stem, DEVICE)))
        loaders.append(lambda stem: recorder.load(stem, DEVICE))
    return loaders


def _load_record_file(tmp_path: Path, recorder_cls: type[FileRecorder], data: bytes) -> None:
    recorder = recorder_cls()
    (tmp_path / f"r.{recorder.extension}").write_bytes(data)
    for load in _record_loaders(recorder):
        try:
            load(tmp_path / "r")
        except RecordError:
            pass
        except ValueError as err:
            # Module.load_record names a mismatch between a well-formed record and the model.
            assert type(err) is ValueError and "record" in str(err), repr(err)
    bytes_recorder = BinBytesRecorder() if recorder.extension.startswith("bin") else NamedMpkBytesRecorder()
    if recorder.extension in ("bin", "mpk"):
        try:
            _net().load_record(bytes_recorder.load(data, DEVICE))
        except RecordError:
            pass
        except ValueError as err:
            assert type(err) is ValueError and "record" in str(err), repr(err)


def _load_config_text(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "c.json"
    path.write_bytes(data)
    try:
        FuzzConfig.load(path)
    except ConfigError:
        pass


@pytest.mark.parametrize(("name", "recorder_cls", "data"), RECORD_SEEDS, ids=[s[0] for s in RECORD_SEEDS])
def test_record_seeds_and_regressions_replay(
    tmp_path: Path, name: str, recorder_cls: type[FileRecorder], data: bytes
) -> None:
    _load_record_file(tmp_path, recorder_cls, data)


@pytest.mark.parametrize(("name", "data"), CONFIG_SEEDS, ids=[s[0] for s in CONFIG_SEEDS])
def test_config_seeds_and_regressions_replay(tmp_path: Path, name: str, data: bytes) -> None:
    _load_config_text(tmp_path, data)
    if name.startswith("corpus/"):
        FuzzConfig.load(tmp_path / "c.json")  # the seeds themselves are valid configs


@FUZZ_SETTINGS
@given(case=st.sampled_from(RECORD_SEEDS).flatmap(lambda s: st.tuples(st.just(s[1]), mutated([s[2]]))))
def test_mutated_record_files_raise_only_record_errors(
    tmp_path: Path, case: tuple[type[FileRecorder], bytes]
) -> None:
    recorder_cls, data = case
    _load_record_file(tmp_path, recorder_cls, data)


@FUZZ_SETTINGS
@given(data=mutated([data for _, data in CONFIG_SEEDS]))
def test_mutated_config_files_raise_only_config_errors(tmp_path: Path, data: bytes) -> None:
    _load_config_text(tmp_path, data)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=30,
)
_FIELD_VALUES = st.fixed_dictionaries(
    {},
    optional={
        name: _JSON
        for name in ("name", "sizes", "kernel", "rate", "mode", "optional", "extra", "inner", "unknown")
    },
)


@FUZZ_SETTINGS
@given(document=_FIELD_VALUES | _JSON)
def test_arbitrary_json_configs_raise_only_config_errors(tmp_path: Path, document: Any) -> None:
    _load_config_text(tmp_path, json.dumps(document).encode())


def _burn_dataset_blobs() -> list[bytes]:
    path = Path(__file__).parents[1] / "fixtures" / "burn" / "dataset.db"
    with contextlib.closing(sqlite3.connect(path)) as connection:
        rows = connection.execute("SELECT item FROM train UNION ALL SELECT item FROM test")
        return [blob for (blob,) in rows]


@FUZZ_SETTINGS
@given(data=mutated(_burn_dataset_blobs()))
def test_mutated_dataset_items_raise_only_value_errors(data: bytes) -> None:
    # The blob of a row of Burn's SQLite dataset form, as SqliteDataset.get decodes it.
    try:
        item = item_from_blob(data, BurnItem, "row 0")
    except ValueError as err:
        assert "row 0" in str(err)
    else:
        assert isinstance(item, BurnItem)


def test_every_corpus_has_seeds() -> None:
    assert len(RECORD_SEEDS) >= 20 and len(CONFIG_SEEDS) >= 2
