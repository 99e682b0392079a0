"""A built module refuses assignment (modules are values, as in Burn); ``replace`` makes a changed copy."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, TypeVar

import numpy as np
import pytest
from ferrum import D2, Tensor
from ferrum.backend import Autodiff, Backend, NdArray
from ferrum.module import Module, Param
from ferrum.module.sealed import is_sealed
from ferrum.nn import Linear, LinearConfig, Relu
from ferrum.optim import GradientsParams, SgdConfig

B = TypeVar("B", bound=Backend)
DEVICE = NdArray.device()


class Scaled(Module[B]):
    fc: Linear[B]
    factor: float
    doubled: float = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        self.doubled = 2 * self.factor  # construction may assign

    def forward(self, x: Tensor[B, D2]) -> Tensor[B, D2]:
        return self.fc.forward(x) * self.factor


class Base(Module[B]):
    fc: Linear[B]

    def __init__(self, device: Any) -> None:
        self.fc = LinearConfig(2, 2).init(device)


class Derived(Base[B]):
    extra: Linear[B]

    def __init__(self, device: Any) -> None:
        super().__init__(device)
        # The parent's constructor has returned, but this one has not: still under construction.
        self.extra = LinearConfig(2, 1).init(device)


def layer() -> Linear[NdArray]:
    return LinearConfig(4, 3).init(DEVICE)


def test_assigning_a_field_says_to_use_replace() -> None:
    lin = layer()
    with pytest.raises(dataclasses.FrozenInstanceError) as info:
        lin.weight = lin.bias  # type: ignore[assignment]
    message = str(info.value)
    assert message.startswith("Linear.weight: a built module cannot be changed in place")
    assert "module.replace(weight=...)" in message
    bias_message = r"Linear\.bias: .*module\.replace\(bias=\.\.\.\)"
    with pytest.raises(dataclasses.FrozenInstanceError, match=bias_message):
        lin.bias = None


def test_a_new_attribute_names_the_fields() -> None:
    lin = layer()
    with pytest.raises(dataclasses.FrozenInstanceError) as info:
        lin.d_input = 5  # type: ignore[attr-defined]
    assert str(info.value).startswith("Linear.d_input: a built module takes no new attributes")
    assert "its fields: weight, bias" in str(info.value)
    assert not hasattr(lin, "d_input") or lin.d_input == 4  # the display's setting, not a field


def test_deleting_a_field_is_refused() -> None:
    lin = layer()
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete its fields"):
        del lin.bias
    assert lin.bias is not None


def test_construction_assigns_post_init_and_nested_inits() -> None:
    scaled = Scaled(layer(), 1.5)
    assert scaled.doubled == 3.0 and is_sealed(scaled)
    derived = Derived[NdArray](DEVICE)
    names = [name for name, _ in derived.named_parameters()]
    assert names == ["fc.weight", "fc.bias", "extra.weight", "extra.bias"]
    assert is_sealed(derived)
    with pytest.raises(dataclasses.FrozenInstanceError):
        derived.extra = LinearConfig(2, 1).init(DEVICE)
    # A layer without fields is sealed too: it takes no attribute.
    with pytest.raises(dataclasses.FrozenInstanceError, match="takes no new attributes"):
        Relu().inplace = True  # type: ignore[attr-defined]


def test_replace_copies_with_the_changes_and_leaves_the_original() -> None:
    lin = layer()
    other = layer()
    new = lin.replace(weight=other.weight)
    assert new.weight is other.weight and new.bias is lin.bias
    assert lin.weight is not other.weight  # the original holds its own weight still
    assert is_sealed(new) and type(new) is Linear
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    w = other.weight.val().to_numpy()
    assert lin.bias is not None
    b = lin.bias.val().to_numpy()
    np.testing.assert_allclose(new.forward(Tensor.from_numpy(x, DEVICE)).to_numpy(), x @ w + b, rtol=1e-6)
    scaled = Scaled(lin, 1.5)
    assert scaled.replace(factor=3.0).factor == 3.0 and scaled.factor == 1.5
    assert scaled.replace(factor=3.0).doubled == 3.0  # __post_init__ is not run again
    assert dataclasses.replace(scaled, factor=3.0).doubled == 6.0  # through the constructor


def test_replace_rejects_unknown_fields() -> None:
    message = r"Linear\.replace: no field named 'd_input', 'w'; its fields are weight, bias"
    with pytest.raises(TypeError, match=message):
        layer().replace(d_input=5, w=None)


def test_copies_made_by_the_api_are_sealed_and_the_original_unchanged() -> None:
    lin = layer()
    before = lin.weight.val().to_numpy().copy()

    class Zero:
        def map_float(self, id: Any, tensor: Any) -> Any:
            return tensor.zeros_like()

    copies = [
        lin.map(Zero()),
        lin.to_device(DEVICE),
        lin.fork(DEVICE),
        lin.no_grad(),
        lin.valid(),
        lin.load_record(layer().into_record()),
        copy.copy(lin),
    ]
    for made in copies:
        assert is_sealed(made)
        with pytest.raises(dataclasses.FrozenInstanceError):
            made.bias = None
    np.testing.assert_array_equal(lin.weight.val().to_numpy(), before)
    assert float(copies[0].weight.val().abs().sum().into_scalar()) == 0.0


def test_an_optimizer_step_returns_a_new_sealed_module() -> None:
    device = Autodiff[NdArray].device()
    lin = LinearConfig(2, 1).init(device)
    lin = lin.replace(weight=Param(Tensor.from_floats([[1.0], [2.0]], device)))
    x = Tensor.from_floats([[1.0, 1.0]], device)
    grads = GradientsParams.from_grads(lin.forward(x).sum().backward(), lin)
    stepped = SgdConfig(weight_decay=None).init().step(0.5, lin, grads)
    # d(sum(x @ w + b))/dw = x^T = [[1], [1]]: w - 0.5 * 1.
    np.testing.assert_allclose(stepped.weight.val().to_numpy(), [[0.5], [1.5]], rtol=1e-6)
    np.testing.assert_allclose(lin.weight.val().to_numpy(), [[1.0], [2.0]])
    assert is_sealed(stepped)
