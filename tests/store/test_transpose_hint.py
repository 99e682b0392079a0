"""A weight whose shape is the transpose of the module's: the error names the adapter that fixes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pytest
from ferrum import D2, Tensor
from ferrum.backend import Backend, NdArray
from ferrum.module import Module, Param
from ferrum.nn import Linear, LinearConfig
from ferrum.store import PyTorchToBurnAdapter, SafetensorsStore, StoreError
from safetensors.numpy import save_file

B = TypeVar("B", bound=Backend)
DEVICE = NdArray.device()
RNG = np.random.default_rng(5)
# A PyTorch nn.Linear(4, 3): weight [d_output, d_input] = [3, 4].
TORCH_WEIGHT = RNG.normal(size=(3, 4)).astype(np.float32)
BIAS = RNG.normal(size=(3,)).astype(np.float32)


class Table(Module[B]):
    table: Param[Tensor[B, D2]]


def write(path: Path, **tensors: np.ndarray[Any, Any]) -> Path:
    save_file(dict(tensors), str(path))
    return path


def linear() -> Linear[NdArray]:
    return LinearConfig(4, 3).init(DEVICE)


def test_pytorch_layout_without_the_adapter_names_it(tmp_path: Path) -> None:
    path = write(tmp_path / "torch.safetensors", weight=TORCH_WEIGHT, bias=BIAS)
    with pytest.raises(StoreError) as info:
        linear().load_from(SafetensorsStore.from_file(path))
    message = str(info.value)
    hint = "weight: expected shape [4, 3], found [3, 4] (its transpose: PyTorch stores a Linear weight as"
    assert hint in message
    assert message.endswith("load PyTorch's layout with .with_from_adapter(PyTorchToBurnAdapter()))")
    # What the hint says works: y = x W^T + b, as torch computes it.
    loaded = linear().load_from(SafetensorsStore.from_file(path).with_from_adapter(PyTorchToBurnAdapter()))
    x = RNG.normal(size=(2, 4)).astype(np.float32)
    y = loaded.forward(Tensor.from_numpy(x, DEVICE)).to_numpy()
    np.testing.assert_allclose(y, x @ TORCH_WEIGHT.T + BIAS, rtol=1e-5, atol=1e-6)


def test_burn_layout_through_the_adapter_says_to_drop_it(tmp_path: Path) -> None:
    path = write(tmp_path / "burn.safetensors", weight=np.ascontiguousarray(TORCH_WEIGHT.T), bias=BIAS)
    store = SafetensorsStore.from_file(path).with_from_adapter(PyTorchToBurnAdapter())
    with pytest.raises(StoreError, match=r"found \[3, 4\] \(after PyTorchToBurnAdapter transposed it: .*"
                       r"load it without the adapter\)"):
        linear().load_from(store)
    assert linear().load_from(SafetensorsStore.from_file(path)).weight.val().dims() == (4, 3)


def test_another_transposed_matrix_is_pointed_out_without_the_adapter(tmp_path: Path) -> None:
    path = write(tmp_path / "table.safetensors", table=np.zeros((5, 2), np.float32))
    module = Table(Param(Tensor.zeros((2, 5), DEVICE)))
    with pytest.raises(StoreError) as info:
        module.load_from(SafetensorsStore.from_file(path))
    message = str(info.value)
    assert message.endswith("table: expected shape [2, 5], found [5, 2] (the file holds its transpose)")
    assert "Adapter" not in message  # the adapter transposes Linear weights only: it would not help


def test_other_shape_mismatches_have_no_hint(tmp_path: Path) -> None:
    path = write(tmp_path / "wrong.safetensors", weight=np.zeros((5, 3), np.float32), bias=BIAS)
    with pytest.raises(StoreError) as info:
        linear().load_from(SafetensorsStore.from_file(path))
    assert str(info.value).endswith("weight: expected shape [4, 3], found [5, 3]")
