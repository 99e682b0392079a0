"""Fuzzing the store readers: ``PytorchStore`` (zip and legacy ``.pt``, their pickles) and ``BurnpackStore``.

Whatever the bytes, listing a file's tensors, reading them and loading them
into a model raise only ``StoreError`` (``PickleError`` is one), never another
exception, a crash, a hang or a huge allocation. Seeds: ``fuzz/corpus/store_*``
and ``fuzz/regressions/store_*``; hypothesis mutates whole files, and (as a
zip's checksums stop most whole-file mutations early) the ``data.pkl`` inside
a zip too. ``FERRUM_FUZZ_EXAMPLES`` sets the examples per test (default 100).
"""

from __future__ import annotations

import io
import os
import pickle
import zipfile
from pathlib import Path

import pytest
from ferrum.backend import NdArray
from ferrum.store import BurnpackStore, ModuleStore, PytorchStore, StoreError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.fuzz_inputs import inputs, mutated
from tests.support.store_models import mlp

EXAMPLES = int(os.environ.get("FERRUM_FUZZ_EXAMPLES", "100"))
FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
DEVICE = NdArray.device()


PT_SEEDS = inputs("store_pytorch")
BPK_SEEDS = inputs("store_burnpack")


def _exercise(store: ModuleStore) -> None:
    try:
        for snap in store.snapshots().values():
            snap.to_numpy()
        mlp(DEVICE).load_from(store.allow_partial(True))
    except StoreError:
        pass


def _pt(tmp_path: Path, data: bytes) -> None:
    (tmp_path / "f.pt").write_bytes(data)
    _exercise(PytorchStore.from_file(tmp_path / "f.pt"))
    _exercise(PytorchStore.from_file(tmp_path / "f.pt").with_top_level_key("model_state_dict"))


def _bpk(tmp_path: Path, data: bytes) -> None:
    (tmp_path / "f.bpk").write_bytes(data)
    _exercise(BurnpackStore.from_file(tmp_path / "f.bpk"))


def _with_pickle(archive: bytes, replace: bytes | None = None) -> tuple[bytes, bytes]:
    """(the data.pkl of a zip seed, the zip with ``replace`` as its data.pkl)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(archive)) as src, zipfile.ZipFile(out, "w") as dst:
        found = b""
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("data.pkl"):
                found, data = data, data if replace is None else replace
            dst.writestr(info, data)
    return found, out.getvalue()


ZIP_SEEDS = [data for name, data in PT_SEEDS if name.startswith("corpus/") and data[:4] == b"PK\x03\x04"]


@pytest.mark.parametrize(("name", "data"), PT_SEEDS + BPK_SEEDS, ids=[s[0] for s in PT_SEEDS + BPK_SEEDS])
def test_seeds_and_regressions_replay(tmp_path: Path, name: str, data: bytes) -> None:
    (_pt if "store_pytorch" in name else _bpk)(tmp_path, data)
    if name.startswith("corpus/"):  # the seeds themselves are valid files
        store = PytorchStore if "store_pytorch" in name else BurnpackStore
        path = tmp_path / ("f.pt" if store is PytorchStore else "f.bpk")
        assert store.from_file(path).keys()


@FUZZ_SETTINGS
@given(data=mutated([data for _, data in PT_SEEDS]))
def test_mutated_pytorch_files_raise_only_store_errors(tmp_path: Path, data: bytes) -> None:
    _pt(tmp_path, data)


@FUZZ_SETTINGS
@given(seed=st.sampled_from(ZIP_SEEDS), pickled=st.data())
def test_mutated_pickles_inside_zips_raise_only_store_errors(
    tmp_path: Path, seed: bytes, pickled: st.DataObject
) -> None:
    original, _ = _with_pickle(seed)
    _pt(tmp_path, _with_pickle(seed, pickled.draw(mutated([original])))[1])


@FUZZ_SETTINGS
@given(data=mutated([data for _, data in BPK_SEEDS]))
def test_mutated_burnpack_files_raise_only_store_errors(tmp_path: Path, data: bytes) -> None:
    _bpk(tmp_path, data)


class _Call:
    def __init__(self, func: object, *args: object) -> None:
        self.func, self.args = func, args

    def __reduce__(self) -> tuple[object, ...]:
        return self.func, self.args


@pytest.mark.parametrize(
    ("payload", "named"),
    [
        (_Call(os.system, "touch /tmp/ferrum-pwned"), r"(posix|os)\.system"),
        (_Call(eval, "__import__('os')"), r"(builtins|__builtin__)\.eval"),
        ({"weight": _Call(getattr, _Call(__import__, "os"), "system")}, r"(builtins|__builtin__)\.getattr"),
    ],
)
def test_hostile_pickles_in_a_pt_file_are_refused_by_name(
    tmp_path: Path, payload: object, named: str
) -> None:
    _, hostile = _with_pickle(ZIP_SEEDS[0], pickle.dumps(payload, protocol=2))
    (tmp_path / "evil.pt").write_bytes(hostile)
    with pytest.raises(StoreError, match=rf"evil\.pt:data\.pkl: refusing global {named}"):
        mlp(DEVICE).load_from(PytorchStore.from_file(tmp_path / "evil.pt"))
    assert not Path("/tmp/ferrum-pwned").exists()


def test_every_store_corpus_hasinputs() -> None:
    assert len(PT_SEEDS) >= 4 and len(BPK_SEEDS) >= 2 and ZIP_SEEDS
