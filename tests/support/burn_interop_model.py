"""The model of interop/burn/src/main.rs, built in ferrum, and its formulas computed with NumPy.

Keep in sync with the Rust program: the same layers in the same order, the
same ``value``/``id_of`` formulas, the same (path, shape, salt) table. The
fixtures under tests/fixtures/burn/ were written by that program.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from ferrum import Tensor
from ferrum.backend import Backend, NdArray
from ferrum.module import Module, Param, ParamId, RunningState
from ferrum.nn import BatchNorm, BatchNormConfig, Embedding, EmbeddingConfig, Linear, LinearConfig
from ferrum.nn.conv import Conv2d, Conv2dConfig

B = TypeVar("B", bound=Backend)
DEVICE = NdArray.device()
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "burn"

# (path, shape, salt) of every parameter and running state, in record order.
LAYOUT: list[tuple[str, tuple[int, ...], int]] = [
    ("fc.weight", (4, 3), 1),
    ("fc.bias", (3,), 2),
    ("head.weight", (3, 2), 3),
    ("conv.weight", (3, 2, 3, 3), 4),
    ("conv.bias", (3,), 5),
    ("norm.gamma", (3,), 6),
    ("norm.beta", (3,), 7),
    ("norm.running_mean", (3,), 8),
    ("norm.running_var", (3,), 9),
    ("embed.weight", (5, 4), 10),
    ("blocks.0.weight", (2, 2), 11),
    ("blocks.0.bias", (2,), 12),
    ("blocks.1.weight", (2, 2), 13),
    ("blocks.1.bias", (2,), 14),
]
ADAM_TIME = 3
# (param path, shape, salt) of the Adam states the program writes.
ADAM_LAYOUT: list[tuple[str, tuple[int, ...], int]] = [("fc.weight", (4, 3), 1), ("fc.bias", (3,), 2)]


def values(shape: tuple[int, ...], salt: int) -> np.ndarray[Any, np.dtype[np.float64]]:
    """``((i * 7 + salt * 13) % 97) / 16 - 3`` for row-major index ``i``: exact in f16, f32 and f64."""
    i = np.arange(int(np.prod(shape)), dtype=np.int64)
    return (((i * 7 + salt * 13) % 97) / 16.0 - 3.0).reshape(shape)


def moment_2(shape: tuple[int, ...], salt: int) -> np.ndarray[Any, np.dtype[np.float64]]:
    """Adam's second moment in the fixtures: ``|values(shape, salt + 50)|``."""
    result: np.ndarray[Any, np.dtype[np.float64]] = np.abs(values(shape, salt + 50))
    return result


def id_of(salt: int) -> int:
    """The parameter id of the tensor numbered ``salt`` (0x0123456789abcdef * (salt + 1) mod 2**64)."""
    return (0x0123_4567_89AB_CDEF * (salt + 1)) % (1 << 64)


class Net(Module[B]):
    """Burn's ``Net``: Linear with and without bias, Conv2d, BatchNorm, Embedding, a list of Linears."""

    fc: Linear[B]
    head: Linear[B]
    conv: Conv2d[B]
    norm: BatchNorm[B]
    embed: Embedding[B]
    blocks: list[Linear[B]]


def fresh() -> Net[NdArray]:
    """The model with random values and ids, as built before loading."""
    return Net(
        LinearConfig(4, 3).init(DEVICE),
        LinearConfig(3, 2, bias=False).init(DEVICE),
        Conv2dConfig((2, 3), (3, 3)).init(DEVICE),
        BatchNormConfig(3).init(DEVICE),
        EmbeddingConfig(5, 4).init(DEVICE),
        [LinearConfig(2, 2).init(DEVICE), LinearConfig(2, 2).init(DEVICE)],
    )


def _tensor(path: str) -> tuple[Tensor[Any, Any, Any], ParamId]:
    shape, salt = next((shape, salt) for name, shape, salt in LAYOUT if name == path)
    return Tensor.from_numpy(values(shape, salt).astype(np.float32), DEVICE), ParamId(id_of(salt))


def _param(path: str) -> Param[Any]:
    return Param(*_tensor(path))


def _linear(layer: Linear[NdArray], path: str, bias: bool) -> Linear[NdArray]:
    return dataclasses.replace(
        layer, weight=_param(f"{path}.weight"), bias=_param(f"{path}.bias") if bias else None
    )


def model() -> Net[NdArray]:
    """The model holding the formula values and ids."""
    net = fresh()
    norm = dataclasses.replace(
        net.norm,
        gamma=_param("norm.gamma"),
        beta=_param("norm.beta"),
        running_mean=RunningState(*_tensor("norm.running_mean")),
        running_var=RunningState(*_tensor("norm.running_var")),
    )
    return Net(
        _linear(net.fc, "fc", True),
        _linear(net.head, "head", False),
        dataclasses.replace(net.conv, weight=_param("conv.weight"), bias=_param("conv.bias")),
        norm,
        dataclasses.replace(net.embed, weight=_param("embed.weight")),
        [_linear(block, f"blocks.{i}", True) for i, block in enumerate(net.blocks)],
    )


def leaves(net: Net[Any]) -> list[tuple[str, int, np.ndarray[Any, Any]]]:
    """(path, id, values) of every parameter and running state, in record order."""
    out: list[tuple[str, int, np.ndarray[Any, Any]]] = []

    def add(path: str, leaf: Param[Any] | RunningState[Any] | None) -> None:
        if leaf is not None:
            tensor = leaf.val() if isinstance(leaf, Param) else leaf.value()
            out.append((path, leaf.id.value, tensor.to_numpy()))

    for name in ("fc", "head"):
        layer = getattr(net, name)
        add(f"{name}.weight", layer.weight)
        add(f"{name}.bias", layer.bias)
    add("conv.weight", net.conv.weight)
    add("conv.bias", net.conv.bias)
    for field in ("gamma", "beta", "running_mean", "running_var"):
        add(f"norm.{field}", getattr(net.norm, field))
    add("embed.weight", net.embed.weight)
    for i, block in enumerate(net.blocks):
        add(f"blocks.{i}.weight", block.weight)
        add(f"blocks.{i}.bias", block.bias)
    return out


def check(net: Net[Any]) -> None:
    """Assert every path, id, shape and value of ``net`` against the formulas."""
    found = leaves(net)
    assert [path for path, _, _ in found] == [path for path, _, _ in LAYOUT]
    for (path, pid, array), (_, shape, salt) in zip(found, LAYOUT, strict=True):
        assert pid == id_of(salt), path
        assert array.shape == shape, path
        np.testing.assert_array_equal(array, values(shape, salt), err_msg=path)
