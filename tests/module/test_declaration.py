"""ferrum.module.declaration: a layer assigned in ``__init__`` (PyTorch's habit) fails, showing the field."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

import pytest
from ferrum import D2, Tensor
from ferrum.backend import Backend, NdArray
from ferrum.module import Module, Param, RunningState
from ferrum.module.declaration import annotation
from ferrum.nn import Linear, LinearConfig, Relu

B = TypeVar("B", bound=Backend)
DEVICE = NdArray.device()


class TorchStyle(Module[B]):
    def __init__(self, device: Any) -> None:
        self.fc1 = LinearConfig(4, 2).init(device)


class Declared(Module[B]):
    fc1: Linear[B]
    width: int


def test_layer_assigned_in_init_raises_with_the_declaration() -> None:
    with pytest.raises(TypeError) as info:
        TorchStyle(DEVICE)
    message = str(info.value)
    assert "TorchStyle.fc1" in message
    assert "declare it as a field of TorchStyle:\n    fc1: Linear[B]\n" in message
    assert "TorchStyle(fc1=...)" in message


@pytest.mark.parametrize(
    ("value", "declared"),
    [
        (lambda: Relu(), "act: Relu"),
        (lambda: Param(Tensor.ones((2, 3), DEVICE)), "act: Param[Tensor[B, D2]]"),
        (lambda: RunningState(Tensor.ones((3,), DEVICE)), "act: RunningState[Tensor[B, D1]]"),
        (lambda: Tensor.ones((3,), DEVICE).int(), "act: Tensor[B, D1, Int]"),
        (lambda: [LinearConfig(2, 2).init(DEVICE)] * 2, "act: list[Linear[B]]"),
        (lambda: (Relu(), Relu()), "act: tuple[Relu, ...]"),
    ],
)
def test_each_tree_value_shows_its_annotation(value: Any, declared: str) -> None:
    model = Declared(LinearConfig(4, 2).init(DEVICE), 3)
    with pytest.raises(TypeError, match="undeclared attribute") as info:
        model.act = value()  # type: ignore[attr-defined]
    assert f"\n    {declared}\n" in str(info.value)
    assert not hasattr(model, "act")


def test_a_plain_tensor_suggests_param_to_train_it() -> None:
    model = Declared(LinearConfig(4, 2).init(DEVICE), 3)
    with pytest.raises(TypeError) as info:
        model.w = Tensor.ones((2, 3), DEVICE)  # type: ignore[attr-defined]
    message = str(info.value)
    assert "\n    w: Tensor[B, D2]\n" in message
    assert "w: Param[Tensor[B, D2]]" in message


def test_declared_fields_and_constants_change_in_a_copy() -> None:
    model = Declared(LinearConfig(4, 2).init(DEVICE), 3)
    # A built module is a value: assignment is refused (tests/module/test_sealed.py), replace copies.
    with pytest.raises(dataclasses.FrozenInstanceError, match=r"module\.replace\(fc1=\.\.\.\)"):
        model.fc1 = LinearConfig(4, 3).init(DEVICE)
    with pytest.raises(dataclasses.FrozenInstanceError, match="takes no new attributes"):
        model.note = "hidden width"  # type: ignore[attr-defined]
    wider = model.replace(fc1=LinearConfig(4, 3).init(DEVICE), width=4)
    assert (wider.num_params(), wider.width) == (15, 4)
    assert (model.num_params(), model.width) == (10, 3)


def test_an_init_that_assigns_declared_fields_works() -> None:
    class Mlp(Module[B]):
        fc1: Linear[B]
        fc2: Linear[B]

        def __init__(self, device: Any) -> None:
            self.fc1 = LinearConfig(4, 8).init(device)
            self.fc2 = LinearConfig(8, 1).init(device)

        def forward(self, x: Tensor[B, D2]) -> Tensor[B, D2]:
            return self.fc2.forward(self.fc1.forward(x))

    model = Mlp[NdArray](DEVICE)
    assert model.num_params() == 4 * 8 + 8 + 8 + 1
    names = [name for name, _ in model.named_parameters()]
    assert names == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]


def test_rebuilt_modules_keep_working() -> None:
    model = Declared(LinearConfig(4, 2).init(DEVICE), 3)
    assert model.no_grad().valid().num_params() == 10


def test_annotation_of_a_generic_module() -> None:
    assert annotation(LinearConfig(1, 1).init(DEVICE)) == "Linear[B]"
    assert annotation(Relu()) == "Relu"
