"""Quantized tensors (``Tensor.quantize``, ``quantize_dynamic``, ``QTensor``)
against Burn's expected values (burn-backend-tests at v0.20.1: quantize.rs,
calibration.rs), min-max calibration in Python against the engine's, and
the int8 linear product against a NumPy evaluation of the same quantization
(weights symmetric per tensor, inputs affine u8 per row) and against the
float product within the quantization error."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from ferrum import ArgumentError, DType, Float, KindError, QTensor, ShapeError, Tensor
from ferrum import functional as F
from ferrum.backend import Autodiff, NdArray
from ferrum.quantization import (
    BlockSize,
    Calibration,
    QuantizationParameters,
    QuantLevel,
    QuantParam,
    QuantScheme,
    QuantStore,
    QuantValue,
    compute_q_params,
    compute_range,
)

DEVICE = NdArray.device()


def round_half_away(v: np.ndarray) -> np.ndarray:
    """Rust's ``f32::round`` of float32 values (ties away from zero), exactly: in float64."""
    v64 = v.astype(np.float64)
    return np.sign(v64) * np.floor(np.abs(v64) + 0.5)


def reference(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """The quantized product in float64, written from the definitions (the
    scales and scaled values in float32, as the engine computes them)."""
    scale_w = np.float32(2.0) * np.abs(w).max() / np.float32(254.0)
    qw = np.clip(round_half_away(w / scale_w), -127, 127)
    rows = x.reshape(-1, x.shape[-1]).astype(np.float32)
    lo = np.minimum(rows.min(axis=1), np.float32(0.0))
    hi = np.maximum(rows.max(axis=1), np.float32(0.0))
    scale_x = np.where(hi > lo, (hi - lo) / np.float32(255.0), np.float32(1.0)).astype(np.float32)
    zero = np.clip(round_half_away(-lo / scale_x), 0, 255).astype(np.float32)
    scaled = rows * (np.float32(1.0) / scale_x)[:, None] + zero[:, None]
    qx = np.clip(round_half_away(scaled), 0, 255) - zero[:, None]
    out = (qx @ qw.astype(np.float64)) * scale_x[:, None].astype(np.float64) * float(scale_w)
    if bias is not None:
        out = out + bias
    return np.asarray(out, dtype=np.float64).reshape(*x.shape[:-1], w.shape[1])


Q8S = QuantScheme().with_value(QuantValue.Q8S)


def t(values: object) -> Tensor[NdArray, Any, Float]:
    return Tensor.from_data(np.asarray(values, dtype=np.float32), DEVICE)


def test_scheme_defaults_and_builders_follow_burn() -> None:
    scheme = QuantScheme()
    assert (scheme.value, scheme.param, scheme.store, scheme.level, scheme.mode.name) == (
        QuantValue.Q8F,
        QuantParam.F32,
        QuantStore.PackedU32(0),
        QuantLevel.Tensor,
        "Symmetric",
    )
    built = scheme.with_value(QuantValue.Q4S).with_level(QuantLevel.block([2, 16])).with_param(QuantParam.F16)
    assert built.level.block_size == BlockSize((2, 16)) and built.param is QuantParam.F16
    assert built.params_shape((16, 16)) == (8, 1)
    assert QuantValue.Q8F.range() == (-128.0, 127.0) and QuantValue.Q4S.range() == (-7.0, 7.0)
    with pytest.raises(ValueError, match=r"1\.\.255"):
        QuantLevel.block([300])
    with pytest.raises(TypeError, match=r"QuantScheme\.value"):
        QuantScheme(value="Q8S")  # type: ignore[arg-type]


def test_quantize_with_burns_scale() -> None:
    q = t([-1.8, -1.0, 0.0, 0.5]).quantize(Q8S, QuantizationParameters(t([0.014173228])))
    assert isinstance(q, QTensor)
    assert q.values().to_data().to_list() == [-127, -71, 0, 35]
    np.testing.assert_allclose(q.dequantize().to_numpy(), [-1.8, -1.0062993, 0.0, 0.496063], rtol=1e-6)
    assert q.scheme() == Q8S and q.dims() == (4,)


def test_quantize_dynamic_with_burns_values() -> None:
    q = t([5.0, 0.0, 4.0, -12.7]).quantize_dynamic(Q8S)
    assert q.values().to_data().to_list() == [50, 0, 40, -127]
    np.testing.assert_allclose(q.scales().to_numpy(), [0.1], rtol=1e-6)
    # Burn's arange(0..32) quantized, dequantized, times 10.
    d = Tensor.arange(0, 32, DEVICE).float().quantize_dynamic(Q8S).dequantize() * 10.0
    np.testing.assert_allclose(
        d.to_numpy()[:6], [0.0, 9.76378, 19.52756, 29.29134, 39.05512, 48.818897], rtol=1e-5
    )
    np.testing.assert_allclose(d.to_numpy()[-2:], [300.23624, 310.0], rtol=1e-5)


def test_per_block_with_burns_values() -> None:
    scheme = Q8S.with_level(QuantLevel.block([2, 16]))
    x = Tensor.arange(0, 256, DEVICE).float().reshape((16, 16))
    d = x.quantize_dynamic(scheme).dequantize().to_numpy().reshape(-1)
    np.testing.assert_allclose(d[:6], [0.0, 0.97637796, 1.9527559, 2.929134, 3.9055119, 4.88189], rtol=1e-5)
    np.testing.assert_allclose(d[128:132], [127.70079, 128.95276, 130.20473, 131.4567], rtol=1e-5)
    np.testing.assert_allclose(d[-4:], [252.99213, 252.99213, 255.0, 255.0], rtol=1e-5)


def test_calibration_matches_burn_and_the_engine() -> None:
    x = t(
        [
            [-1.8, -1.0, 0.0, 0.5],
            [1.8, 1.0, 0.0, -0.5],
            [0.01, 0.02, 0.03, 0.04],
            [-0.01, -0.02, -0.03, -0.04],
        ]
    )
    scheme = Q8S.with_level(QuantLevel.block([4]))
    r = compute_range(scheme, x, Calibration.MinMax)
    np.testing.assert_allclose(r.min.to_numpy(), [[-1.8], [-0.5], [0.01], [-0.04]])
    np.testing.assert_allclose(r.max.to_numpy(), [[0.5], [1.8], [0.04], [-0.01]])
    qparams = compute_q_params(scheme, r)
    # Quantizing with the Python-calibrated scales gives what quantize_dynamic gives.
    by_params = x.quantize(scheme, qparams)
    dynamic = x.quantize_dynamic(scheme)
    assert by_params.values().to_data().to_list() == dynamic.values().to_data().to_list()
    np.testing.assert_array_equal(by_params.scales().to_numpy(), dynamic.scales().to_numpy())


@pytest.mark.parametrize(
    ("value", "want"), [(QuantValue.Q4S, [-7, -4, 2, 7]), (QuantValue.Q2S, [-1, -1, 0, 1])]
)
def test_narrow_values(value: QuantValue, want: list[int]) -> None:
    q = t([-1.0, -0.55, 0.25, 1.0]).quantize_dynamic(QuantScheme().with_value(value))
    assert q.values().to_data().to_list() == want
    assert q.nbytes() == 4 * value.size_bits() // 8 + 4


def test_scales_in_half_precision() -> None:
    q = t([0.3, -0.1]).quantize_dynamic(Q8S.with_param(QuantParam.F16))
    assert q.scales().to_numpy()[0] == np.float32(np.float16(np.float32(0.6) / np.float32(254.0)))


@pytest.mark.parametrize(("m", "k", "n"), [(1, 1, 1), (5, 3, 7), (13, 64, 33), (40, 130, 70), (64, 512, 96)])
def test_linear_product_matches_the_quantization(m: int, k: int, n: int) -> None:
    rng = np.random.default_rng(m * 1000 + k + n)
    x = rng.standard_normal((m, k)).astype(np.float32) + 0.3
    w = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    q = t(w).quantize_dynamic(Q8S)
    assert q.has_int8_product()
    y = q.linear(t(x), t(bias)).to_numpy()
    np.testing.assert_allclose(y, reference(x, w, bias), rtol=1e-5, atol=1e-5)
    # Against the float product: each operand within half a step of its value.
    exact = x.astype(np.float64) @ w + bias
    step_x = (np.maximum(x.max(axis=1), 0) - np.minimum(x.min(axis=1), 0)) / 255.0
    step_w = 2.0 * np.abs(w).max() / 254.0
    bound = (
        0.5 * (step_x[:, None] * np.abs(w).sum(axis=0) + np.abs(x).sum(axis=1)[:, None] * step_w) * 1.01
        + 1e-5
    )
    assert np.all(np.abs(y - exact) <= bound)


def test_linear_batch_dims_dtypes_and_block_fallback() -> None:
    rng = np.random.default_rng(3)
    w = rng.standard_normal((6, 4)).astype(np.float32)
    x = rng.standard_normal((2, 3, 6)).astype(np.float32)
    q = t(w).quantize_dynamic(Q8S)
    y = q.linear(t(x))
    assert y.dims() == (2, 3, 4)
    np.testing.assert_allclose(y.to_numpy(), reference(x, w, None), rtol=1e-5, atol=1e-5)
    y64 = q.linear(t(x).cast(DType.F64))
    assert y64.dtype == DType.F64
    assert q.linear(t(x).cast(DType.BF16)).dtype == DType.BF16
    # Per-block scales change along d_input: the product runs on the dequantized weight.
    qb = t(w).quantize_dynamic(Q8S.with_level(QuantLevel.block([4])))
    assert not qb.has_int8_product()
    np.testing.assert_allclose(
        qb.linear(t(x)).to_numpy(), x @ qb.dequantize().to_numpy(), rtol=1e-5, atol=1e-5
    )


def test_bad_input_names_the_problem() -> None:
    q = t(np.ones((6, 4))).quantize_dynamic(Q8S)
    with pytest.raises(ShapeError, match="d_input = 6"):
        q.linear(t(np.ones((2, 5))))
    with pytest.raises(ShapeError, match=r"bias must have shape \[4\]"):
        q.linear(t(np.ones((2, 6))), t(np.ones(3)))
    with pytest.raises(KindError):
        q.linear(Tensor.from_data(np.ones((2, 6), np.int64), DEVICE))
    with pytest.raises(ArgumentError, match="blocks of"):
        t(np.ones(10)).quantize_dynamic(Q8S.with_level(QuantLevel.block([4])))
    with pytest.raises(ArgumentError, match="finite"):
        t([1.0, np.inf]).quantize_dynamic(Q8S)
    with pytest.raises(ArgumentError, match="2 scales"):
        t(np.ones(4)).quantize(Q8S, QuantizationParameters(t([0.1, 0.2])))
    with pytest.raises(ValueError, match="E4M3 values are not computed"):
        t(np.ones(4)).quantize_dynamic(Q8S.with_value(QuantValue.E4M3))


def test_no_gradient_through_the_int8_product() -> None:
    device = Autodiff[NdArray].device()
    q = Tensor.from_data(np.ones((3, 2), np.float32), device).quantize_dynamic(Q8S)
    x = Tensor.from_data(np.ones((1, 3), np.float32), device).require_grad()
    with pytest.raises(Exception, match="no backward"):
        q.linear(x)
    assert q.linear(x.detach()).dims() == (1, 2)


def test_conv2d_on_the_int8_product() -> None:
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 3, 9, 8)).astype(np.float32)
    w = (rng.standard_normal((4, 3, 3, 3)) / 5.0).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    q = t(w).quantize_dynamic(Q8S)
    assert q.has_int8_conv() and not q.has_int8_conv(groups=3)
    got = q.conv2d(t(x), t(b), stride=(2, 1), padding=(1, (0, 2))).to_numpy()
    want = F.conv2d(t(x), q.dequantize(), t(b), stride=(2, 1), padding=(1, (0, 2))).to_numpy()
    assert got.shape == want.shape == (2, 4, 5, 8)
    # Only the input's quantization differs: half a step of each receptive field's range per tap.
    step = (max(float(x.max()), 0.0) - min(float(x.min()), 0.0)) / 255.0
    bound = 0.5 * step * np.abs(q.dequantize().to_numpy()).reshape(4, -1).sum(axis=1).max() * 1.01 + 1e-5
    assert np.abs(got - want).max() <= bound
