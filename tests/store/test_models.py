"""Real models written by PyTorch (scripts/make_store_fixtures.py) load into the same models built in ferrum.

Each file format (zip ``.pt``, legacy ``.pt``, a nested checkpoint, ``.safetensors``)
must give the outputs PyTorch computed on a fixed input (atol 1e-5, f32).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ferrum import Tensor
from ferrum.backend import NdArray
from ferrum.store import (
    BurnToPyTorchAdapter,
    ModuleStore,
    PytorchStore,
    PyTorchToBurnAdapter,
    SafetensorsStore,
)
from safetensors.numpy import load_file

from tests.support.store_models import CNN_REMAP, STORE_FIXTURES, cnn, mlp

DEVICE = NdArray.device()


def _io(name: str) -> tuple[Any, Any]:
    io = np.load(STORE_FIXTURES / f"{name}_io.npz")
    return io["x"], io["y"]


def _stores(name: str) -> list[ModuleStore]:
    checkpoint = PytorchStore.from_file(STORE_FIXTURES / f"{name}_checkpoint.pt")
    safetensors = SafetensorsStore.from_file(STORE_FIXTURES / f"{name}.safetensors")
    return [
        PytorchStore.from_file(STORE_FIXTURES / f"{name}.pt"),
        PytorchStore.from_file(STORE_FIXTURES / f"{name}_legacy.pt"),
        checkpoint.with_top_level_key("model_state_dict"),
        safetensors.with_from_adapter(PyTorchToBurnAdapter()),
    ]


@pytest.mark.parametrize("index", range(4), ids=["zip", "legacy", "checkpoint", "safetensors"])
def test_cnn_with_batchnorm_matches_torch(index: int) -> None:
    store = _stores("cnn")[index]
    for pattern, replacement in CNN_REMAP:
        store = store.with_key_remapping(pattern, replacement)
    model, result = cnn(DEVICE).load_from_with_result(store)
    x, y = _io("cnn")
    out = model.forward(Tensor.from_numpy(x, DEVICE)).to_numpy()
    np.testing.assert_allclose(out, y, atol=1e-5)
    # torch's BatchNorm counter has no place in Burn's BatchNorm: reported, not fatal.
    assert "norm.num_batches_tracked" in result.unused
    assert len(result.applied) == 10 and not result.missing and not result.errors
    assert "norm.gamma" in result.applied and "norm.running_var" in result.applied


@pytest.mark.parametrize("index", range(4), ids=["zip", "legacy", "checkpoint", "safetensors"])
def test_mlp_with_layernorm_matches_torch(index: int) -> None:
    # Sequential keys layers.0 and layers.2 land on a list of two Linear layers (contiguous indices).
    model, result = mlp(DEVICE).load_from_with_result(_stores("mlp")[index])
    x, y = _io("mlp")
    np.testing.assert_allclose(model.forward(Tensor.from_numpy(x, DEVICE)).to_numpy(), y, atol=1e-5)
    assert sorted(result.applied) == sorted(
        ["layers.0.weight", "layers.0.bias", "layers.1.weight", "layers.1.bias",
         "norm.gamma", "norm.beta", "head.weight", "head.bias"]
    )  # fmt: skip
    assert result.unused == []


def test_checkpoint_keeps_optimizer_state_out_of_the_model() -> None:
    store = PytorchStore.from_file(STORE_FIXTURES / "mlp_checkpoint.pt")
    keys = store.keys()
    assert "model_state_dict.head.weight" in keys and "optimizer_state_dict.state.0.exp_avg" in keys
    assert "epoch" not in keys  # not a tensor
    _, result = mlp(DEVICE).load_from_with_result(store.with_top_level_key("model_state_dict"))
    assert result.unused == [] and len(result.applied) == 8


def test_mlp_export_for_pytorch_matches_torchs_own_file(tmp_path: Path) -> None:
    """BurnToPyTorchAdapter writes what torch's state_dict holds: same keys, layouts and values."""
    model = mlp(DEVICE).load_from(PytorchStore.from_file(STORE_FIXTURES / "mlp.pt"))
    out = tmp_path / "mlp.safetensors"
    store = SafetensorsStore.from_file(out).with_to_adapter(BurnToPyTorchAdapter())
    # torch's keys: Sequential positions 0 and 2 (the ReLU sits at 1).
    model.save_into(store.with_key_remapping(r"^layers\.1\.", "layers.2."))
    ours, torchs = load_file(out), load_file(STORE_FIXTURES / "mlp.safetensors")
    assert sorted(ours) == sorted(torchs)
    for key, value in torchs.items():
        np.testing.assert_array_equal(ours[key], value, err_msg=key)


def test_committed_ferrum_export_is_what_ferrum_writes(tmp_path: Path) -> None:
    """ferrum_mlp.safetensors (checked in torch by make_store_fixtures.py --verify) is reproducible."""
    committed = load_file(STORE_FIXTURES / "ferrum_mlp.safetensors")
    io = np.load(STORE_FIXTURES / "ferrum_mlp_io.npz")
    store = SafetensorsStore.from_file(STORE_FIXTURES / "ferrum_mlp.safetensors")
    model = mlp(DEVICE).load_from(store.with_from_adapter(PyTorchToBurnAdapter()))
    out = model.forward(Tensor.from_numpy(io["x"], DEVICE)).to_numpy()
    np.testing.assert_allclose(out, io["y"], atol=1e-6)
    assert set(committed) == {
        "layers.0.weight", "layers.0.bias", "layers.2.weight", "layers.2.bias",
        "norm.weight", "norm.bias", "head.weight", "head.bias",
    }  # fmt: skip
    assert committed["layers.0.weight"].shape == (16, 6)  # torch's [out, in]


