"""``PytorchStore``: torch.save files (zip and legacy) read without torch.

Expected values come from the generating script (tensors_expected.npz, written
by torch itself) and from Burn's own reader tests for Burn's test files.
"""

from __future__ import annotations

import collections
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest
from ferrum.backend import NdArray
from ferrum.module import Module
from ferrum.nn import Linear, LinearConfig
from ferrum.store import PytorchStore, StoreError
from ferrum.store.pytorch.pickle import read_pickle
from ferrum.store.pytorch.torch_globals import ALLOWED

from tests.support.store_models import STORE_FIXTURES, mlp

BURN = STORE_FIXTURES / "burn"
DEVICE = NdArray.device()


@pytest.mark.parametrize("name", ["tensors.pt", "tensors_legacy.pt"])
def test_dtypes_views_and_shared_storage_match_torch(name: str) -> None:
    snapshots = PytorchStore.from_file(STORE_FIXTURES / name).snapshots()
    expected = np.load(STORE_FIXTURES / "tensors_expected.npz")
    assert sorted(snapshots) == sorted(expected.files)
    for key, snap in snapshots.items():
        values = snap.to_numpy()
        assert values.shape == expected[key].shape == snap.shape, key
        np.testing.assert_array_equal(values, expected[key], err_msg=key)
    dtypes = {key: snap.dtype for key, snap in snapshots.items()}
    assert dtypes["f16"] == "F16" and dtypes["bf16"] == "BF16" and dtypes["f64"] == "F64"
    assert dtypes["i64"] == "I64" and dtypes["i32"] == "I32" and dtypes["bool"] == "Bool"
    assert snapshots["transposed"].shape == (6, 4) and snapshots["slice"].shape == (3, 3)


def test_tensor_bytes_come_from_a_memory_map_without_copies() -> None:
    values = PytorchStore.from_file(STORE_FIXTURES / "tensors.pt").snapshots()["transposed"].to_numpy()
    assert not values.flags.owndata and not values.flags.writeable  # a view of the mapped file
    assert not values.flags.c_contiguous  # torch's strides are kept, not copied into a new layout


# (file, key, dtype, values) from crates/burn-store/src/pytorch/tests/reader/mod.rs
BURN_VALUES = [
    ("float32.pt", "tensor", "F32", [1.0, 2.5, -3.7, 0.0]),
    ("float64.pt", "tensor", "F64", [1.1, 2.2, 3.3]),
    ("float16.pt", "tensor", "F16", [1.5, -2.25, 3.125]),
    ("bfloat16.pt", "tensor", "BF16", [1.5, -2.5, 3.5]),
    ("int64.pt", "tensor", "I64", [100, -200, 300, 0]),
    ("int32.pt", "tensor", "I32", [10, 20, -30]),
    ("int16.pt", "tensor", "I16", [1000, -2000, 3000]),
    ("int8.pt", "tensor", "I8", [127, -128, 0, 50]),
    ("uint8.pt", "tensor", "U8", [0, 128, 255, 42]),
    ("bool.pt", "tensor", "Bool", [True, False, True, True, False]),
    ("tensor_2d.pt", "tensor", "F32", [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
    ("mixed_types.pt", "int64", "I64", [100, 200]),
    ("mixed_types.pt", "bool", "Bool", [True, False]),
    ("buffers.pt", "buffer1", "I32", [1, 2, 3]),
    ("scalar.pt", "tensor", "F32", [42.0]),
]


@pytest.mark.parametrize(
    ("name", "key", "dtype", "values"), BURN_VALUES, ids=[f"{v[0]}:{v[1]}" for v in BURN_VALUES]
)
def test_burns_pytorch_test_files(name: str, key: str, dtype: str, values: list[float]) -> None:
    snap = PytorchStore.from_file(BURN / name).snapshots()[key]
    assert snap.dtype == dtype
    np.testing.assert_allclose(snap.to_numpy().ravel().astype(np.float64), values, rtol=1e-6)


def test_burns_structured_files() -> None:
    state = PytorchStore.from_file(BURN / "state_dict.pt").snapshots()
    assert sorted(state) == ["bias", "running_mean", "running_var", "weight"] and state["weight"].shape == (
        3,
        4,
    )
    np.testing.assert_array_equal(state["running_var"].to_numpy(), np.ones(3, np.float32))
    nested = PytorchStore.from_file(BURN / "nested_dict.pt").keys()
    assert sorted(nested) == ["layer1.bias", "layer1.weight", "layer2.bias", "layer2.weight"]
    checkpoint = PytorchStore.from_file(BURN / "checkpoint.pt").with_top_level_key("model_state_dict")
    assert checkpoint.snapshots()["fc1.weight"].shape == (10, 5)
    assert PytorchStore.from_file(BURN / "parameter.pt").snapshots()["param"].shape == (3, 3)
    assert PytorchStore.from_file(BURN / "empty.pt").snapshots()["tensor"].to_numpy().shape == (0,)
    big = PytorchStore.from_file(BURN / "large_shape.pt").snapshots()["tensor"].to_numpy().ravel()
    assert (big[0], big[5050], big[9999]) == (1.0, 2.0, 3.0)
    special = PytorchStore.from_file(BURN / "special_values.pt").snapshots()["tensor"].to_numpy()
    assert np.isnan(special[0]) and special[1] == np.inf and special[2] == -np.inf


def test_burns_legacy_files_with_offsets_and_shared_storage() -> None:
    legacy = PytorchStore.from_file(BURN / "simple_legacy.pt").snapshots()
    assert legacy["weight"].shape == (2, 3) and legacy["running_mean"].shape == (2,)
    offsets = PytorchStore.from_file(BURN / "legacy_with_offsets.pt").snapshots()
    # Written by create_legacy_with_offsets.py in Burn: 1.0 + 0.01 i, then 2.0 + 0.1 i, 3.0 + 0.1 i.
    np.testing.assert_allclose(offsets["tensor1"].to_numpy(), 1.0 + 0.01 * np.arange(10), rtol=1e-6)
    np.testing.assert_allclose(offsets["tensor2"].to_numpy(), 2.0 + 0.1 * np.arange(5), rtol=1e-6)
    np.testing.assert_allclose(offsets["tensor3"].to_numpy(), 3.0 + 0.1 * np.arange(5), rtol=1e-6)
    # Burn's "shared" file holds clones (its views of one storage are in tensors_legacy.pt above).
    shared = PytorchStore.from_file(BURN / "legacy_shared_storage.pt").snapshots()
    assert [shared[k].to_numpy().shape for k in ("view1", "view2", "view3")] == [(10,), (20,), (10,)]


def test_a_damaged_file_is_a_store_error() -> None:
    with pytest.raises(StoreError, match=r"broken\.pt is neither a torch\.save zip file nor a legacy"):
        PytorchStore.from_file(BURN / "broken.pt").keys()
    with pytest.raises(StoreError, match="does not exist"):
        PytorchStore.from_file(BURN / "nowhere.pt").keys()


def test_top_level_key_errors_name_the_keys() -> None:
    store = PytorchStore.from_file(STORE_FIXTURES / "mlp_checkpoint.pt").with_top_level_key("model")
    with pytest.raises(StoreError, match=r"no top-level key 'model' \(its keys: 'model_state_dict'"):
        store.keys()


def test_missing_tensors_name_themselves_and_the_file() -> None:
    with pytest.raises(StoreError, match=r"layers\.0\.weight.*not in the file.*model_state_dict\.") as err:
        mlp(DEVICE).load_from(PytorchStore.from_file(STORE_FIXTURES / "mlp_checkpoint.pt"))
    assert err.value.result is not None and len(err.value.result.missing) == 8


def test_the_store_is_read_only(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"read-only.*BurnToPyTorchAdapter"):
        mlp(DEVICE).save_into(PytorchStore.from_file(tmp_path / "m.pt"))
    assert not (tmp_path / "m.pt").exists()


def test_a_compressed_zip_entry_is_read_too(tmp_path: Path) -> None:
    # torch never compresses, but a re-zipped file may: the bytes are decompressed instead of mapped.
    out = tmp_path / "deflated.pt"
    with (
        zipfile.ZipFile(STORE_FIXTURES / "tensors.pt") as src,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst,
    ):
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info))
    ours = PytorchStore.from_file(out).snapshots()["slice"].to_numpy()
    np.testing.assert_array_equal(ours, np.load(STORE_FIXTURES / "tensors_expected.npz")["slice"])



def test_a_whole_pickled_model_is_refused_with_advice() -> None:
    # torch.save(model) pickles the model's class by name: refused, with what to save instead.
    data = pickle.dumps(collections.Counter, protocol=2)
    with pytest.raises(StoreError, match=r"refusing global collections\.Counter: .*save its state_dict\(\)"):
        read_pickle(data, ALLOWED)


class _Classifier(Module[NdArray]):
    feature: Linear[NdArray]
    classifier: Linear[NdArray]


def test_burns_enum_model_file_loads_into_plain_fields() -> None:
    # Burn uses this file for its enum-variant paths; ferrum modules have no enum fields, so plain ones match.
    store = PytorchStore.from_file(BURN / "model_without_enum_variants.pt")
    fresh = _Classifier(LinearConfig(3, 64).init(DEVICE), LinearConfig(64, 10).init(DEVICE))
    model, result = fresh.load_from_with_result(store)
    expected = ["classifier.bias", "classifier.weight", "feature.bias", "feature.weight"]
    assert sorted(result.applied) == expected
    raw = store.snapshots()["classifier.weight"].to_numpy()
    np.testing.assert_array_equal(model.classifier.weight.val().to_numpy(), raw.T)
