"""Loading a store into a module and saving one: Burn's ApplyResult, filters, remapping, partial loads."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from ferrum.backend import Autodiff, NdArray
from ferrum.store import (
    ApplyResult,
    BurnToPyTorchAdapter,
    IdentityAdapter,
    KeyRemapper,
    PathFilter,
    PytorchStore,
    PyTorchToBurnAdapter,
    SafetensorsStore,
    StoreError,
    map_indices_contiguous,
)
from safetensors.numpy import load_file, save_file

from tests.support.store_models import STORE_FIXTURES, mlp

DEVICE = NdArray.device()
MLP_PT = STORE_FIXTURES / "mlp.pt"


def _torch_mlp() -> dict[str, np.ndarray]:
    return load_file(STORE_FIXTURES / "mlp.safetensors")


def test_result_lists_applied_skipped_missing_unused() -> None:
    store = PytorchStore.from_file(MLP_PT).with_regex(r"^layers\.").allow_partial(True)
    fresh = mlp(DEVICE)
    model, result = fresh.load_from_with_result(store)
    assert result.applied == ["layers.0.weight", "layers.0.bias", "layers.1.weight", "layers.1.bias"]
    assert result.skipped == ["norm.gamma", "norm.beta", "head.weight", "head.bias"]
    assert result.missing == [] and result.unused == [] and result.is_success()
    # Filtered-out tensors keep their values; loaded ones are torch's, transposed.
    np.testing.assert_array_equal(model.head.weight.val().to_numpy(), fresh.head.weight.val().to_numpy())
    np.testing.assert_array_equal(model.layers[0].weight.val().to_numpy(), _torch_mlp()["layers.0.weight"].T)
    assert model.layers[0].weight.id == fresh.layers[0].weight.id  # a PyTorch file has no ids to restore
    assert "applied=4" in repr(result) and "skipped: " not in result.report()


def test_full_path_and_predicate_filters() -> None:
    store = (
        PytorchStore.from_file(MLP_PT)
        .with_full_path("head.bias")
        .with_predicate(lambda p, c: c == "LayerNorm")
    )
    _, result = mlp(DEVICE).load_from_with_result(store)
    assert sorted(result.applied) == ["head.bias", "norm.beta", "norm.gamma"]
    assert PathFilter().matches("anything") and PathFilter().match_all().matches("x")


def test_partial_loading_reports_missing_tensors() -> None:
    store = PytorchStore.from_file(MLP_PT).with_key_remapping(r"^head\.", "old_head.")
    with pytest.raises(StoreError, match=r"head\.weight, head\.bias are not in the file") as err:
        mlp(DEVICE).load_from(store)
    assert err.value.result is not None and err.value.result.unused == ["old_head.weight", "old_head.bias"]
    _, result = mlp(DEVICE).load_from_with_result(store.allow_partial(True))
    assert result.missing == [("head.weight", "Linear"), ("head.bias", "Linear")]
    assert len(result.applied) == 6


def test_shape_mismatch_is_always_an_error(tmp_path: Path) -> None:
    tensors = _torch_mlp()
    tensors["head.bias"] = np.zeros(4, np.float32)
    save_file(tensors, tmp_path / "bad.safetensors")
    store = SafetensorsStore.from_file(tmp_path / "bad.safetensors").allow_partial(True)
    with pytest.raises(StoreError, match=r"head\.bias: expected shape \[3\], found \[4\]") as err:
        mlp(DEVICE).load_from(store.with_key_remapping("^layers.2", "layers.1"))
    assert err.value.result is not None and err.value.result.errors[0].kind == "shape"


def test_key_remapping_and_contiguous_indices() -> None:
    remap = KeyRemapper().add_pattern(r"^model\.(.*)$", r"\1").add_pattern(r"\.bn(\d)\.", r".norm\1.")
    assert remap.remap_path("model.block.bn1.weight") == "block.norm1.weight"
    with pytest.raises(ValueError, match="maps both"):
        KeyRemapper().add_pattern(r"\d", "0").remap(["a.1", "a.2"])
    with pytest.raises(ValueError, match="invalid key remapping pattern"):
        KeyRemapper().add_pattern("(", "")
    # Burn's nested example (keyremapper.rs): each list position renumbers by its original prefix.
    mapped = map_indices_contiguous(
        ["feature.layers.0.conv_block.0.weight", "feature.layers.0.conv_block.2.weight",
         "feature.layers.2.conv_block.0.weight", "feature.layers.2.conv_block.2.weight"]
    )  # fmt: skip
    assert sorted(mapped) == [
        "feature.layers.0.conv_block.0.weight", "feature.layers.0.conv_block.1.weight",
        "feature.layers.1.conv_block.0.weight", "feature.layers.1.conv_block.1.weight",
    ]  # fmt: skip
    assert mapped["feature.layers.1.conv_block.1.weight"] == "feature.layers.2.conv_block.2.weight"
    # Off, torch's layers.2 has no place in a list of two.
    _, result = mlp(DEVICE).load_from_with_result(
        PytorchStore.from_file(MLP_PT).map_indices_contiguous(False).allow_partial(True)
    )
    assert ("layers.1.weight", "Linear") in result.missing and "layers.2.weight" in result.unused


def test_contiguous_index_defaults() -> None:
    # On for PyTorch files whatever the adapter (as Burn); for safetensors, on with the PyTorch adapter.
    assert PytorchStore.from_file(MLP_PT).with_from_adapter(IdentityAdapter()).maps_indices_contiguous()
    safetensors = SafetensorsStore.from_file(STORE_FIXTURES / "mlp.safetensors")
    assert not safetensors.maps_indices_contiguous()
    assert safetensors.with_from_adapter(PyTorchToBurnAdapter()).maps_indices_contiguous()
    assert (
        not safetensors.with_from_adapter(PyTorchToBurnAdapter())
        .map_indices_contiguous(False)
        .maps_indices_contiguous()
    )


def test_loading_onto_autodiff_keeps_parameters_trainable() -> None:
    device = Autodiff[NdArray].device()
    model = mlp(device).load_from(PytorchStore.from_file(MLP_PT))
    weight = model.head.weight.val()
    grad = weight.grad((weight * 2.0).sum().backward())
    assert grad is not None
    np.testing.assert_array_equal(grad.to_numpy(), np.full((12, 3), 2.0, np.float32))


def test_save_filters_adapts_and_refuses_to_overwrite(tmp_path: Path) -> None:
    model = mlp(DEVICE).load_from(PytorchStore.from_file(MLP_PT))
    out = tmp_path / "norm.safetensors"
    store = SafetensorsStore.from_file(out).with_regex(r"^norm\.").with_to_adapter(BurnToPyTorchAdapter())
    model.save_into(store)
    assert sorted(load_file(out)) == ["norm.bias", "norm.weight"]
    with pytest.raises(StoreError, match=r"exists; use \.overwrite\(True\)"):
        model.save_into(store)
    model.save_into(store.overwrite(True))
    with pytest.raises(StoreError, match="two tensors of the module would be saved as 'x'"):
        model.save_into(
            SafetensorsStore.from_file(tmp_path / "dup.safetensors").with_key_remapping("^.*$", "x")
        )
    assert not (tmp_path / "dup.safetensors").exists()


def test_store_options_are_checked() -> None:
    store = PytorchStore.from_file(MLP_PT)
    with pytest.raises(TypeError, match="allow_partial takes a bool, found int"):
        store.allow_partial(1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="invalid path filter pattern"):
        store.with_regex("[")
    with pytest.raises(TypeError, match="from_file needs a path, found int"):
        PytorchStore.from_file(3)  # type: ignore[arg-type]
    assert store.allow_partial(True) is not store and not store.partial  # builders return new stores


def test_describe_lists_keys_shapes_and_dtypes() -> None:
    text = PytorchStore.from_file(STORE_FIXTURES / "cnn.pt").describe()
    assert "features.1.num_batches_tracked: I64 []" in text and "head.weight: F32 [5, 24]" in text
    # Contiguous indices apply to the listing too: features.3 is the third entry of the list.
    assert "features.2.weight: F32 [6, 4, 3, 3]" in text


def test_apply_result_report() -> None:
    result = ApplyResult(missing=[("a.w", "Linear")], unused=["b"])
    assert result.report().splitlines() == [
        "ApplyResult(applied=0, skipped=0, missing=1, unused=1, errors=0)",
        "  missing: a.w (in Linear)",
        "  unused: b",
    ]
