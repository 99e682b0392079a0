"""Ops that make tensors: Constant, ConstantOfShape, EyeLike, Range, RandomNormal/Uniform(Like), Bernoulli.

Ops without a tensor input take the run's ``device`` (the runner passes it).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ferrum._ferrum import Device, Distribution, DType, Tensor
from ferrum.backend import NdArray
from ferrum.onnx.dtypes import compute_dtype, compute_kind, numpy_dtype
from ferrum.onnx.ops._util import AnyTensor, IntArg, check_size, float_of, ints
from ferrum.onnx.ops.registry import op

__all__ = [
    "bernoulli",
    "constant",
    "constant_of_shape",
    "eye_like",
    "random_normal",
    "random_normal_like",
    "random_uniform",
    "random_uniform_like",
    "range_",
]


def _on(device: Device[Any] | None) -> Device[Any]:
    return device if device is not None else NdArray.device()


@op("Constant")
def constant(
    value: Any = None,
    value_float: float | None = None,
    value_floats: tuple[float, ...] | None = None,
    value_int: int | None = None,
    value_ints: tuple[int, ...] | None = None,
    device: Device[Any] | None = None,
) -> AnyTensor:
    """The node's constant value as a tensor."""
    if value is not None:
        array = np.asarray(value)
    elif value_float is not None:
        array = np.array(value_float, dtype=np.float32)
    elif value_floats is not None:
        array = np.array(value_floats, dtype=np.float32)
    elif value_int is not None:
        array = np.array(value_int, dtype=np.int64)
    elif value_ints is not None:
        array = np.array(value_ints, dtype=np.int64)
    else:
        raise ValueError("Constant: no value attribute (value, value_float(s) or value_int(s)) is set")
    return Tensor.from_numpy(compute_dtype(array), _on(device))


@op("ConstantOfShape", static=("shape",))
def constant_of_shape(
    shape: IntArg = None, value: Any = None, device: Device[Any] | None = None
) -> AnyTensor:
    """A tensor of ``shape`` filled with ``value``'s single element (0.0 f32 by default)."""
    fill = np.zeros(1, np.float32) if value is None else np.asarray(value).reshape(-1)
    dims = check_size(ints(shape) or [], "ConstantOfShape")
    on = shape.device() if isinstance(shape, Tensor) else _on(device)
    return Tensor.from_numpy(compute_dtype(np.full(dims, fill[0], dtype=fill.dtype)), on)


@op("EyeLike")
def eye_like(x: AnyTensor, dtype: int | None = None, k: int = 0) -> AnyTensor:
    """EyeLike (since opset 9): ones on diagonal ``k`` of a matrix shaped like ``x``, zeros elsewhere.

    ``x`` is rank 2 ``[rows, cols]``; only its shape is read (and its type when
    ``dtype`` is absent). ``k`` (0 by default) shifts the diagonal up when
    positive. ``dtype`` is an ONNX element type (``TensorProto.FLOAT`` ...);
    the result is computed in ferrum's type for it (f32, f64, i64 or bool). An
    ``x`` of another rank raises ``ValueError``.
    """
    rows, cols = x.dims()
    target = numpy_dtype(dtype) if dtype is not None else x.to_numpy().dtype
    return Tensor.from_numpy(compute_dtype(np.eye(rows, cols, k, dtype=target)), x.device())


@op("Range", static=("start", "limit", "delta"))
def range_(
    start: Any = None, limit: Any = None, delta: Any = None, device: Device[Any] | None = None
) -> AnyTensor:
    """``start, start + delta, ...`` below ``limit``, in the inputs' type."""
    values = [
        v.to_numpy().reshape(()) if isinstance(v, Tensor) else np.asarray(v) for v in (start, limit, delta)
    ]
    kind = np.result_type(*values)
    if values[2] == 0:
        raise ValueError("Range: delta is 0")
    check_size([max(0, math.ceil((values[1] - values[0]) / values[2]))], "Range")
    bounds: list[Any] = values
    array = np.arange(*bounds, dtype=kind)
    on = next((v.device() for v in (start, limit, delta) if isinstance(v, Tensor)), _on(device))
    return Tensor.from_numpy(compute_dtype(array), on)


def _random(shape: tuple[int, ...], dist: Distribution, dtype: int, device: Device[Any]) -> AnyTensor:
    out = Tensor.random(shape, dist, device)
    return out.cast(compute_dtype_of(dtype))


def compute_dtype_of(elem_type: int) -> DType:
    return DType.F64 if numpy_dtype(elem_type) == np.float64 else DType.F32


@op("RandomNormal", deterministic=False)
def random_normal(
    shape: tuple[int, ...] = (),
    mean: float = 0.0,
    scale: float = 1.0,
    seed: float | None = None,
    dtype: int = 1,
    device: Device[Any] | None = None,
) -> AnyTensor:
    """RandomNormal: a tensor of ``shape`` drawn from ``Normal(mean, scale)``.

    ``scale`` is the standard deviation (1.0 by default, ``mean`` 0.0).
    ``dtype`` is an ONNX element type: ``DOUBLE`` gives f64, any other f32.
    ``seed`` is accepted and ignored: draws come from ferrum's generator (seed
    it with ``NdArray.seed``). ``device`` is the run's device (the runner passes
    it). A negative dim, or more than ``2**31`` elements, raises ``ValueError``.
    """
    del seed
    return _random(check_size(shape, "RandomNormal"), Distribution.Normal(mean, scale), dtype, _on(device))


@op("RandomUniform", deterministic=False)
def random_uniform(
    shape: tuple[int, ...] = (),
    low: float = 0.0,
    high: float = 1.0,
    seed: float | None = None,
    dtype: int = 1,
    device: Device[Any] | None = None,
) -> AnyTensor:
    """RandomUniform: a tensor of ``shape`` drawn uniformly from ``[low, high)``.

    ``low`` and ``high`` default to 0.0 and 1.0. ``dtype`` is an ONNX element
    type: ``DOUBLE`` gives f64, any other f32. ``seed`` is accepted and ignored:
    draws come from ferrum's generator (seed it with ``NdArray.seed``).
    ``device`` is the run's device (the runner passes it). A negative dim, or
    more than ``2**31`` elements, raises ``ValueError``.
    """
    del seed
    return _random(check_size(shape, "RandomUniform"), Distribution.Uniform(low, high), dtype, _on(device))


@op("RandomNormalLike", deterministic=False)
def random_normal_like(
    x: AnyTensor, mean: float = 0.0, scale: float = 1.0, seed: float | None = None, dtype: int = 1
) -> AnyTensor:
    """RandomNormalLike: a tensor of ``x``'s shape drawn from ``Normal(mean, scale)``, on ``x``'s device.

    Only ``x``'s shape is read. ``dtype`` is an ONNX element type: ``DOUBLE``
    gives f64, any other (and the default, FLOAT) f32 -- not ``x``'s type.
    ``seed`` is accepted and ignored (ferrum's generator draws).
    """
    del seed
    return _random(tuple(x.dims()), Distribution.Normal(mean, scale), dtype, x.device())


@op("RandomUniformLike", deterministic=False)
def random_uniform_like(
    x: AnyTensor, low: float = 0.0, high: float = 1.0, seed: float | None = None, dtype: int = 1
) -> AnyTensor:
    """RandomUniformLike: a tensor of ``x``'s shape drawn uniformly from ``[low, high)``, on ``x``'s device.

    Only ``x``'s shape is read. ``dtype`` is an ONNX element type: ``DOUBLE``
    gives f64, any other (and the default, FLOAT) f32 -- not ``x``'s type.
    ``seed`` is accepted and ignored (ferrum's generator draws).
    """
    del seed
    return _random(tuple(x.dims()), Distribution.Uniform(low, high), dtype, x.device())


@op("Bernoulli", deterministic=False)
def bernoulli(x: AnyTensor, dtype: int | None = None, seed: float | None = None) -> AnyTensor:
    """1 with each element's probability, else 0 (in ``x``'s type unless ``dtype``)."""
    del seed
    draws = Tensor.random(tuple(x.dims()), Distribution.Uniform(0.0, 1.0), x.device())
    hit = draws.lower(float_of(x).cast(draws.dtype))
    target = numpy_dtype(dtype) if dtype is not None else x.to_numpy().dtype
    if compute_kind(target) == "b":
        return hit
    if compute_kind(target) == "i":
        return hit.int()
    return hit.float().cast(compute_dtype_of(1 if target != np.float64 else 11))
