"""The quantized model of interop/burn/src/quantized.rs, built in ferrum, and
Burn's symmetric int8 quantization of its formula values computed with NumPy.

Keep in sync with the Rust program: two Linears (4 -> 16 -> 16), the
``values``/``id_of`` formulas of burn_interop_model.py with salts 20-23, and
the two schemes (Q8S per tensor and in blocks of 16, values stored one byte
each, f32 scales).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from ferrum import Tensor
from ferrum.backend import Backend, NdArray
from ferrum.module import Module, Param, ParamId
from ferrum.nn import Linear, LinearConfig
from ferrum.quantization import Calibration, Quantizer, QuantLevel, QuantScheme, QuantStore, QuantValue
from ferrum.record import (
    BinFileRecorder,
    FileRecorder,
    FullPrecisionSettings,
    NamedMpkFileRecorder,
    PrettyJsonFileRecorder,
)

from tests.support.burn_interop_model import DEVICE, id_of, values

B = TypeVar("B", bound=Backend)

LAYOUT: list[tuple[str, tuple[int, ...], int]] = [
    ("a.weight", (4, 16), 20),
    ("a.bias", (16,), 21),
    ("b.weight", (16, 16), 22),
    ("b.bias", (16,), 23),
]
_Q8S = QuantScheme().with_value(QuantValue.Q8S).with_store(QuantStore.Native)
# Block size per level name (None: one scale for the whole tensor), as in the file names.
LEVELS: dict[str, int | None] = {"tensor": None, "block16": 16}
# The recorders the program writes quantized models with, at full precision.
RECORDERS: dict[str, type[FileRecorder]] = {
    "named_mpk": NamedMpkFileRecorder,
    "bin": BinFileRecorder,
    "pretty_json": PrettyJsonFileRecorder,
}
CASES = [(level, name) for level in LEVELS for name in RECORDERS]


def recorder(name: str) -> FileRecorder:
    """The recorder of file-name part ``name`` at full precision."""
    return RECORDERS[name](FullPrecisionSettings)


def scheme(level: str) -> QuantScheme:
    """The scheme the Rust program quantizes with at ``level`` ("tensor" or "block16")."""
    block = LEVELS[level]
    return _Q8S.with_level(QuantLevel.Tensor if block is None else QuantLevel.block([block]))


def quantizer(level: str) -> Quantizer:
    """Burn's ``Quantizer { calibration: MinMax, scheme }`` at ``level``."""
    return Quantizer(Calibration.MinMax, scheme(level))


class QNet(Module[B]):
    """Burn's ``QNet``: two Linears with bias."""

    a: Linear[B]
    b: Linear[B]


def fresh() -> QNet[NdArray]:
    """The model with random values and ids, as built before loading."""
    return QNet(LinearConfig(4, 16).init(DEVICE), LinearConfig(16, 16).init(DEVICE))


def _param(path: str) -> Param[Any]:
    shape, salt = next((shape, salt) for name, shape, salt in LAYOUT if name == path)
    return Param(Tensor.from_numpy(values(shape, salt).astype(np.float32), DEVICE), ParamId(id_of(salt)))


def model() -> QNet[NdArray]:
    """The float model holding the formula values and ids."""
    net = fresh()
    return QNet(
        dataclasses.replace(net.a, weight=_param("a.weight"), bias=_param("a.bias")),
        dataclasses.replace(net.b, weight=_param("b.weight"), bias=_param("b.bias")),
    )


def burn_quantize(
    x: np.ndarray[Any, Any], block: int | None
) -> tuple[np.ndarray[Any, np.dtype[np.int8]], np.ndarray[Any, np.dtype[np.float32]]]:
    """Burn's min-max symmetric Q8S: per block of the flattened values,
    ``scale = 2 * max(|min|, |max|) / 254`` in f32 and ``q = clamp(round(x / scale), -127, 127)``,
    rounding halves away from zero as Rust's ``f32::round`` does."""
    flat = x.astype(np.float32).reshape(-1)
    size = flat.size if block is None else block
    blocks = flat.reshape(-1, size)
    lo, hi = np.abs(blocks.min(axis=1)), np.abs(blocks.max(axis=1))
    scales = (np.maximum(lo, hi) * np.float32(2) / np.float32(254)).astype(np.float32)
    ratio = (blocks / scales[:, None]).astype(np.float32)
    q = np.clip(np.sign(ratio) * np.floor(np.abs(ratio) + np.float32(0.5)), -127, 127)
    return q.astype(np.int8).reshape(x.shape), scales


def write_quantized(out: Path) -> None:
    """ferrum's quantized models under the names the Burn program's ``load`` reads."""
    for level, name in CASES:
        quantized = model().quantize_weights(quantizer(level))
        quantized.save_file(out / f"quantized_{level}_{name}", recorder(name))
