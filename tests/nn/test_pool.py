"""Pooling (ferrum.nn.pool and the engine's pool functions) against NumPy references.

Max and average pooling are compared with window-by-window NumPy loops that
follow PyTorch's rules (which Burn shares): padding ignored by max, counted
by average with ``count_include_pad``, ceil-mode windows that must start
inside the input or its leading padding. Adaptive pooling uses the
floor/ceil split. Gradients are checked against finite differences in f64.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from ferrum import DType, Int, Tensor, _ferrum
from ferrum.backend import NdArray
from ferrum.nn import PaddingConfig1d, PaddingConfig2d
from ferrum.nn.pool import (
    AdaptiveAvgPool1dConfig,
    AdaptiveAvgPool2dConfig,
    AvgPool1dConfig,
    AvgPool2dConfig,
    MaxPool1dConfig,
    MaxPool2dConfig,
)

from tests.support.devices import AD, DEVICE
from tests.support.f64 import arr, f64
from tests.support.gradcheck import case, check_case, distinct, smooth

Array = npt.NDArray[Any]
Pair = tuple[int, int]


def out_size(n: int, k: int, s: int, pad: Pair, d: int, ceil_mode: bool) -> int:
    span = d * (k - 1) + 1
    room = n + pad[0] + pad[1] - span
    size = (math.ceil(room / s) if ceil_mode else room // s) + 1
    if ceil_mode and (size - 1) * s >= n + pad[0]:
        size -= 1
    return size


def np_pool2d(
    x: Array,
    kernel: Pair,
    stride: Pair,
    pad: tuple[Pair, Pair],
    dilation: Pair = (1, 1),
    ceil_mode: bool = False,
    mode: str = "max",
) -> Array:
    """Pooling one window at a time; ``mode`` is "max", "avg_include_pad" or "avg_exclude_pad"."""
    n, c, h, w = x.shape
    oh = out_size(h, kernel[0], stride[0], pad[0], dilation[0], ceil_mode)
    ow = out_size(w, kernel[1], stride[1], pad[1], dilation[1], ceil_mode)
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            rows = [i * stride[0] - pad[0][0] + a * dilation[0] for a in range(kernel[0])]
            cols = [j * stride[1] - pad[1][0] + b * dilation[1] for b in range(kernel[1])]
            inside_r = [r for r in rows if 0 <= r < h]
            inside_c = [q for q in cols if 0 <= q < w]
            window = x[:, :, inside_r][:, :, :, inside_c]
            if mode == "max":
                out[:, :, i, j] = window.max(axis=(2, 3))
            else:
                # The padded count stops at the trailing padding: ceil-mode overhang is not counted.
                padded = sum(r < h + pad[0][1] for r in rows) * sum(q < w + pad[1][1] for q in cols)
                count = padded if mode == "avg_include_pad" else len(inside_r) * len(inside_c)
                out[:, :, i, j] = window.sum(axis=(2, 3)) / count
    return out


def np_adaptive2d(x: Array, size: Pair) -> Array:
    n, c, h, w = x.shape
    out = np.zeros((n, c, *size))
    for i in range(size[0]):
        h0, h1 = (i * h) // size[0], -((-(i + 1) * h) // size[0])
        for j in range(size[1]):
            w0, w1 = (j * w) // size[1], -((-(j + 1) * w) // size[1])
            out[:, :, i, j] = x[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
    return out


POOL_CASES = [
    # kernel, stride, padding per side, dilation, ceil_mode
    ((2, 2), (2, 2), ((0, 0), (0, 0)), (1, 1), False),
    ((3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), False),
    ((3, 2), (2, 3), ((1, 0), (1, 1)), (1, 1), True),
    ((2, 3), (2, 2), ((0, 1), (1, 1)), (1, 1), True),
    ((3, 3), (2, 1), ((2, 1), (0, 2)), (2, 2), False),
]


@pytest.mark.parametrize(("kernel", "stride", "pad", "dilation", "ceil_mode"), POOL_CASES)
def test_max_pool2d_matches_numpy(
    kernel: Pair, stride: Pair, pad: tuple[Pair, Pair], dilation: Pair, ceil_mode: bool
) -> None:
    x = np.random.default_rng(0).normal(size=(2, 3, 9, 8))
    got, idx = _ferrum.max_pool2d_with_indices(f64(x), kernel, stride, pad, dilation, ceil_mode)
    want = np_pool2d(x, kernel, stride, pad, dilation, ceil_mode)
    np.testing.assert_array_equal(arr(got), want)
    # Each index is the flat position, within its plane, of the maximum.
    assert idx.dtype == DType.I64
    flat = x.reshape(2, 3, -1)
    picked = np.take_along_axis(flat, idx.to_numpy().reshape(2, 3, -1), axis=2).reshape(want.shape)
    np.testing.assert_array_equal(picked, want)


@pytest.mark.parametrize(("kernel", "stride", "pad", "dilation", "ceil_mode"), POOL_CASES)
@pytest.mark.parametrize("dtype", [DType.F32, DType.F64])
def test_max_pool2d_without_indices_matches_numpy_nan_included(
    kernel: Pair, stride: Pair, pad: tuple[Pair, Pair], dilation: Pair, ceil_mode: bool, dtype: DType
) -> None:
    # Untracked, max_pool2d takes the kernel that keeps no indices: the same values, NaN winning.
    x = np.random.default_rng(1).normal(size=(2, 3, 9, 8))
    x[0, 1, 4, 2] = x[1, 2, 0, 0] = np.nan
    x[1, 0, 3, :] = -np.inf
    got = _ferrum.max_pool2d(
        Tensor.from_numpy(x, DEVICE, dtype=dtype), kernel, stride, pad, dilation, ceil_mode
    )
    assert got.dtype == dtype
    np.testing.assert_array_equal(
        arr(got), np_pool2d(x.astype(got.to_numpy().dtype), kernel, stride, pad, dilation, ceil_mode)
    )


@pytest.mark.parametrize(
    ("kernel", "stride", "pad", "dilation", "ceil_mode"), [c for c in POOL_CASES if c[3] == (1, 1)]
)
@pytest.mark.parametrize("include", [True, False])
def test_avg_pool2d_matches_numpy(
    kernel: Pair, stride: Pair, pad: tuple[Pair, Pair], dilation: Pair, ceil_mode: bool, include: bool
) -> None:
    x = np.random.default_rng(1).normal(size=(2, 2, 7, 6))
    got = _ferrum.avg_pool2d(f64(x), kernel, stride, pad, include, ceil_mode)
    mode = "avg_include_pad" if include else "avg_exclude_pad"
    np.testing.assert_allclose(
        arr(got), np_pool2d(x, kernel, stride, pad, ceil_mode=ceil_mode, mode=mode), rtol=1e-12
    )


def test_one_d_pools_equal_two_d_of_height_one() -> None:
    x = np.random.default_rng(2).normal(size=(2, 3, 11))
    got = _ferrum.max_pool1d(f64(x), 3, 2, (1, 1), 2, True)
    want = np_pool2d(x[:, :, None], (1, 3), (1, 2), ((0, 0), (1, 1)), (1, 2), True)[:, :, 0]
    np.testing.assert_array_equal(arr(got), want)
    avg = _ferrum.avg_pool1d(f64(x), 3, 2, 1, False, True)
    want_avg = np_pool2d(
        x[:, :, None], (1, 3), (1, 2), ((0, 0), (1, 1)), ceil_mode=True, mode="avg_exclude_pad"
    )
    np.testing.assert_allclose(arr(avg), want_avg[:, :, 0], rtol=1e-12)
    _, idx = _ferrum.max_pool1d_with_indices(f64(x), 2)
    assert idx.dims() == (2, 3, 5)
    np.testing.assert_array_equal(
        idx.to_numpy(), np.argmax(x[:, :, :10].reshape(2, 3, 5, 2), axis=3) + 2 * np.arange(5)
    )


@pytest.mark.parametrize("size", [(1, 1), (3, 2), (7, 5), (9, 8)])
def test_adaptive_avg_pool2d_matches_numpy(size: Pair) -> None:
    x = np.random.default_rng(3).normal(size=(2, 3, 7, 5))
    got = _ferrum.adaptive_avg_pool2d(f64(x), size)
    np.testing.assert_allclose(arr(got), np_adaptive2d(x, size), rtol=1e-12)
    row = _ferrum.adaptive_avg_pool1d(f64(x[:, :, 0]), size[1])
    np.testing.assert_allclose(arr(row), np_adaptive2d(x[:, :, :1], (1, size[1]))[:, :, 0], rtol=1e-12)


GRAD_CASES = [
    case(
        "max_pool2d",
        lambda x: _ferrum.max_pool2d(x, (3, 2), (2, 1), ((1, 1), (0, 1)), (1, 1), True),
        distinct((2, 2, 6, 5)),
    ),
    case(
        "max_pool2d_dilated",
        lambda x: _ferrum.max_pool2d(x, (2, 2), (1, 2), (1, 0), (2, 1)),
        distinct((1, 2, 5, 6)),
    ),
    case(
        "avg_pool2d_include",
        lambda x: _ferrum.avg_pool2d(x, (3, 3), (2, 2), (1, 1), True, True),
        smooth((2, 2, 6, 5)),
    ),
    case(
        "avg_pool2d_exclude",
        lambda x: _ferrum.avg_pool2d(x, (2, 3), (1, 2), ((0, 1), (1, 1)), False),
        smooth((1, 2, 5, 6)),
    ),
    case("adaptive_avg_pool2d", lambda x: _ferrum.adaptive_avg_pool2d(x, (4, 3)), smooth((2, 2, 7, 5))),
    case("adaptive_avg_pool2d_up", lambda x: _ferrum.adaptive_avg_pool2d(x, (5, 4)), smooth((1, 2, 3, 3))),
    case("max_pool1d", lambda x: _ferrum.max_pool1d(x, 3, 2, 1), distinct((2, 3, 9))),
    case("avg_pool1d", lambda x: _ferrum.avg_pool1d(x, 3, 2, 1, False, True), smooth((2, 3, 9))),
    case("adaptive_avg_pool1d", lambda x: _ferrum.adaptive_avg_pool1d(x, 4), smooth((2, 3, 9))),
]


@pytest.mark.parametrize("c", GRAD_CASES, ids=lambda c: c.name)
def test_gradients_match_finite_differences(c: Any) -> None:
    check_case(c)


# --------------------------------------------------------------------------- layers


def test_configs_have_burns_defaults() -> None:
    # Burn's `new` sets the stride to the kernel size.
    mp = MaxPool2dConfig((3, 3))
    assert (mp.stride, mp.padding, mp.dilation) == ((3, 3), PaddingConfig2d.Valid, (1, 1))
    assert mp.ceil_mode is False
    assert mp.init().stride == (3, 3)
    assert mp.with_kernel_size((2, 2)).stride == (3, 3)
    ap = AvgPool2dConfig((2, 2))
    assert (ap.padding, ap.count_include_pad, ap.ceil_mode) == (PaddingConfig2d.Valid, True, False)
    assert MaxPool1dConfig(4).init().stride == 4 and AvgPool1dConfig(4).with_stride(1).init().stride == 1


def test_layers_match_numpy() -> None:
    x = np.random.default_rng(4).normal(size=(2, 3, 10, 9)).astype(np.float32)
    t = Tensor.from_floats(x, DEVICE)
    xd = x.astype(np.float64)
    maxpool = MaxPool2dConfig((2, 2)).with_stride((2, 2)).init()
    np.testing.assert_array_equal(arr(maxpool.forward(t)), np_pool2d(xd, (2, 2), (2, 2), ((0, 0), (0, 0))))
    same = MaxPool2dConfig((3, 3)).with_stride((1, 1)).with_padding(PaddingConfig2d.Same).init()
    np.testing.assert_array_equal(arr(same.forward(t)), np_pool2d(xd, (3, 3), (1, 1), ((1, 1), (1, 1))))
    avg = (
        AvgPool2dConfig((3, 3))
        .with_stride((2, 2))
        .with_padding(PaddingConfig2d.Explicit(1, 1))
        .with_ceil_mode(True)
    )
    want = np_pool2d(xd, (3, 3), (2, 2), ((1, 1), (1, 1)), ceil_mode=True, mode="avg_include_pad")
    np.testing.assert_allclose(arr(avg.init().forward(t)), want, rtol=1e-5, atol=1e-6)
    excl = avg.with_count_include_pad(False).init()
    want_excl = np_pool2d(xd, (3, 3), (2, 2), ((1, 1), (1, 1)), ceil_mode=True, mode="avg_exclude_pad")
    np.testing.assert_allclose(arr(excl.forward(t)), want_excl, rtol=1e-5, atol=1e-6)
    gap = AdaptiveAvgPool2dConfig((1, 1)).init()
    np.testing.assert_allclose(arr(gap.forward(t)), xd.mean(axis=(2, 3), keepdims=True), rtol=1e-5, atol=1e-6)
    seq = Tensor.from_floats(x[:, :, 0], DEVICE)
    m1 = MaxPool1dConfig(3).with_stride(1).with_padding(PaddingConfig1d.Same).init()
    np.testing.assert_array_equal(
        arr(m1.forward(seq)), np_pool2d(xd[:, :, :1], (1, 3), (1, 1), ((0, 0), (1, 1)))[:, :, 0]
    )
    a1 = AvgPool1dConfig(2).init()
    np.testing.assert_allclose(
        arr(a1.forward(seq)), xd[:, :, 0, :8].reshape(2, 3, 4, 2).mean(axis=3), rtol=1e-5
    )
    g1 = AdaptiveAvgPool1dConfig(1).init()
    np.testing.assert_allclose(arr(g1.forward(seq)), xd[:, :, 0].mean(axis=2, keepdims=True), rtol=1e-5)


def test_max_pool_gradient_goes_to_the_maximum_during_training() -> None:
    x = np.array([[[[1.0, 5.0], [3.0, 2.0]]]], dtype=np.float32)
    xt = Tensor.from_floats(x, AD).require_grad()
    grads = MaxPool2dConfig((2, 2)).init().forward(xt).sum().backward()
    g = xt.grad(grads)
    assert g is not None
    np.testing.assert_array_equal(arr(g), [[[[0.0, 1.0], [0.0, 0.0]]]])
    gap_grads = AdaptiveAvgPool2dConfig((1, 1)).init().forward(xt).sum().backward()
    g2 = xt.grad(gap_grads)
    assert g2 is not None
    np.testing.assert_allclose(arr(g2), np.full((1, 1, 2, 2), 0.25))


def test_pools_have_no_params_and_print_their_settings() -> None:
    pool = MaxPool2dConfig((2, 2)).init()
    assert pool.num_params() == 0
    # A module without a backend in Burn (its derive's `constant!`): the whole record is nil.
    assert pool.into_record() is None
    assert (
        repr(pool) == "MaxPool2d {kernel_size: [2, 2], stride: [2, 2], padding: Valid, dilation: [1, 1],"
        " ceil_mode: false}"
    )
    assert repr(AdaptiveAvgPool2dConfig((1, 1)).init()) == "AdaptiveAvgPool2d {output_size: [1, 1]}"


def test_with_indices_returns_an_int_tensor() -> None:
    _, idx = _ferrum.max_pool2d_with_indices(Tensor.ones((1, 1, 4, 4), DEVICE), (2, 2))
    typed: Tensor[NdArray, Any, Int] = idx
    assert typed.dims() == (1, 1, 2, 2)


def test_bad_configs_and_inputs_are_reported() -> None:
    with pytest.raises(ValueError, match=r"MaxPool2dConfig\.kernel_size must be a pair of ints >= 1"):
        MaxPool2dConfig((0, 2))
    with pytest.raises(ValueError, match="Same padding with an even kernel size"):
        AvgPool2dConfig((2, 2)).with_padding(PaddingConfig2d.Same)
    with pytest.raises(ValueError, match=r"AdaptiveAvgPool1dConfig\.output_size must be an int >= 1"):
        AdaptiveAvgPool1dConfig(0)
    with pytest.raises(ValueError, match="max_pool2d: spatial dim 0 of size 2"):
        MaxPool2dConfig((3, 3)).init().forward(Tensor.ones((1, 1, 2, 5), DEVICE))
    with pytest.raises(ValueError, match="must be at most half the kernel span"):
        _ferrum.max_pool2d(Tensor.ones((1, 1, 4, 4), DEVICE), (2, 2), None, (2, 0))
