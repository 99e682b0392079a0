"""Every function of ``ferrum.activation`` against a NumPy reference formula
(computed in f64), over shapes, both Float dtypes and strided layouts, plus
their behaviour at extreme inputs."""

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from ferrum import DType, Tensor, activation
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.tensors import (
    DEVICE,
    FLOAT_DTYPES,
    SETTINGS,
    Array,
    T,
    arrays,
    assert_close,
    dtypes,
    layouts,
    shapes,
    tensor,
)


def f64(a: Array) -> Array:
    return a.astype(np.float64)


def _erf(x: Array) -> Array:
    out: Array = np.vectorize(math.erf, otypes=[np.float64])(x)
    return out


def _sigmoid(x: Array) -> Array:
    out: Array = np.where(x >= 0, 1 / (1 + np.exp(-np.abs(x))), np.exp(-np.abs(x)) / (1 + np.exp(-np.abs(x))))
    return out


def _softplus(x: Array, beta: float = 1.0) -> Array:
    out: Array = np.logaddexp(0.0, beta * x) / beta
    return out


ELEMENTWISE: dict[str, tuple[Callable[[T], T], Callable[[Array], Array]]] = {
    "relu": (activation.relu, lambda x: np.maximum(x, 0.0)),
    "gelu": (activation.gelu, lambda x: 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))),
    "log_sigmoid": (activation.log_sigmoid, lambda x: -_softplus(-x)),
    "silu": (activation.silu, lambda x: x * _sigmoid(x)),
    "hard_swish": (activation.hard_swish, lambda x: x * np.clip(x + 3.0, 0.0, 6.0) / 6.0),
    "mish": (activation.mish, lambda x: x * np.tanh(_softplus(x))),
    "sigmoid": (activation.sigmoid, _sigmoid),
    "tanh": (activation.tanh, np.tanh),
    "leaky_relu": (activation.leaky_relu, lambda x: np.where(x >= 0, x, 0.01 * x)),
    "hard_sigmoid": (activation.hard_sigmoid, lambda x: np.clip(0.2 * x + 0.5, 0.0, 1.0)),
    "softplus": (activation.softplus, _softplus),
}


def float_tol(dtype: str) -> tuple[float, float]:
    return (2e-5, 2e-6) if dtype == "f32" else (1e-12, 1e-12)


@settings(max_examples=60, deadline=None)
@given(st.data(), st.sampled_from(sorted(ELEMENTWISE)), dtypes(FLOAT_DTYPES), shapes(), layouts())
def test_elementwise_activations(
    data: st.DataObject, name: str, dtype: str, shape: tuple[int, ...], layout: str
) -> None:
    fn, ref = ELEMENTWISE[name]
    a: Any = data.draw(arrays(dtype, shape, low=-20, high=20))
    x = tensor(a, layout)
    rtol, atol = float_tol(dtype)
    out = fn(x)
    assert out.dtype == x.dtype
    assert_close(out, ref(f64(a)).astype(a.dtype), dtype, rtol=rtol, atol=atol)
    np.testing.assert_array_equal(x.to_numpy(), a)


@SETTINGS
@given(
    st.data(),
    dtypes(FLOAT_DTYPES),
    shapes(),
    layouts(),
    st.floats(-2, 2),
    st.sampled_from([0.5, 1.0, 2.0, -1.0]),
)
def test_parametrised_activations(
    data: st.DataObject, dtype: str, shape: tuple[int, ...], layout: str, slope: float, beta: float
) -> None:
    a: Any = data.draw(arrays(dtype, shape, low=-20, high=20))
    x, v = tensor(a, layout), f64(a)
    rtol, atol = float_tol(dtype)
    assert_close(
        activation.leaky_relu(x, slope),
        np.where(v >= 0, v, slope * v).astype(a.dtype),
        dtype,
        rtol=rtol,
        atol=atol,
    )
    hs = np.clip(slope * v + 0.25, 0.0, 1.0).astype(a.dtype)
    assert_close(activation.hard_sigmoid(x, slope, 0.25), hs, dtype, rtol=rtol, atol=atol)
    assert_close(
        activation.softplus(x, beta), _softplus(v, beta).astype(a.dtype), dtype, rtol=rtol, atol=atol
    )


# --------------------------------------------------------------------------- along a dim


def _softmax(x: Array, dim: int) -> Array:
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    out: Array = e / e.sum(axis=dim, keepdims=True)
    return out


def _log_softmax(x: Array, dim: int) -> Array:
    m = x.max(axis=dim, keepdims=True)
    out: Array = x - m - np.log(np.exp(x - m).sum(axis=dim, keepdims=True))
    return out


def _quiet_softmax_burn(x: Array, dim: int) -> Array:
    # Burn's function exp(x) / (1 + sum exp(x)), scaled by exp(-max) where exp(x) would overflow.
    m = np.maximum(x.max(axis=dim, keepdims=True), 0.0)
    e = np.exp(x - m)
    out: Array = e / (np.exp(-m) + e.sum(axis=dim, keepdims=True))
    return out


ALONG_DIM: dict[str, tuple[Callable[[T, int], T], Callable[[Array, int], Array]]] = {
    "softmax": (activation.softmax, _softmax),
    "log_softmax": (activation.log_softmax, _log_softmax),
    "softmin": (activation.softmin, lambda x, d: _softmax(-x, d)),
    "quiet_softmax": (activation.quiet_softmax, _quiet_softmax_burn),
}


@settings(max_examples=60, deadline=None)
@given(st.data(), st.sampled_from(sorted(ALONG_DIM)), dtypes(FLOAT_DTYPES), shapes(max_side=6), layouts())
def test_softmax_family(
    data: st.DataObject, name: str, dtype: str, shape: tuple[int, ...], layout: str
) -> None:
    fn, ref = ALONG_DIM[name]
    a: Any = data.draw(arrays(dtype, shape, low=-30, high=30))
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    rtol, atol = float_tol(dtype)
    out = fn(tensor(a, layout), dim)
    assert_close(out, ref(f64(a), dim).astype(a.dtype), dtype, rtol=rtol, atol=atol)


@SETTINGS
@given(st.data(), dtypes(FLOAT_DTYPES), shapes(max_side=4), layouts())
def test_softmax_rows_sum_to_one(
    data: st.DataObject, dtype: str, shape: tuple[int, ...], layout: str
) -> None:
    a: Any = data.draw(arrays(dtype, shape, low=-1000, high=1000))
    dim = data.draw(st.integers(0, len(shape) - 1))
    s = activation.softmax(tensor(a, layout), dim).sum_dim(dim)
    assert_close(s, np.ones(s.shape(), a.dtype), dtype, rtol=1e-5, atol=1e-5)


@SETTINGS
@given(st.data(), dtypes(FLOAT_DTYPES), shapes(max_side=4), layouts())
def test_glu(data: st.DataObject, dtype: str, shape: tuple[int, ...], layout: str) -> None:
    dim = data.draw(st.integers(0, len(shape) - 1))
    even = tuple(2 * n if d == dim else n for d, n in enumerate(shape))
    a: Any = data.draw(arrays(dtype, even, low=-20, high=20))
    first, second = np.split(f64(a), 2, axis=dim)
    rtol, atol = float_tol(dtype)
    out = activation.glu(tensor(a, layout), dim - len(shape) if data.draw(st.booleans()) else dim)
    assert_close(out, (first * _sigmoid(second)).astype(a.dtype), dtype, rtol=rtol, atol=atol)


@SETTINGS
@given(st.data(), dtypes(FLOAT_DTYPES), shapes(min_rank=1, max_rank=4), layouts())
def test_prelu_per_channel(data: st.DataObject, dtype: str, shape: tuple[int, ...], layout: str) -> None:
    a: Any = data.draw(arrays(dtype, shape, low=-20, high=20))
    # Dim 1 holds the channels; a rank-1 input has one channel (Burn, PyTorch).
    channel_dim = 1 if len(shape) >= 2 else 0
    c = shape[channel_dim] if len(shape) >= 2 else 1
    alpha: Any = data.draw(arrays(dtype, (c,), low=-1, high=1))
    bshape = [1] * len(shape)
    bshape[channel_dim] = c
    v = f64(a)
    expected = np.where(v >= 0, v, v * f64(alpha).reshape(bshape)).astype(a.dtype)
    rtol, atol = float_tol(dtype)
    assert_close(activation.prelu(tensor(a, layout), tensor(alpha)), expected, dtype, rtol=rtol, atol=atol)
    one: Any = data.draw(arrays(dtype, (1,), low=-1, high=1))
    single = np.where(v >= 0, v, v * float(one[0])).astype(a.dtype)
    assert_close(activation.prelu(tensor(a, layout), tensor(one)), single, dtype, rtol=rtol, atol=atol)


# --------------------------------------------------------------------------- extremes


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_activations_are_stable_at_extremes(dtype: str) -> None:
    dt = DType.F32 if dtype == "f32" else DType.F64
    x = Tensor.from_floats([-1000.0, -50.0, 0.0, 50.0, 1000.0], DEVICE, dtype=dt)
    v = np.array([-1000.0, -50.0, 0.0, 50.0, 1000.0])
    rtol, atol = float_tol(dtype)
    assert_close(activation.sigmoid(x), _sigmoid(v), dtype, rtol=rtol, atol=atol)
    assert_close(activation.log_sigmoid(x), -_softplus(-v), dtype, rtol=rtol, atol=atol)
    assert_close(activation.softplus(x), _softplus(v), dtype, rtol=rtol, atol=atol)
    assert_close(activation.mish(x), v * np.tanh(_softplus(v)), dtype, rtol=rtol, atol=atol)
    assert_close(activation.silu(x), v * _sigmoid(v), dtype, rtol=rtol, atol=atol)
    assert_close(activation.gelu(x), [-0.0, -0.0, 0.0, 50.0, 1000.0], dtype, rtol=rtol, atol=atol)
    for out in (activation.softmax(x, 0), activation.log_softmax(x, 0), activation.quiet_softmax(x, 0)):
        assert np.isfinite(out.to_numpy()).all()
    assert_close(activation.softmax(x, 0), _softmax(v, 0), dtype, rtol=rtol, atol=atol)
    assert_close(activation.log_softmax(x, 0), _log_softmax(v, 0), dtype, rtol=rtol, atol=atol)


def test_gelu_negative_tail_keeps_digits() -> None:
    x = Tensor.from_floats([-6.0, -8.0, -10.0], DEVICE, dtype=DType.F64)
    v = np.array([-6.0, -8.0, -10.0])
    expected = 0.5 * v * np.vectorize(math.erfc)(-v / math.sqrt(2.0))
    assert_close(activation.gelu(x), expected, "f64", rtol=1e-10, atol=0.0)


def test_quiet_softmax_can_attend_to_nothing() -> None:
    # With very negative scores every weight is small: the row does not sum to 1.
    x = Tensor.from_floats([[-20.0, -20.0], [5.0, 5.0], [-1e4, -1e4]], DEVICE, dtype=DType.F64)
    out = activation.quiet_softmax(x, 1).to_numpy()
    np.testing.assert_allclose(out[0], np.exp(-20.0) / (1 + 2 * np.exp(-20.0)), rtol=1e-12)
    np.testing.assert_allclose(out[1], np.exp(5.0) / (1 + 2 * np.exp(5.0)), rtol=1e-12)
    np.testing.assert_array_equal(out[2], [0.0, 0.0])  # a fully masked row attends to nothing


def test_relu_keeps_nan() -> None:
    out = activation.relu(Tensor.from_floats([float("nan"), -1.0, 2.0], DEVICE)).to_numpy()
    assert np.isnan(out[0])
    np.testing.assert_array_equal(out[1:], [0.0, 2.0])


def test_activation_module_exports_every_function() -> None:
    expected = {
        "gelu", "glu", "hard_sigmoid", "hard_swish", "leaky_relu", "log_sigmoid", "log_softmax", "mish",
        "prelu", "quiet_softmax", "relu", "sigmoid", "silu", "softmax", "softmin", "softplus", "tanh",
    }  # fmt: skip
    assert set(activation.__all__) == expected
    tested = set(ELEMENTWISE) | set(ALONG_DIM) | {"glu", "prelu"}
    assert tested == expected
