"""The fused ``layer_norm`` op (what ``LayerNorm`` runs) against an f64 NumPy reference:
forward and the gradients of the input, gamma and beta (central differences of the
reference) in f32, bf16 and f16, with and without beta, ranks 2 to 4, a last dim of 1
and odd sizes; the same gradients under balanced checkpointing; bad operands raise."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from ferrum import ArgumentError, DType, KindError, ShapeError, Tensor
from ferrum._ferrum import layer_norm
from ferrum.backend import Autodiff, BalancedCheckpointing, NdArray
from ferrum.module import Param
from ferrum.nn import LayerNormConfig

from tests.support.f64 import arr
from tests.support.gradcheck import central_differences

AD = Autodiff[NdArray].device()
BALANCED = Autodiff[NdArray, BalancedCheckpointing].device()
RNG = np.random.default_rng(51)
SHAPES = [(3, 5), (2, 3, 7), (2, 1, 3, 1), (4, 33), (2, 2, 2, 17)]
EPS = 1e-3
# Relative tolerances: f32 rounding, then one rounding of half inputs, outputs and gradients
# (a gradient is a sum over a row or over rows of rounded terms).
TOL = {DType.F32: 1e-4, DType.BF16: 4e-2, DType.F16: 8e-3}


def reference(x: Any, gamma: Any, beta: Any | None) -> Any:
    """``(x - mean) / sqrt(var + eps) * gamma + beta`` over the last dim, biased variance, f64."""
    mean = x.mean(-1, keepdims=True)
    out = (x - mean) / np.sqrt(x.var(-1, keepdims=True) + EPS) * gamma
    return out if beta is None else out + beta


def wide(t: Tensor[Any, Any, Any]) -> Any:
    """``t``'s values as f64 NumPy (through f32, which holds every f16 and bf16 value)."""
    return arr(t.cast(DType.F32))


def rounded(values: Any, dtype: DType) -> Any:
    """``values`` rounded to ``dtype`` and back to f64, so the reference sees the op's inputs."""
    return wide(Tensor.from_numpy(np.asarray(values, np.float32), NdArray.device()).cast(dtype))


def to_tensor(values: Any, dtype: DType, device: Any) -> Tensor[Any, Any, Any]:
    return Tensor.from_numpy(np.asarray(values, np.float32), device).cast(dtype)


@pytest.mark.parametrize("dtype", [DType.F32, DType.BF16, DType.F16], ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("bias", [True, False])
def test_forward_and_gradients_match_numpy(dtype: DType, shape: tuple[int, ...], bias: bool) -> None:
    d = shape[-1]
    x = rounded(RNG.normal(size=shape) * 2.0 + 0.5, dtype)
    gamma = rounded(RNG.normal(size=d) + 1.0, dtype)
    beta = rounded(RNG.normal(size=d), dtype) if bias else None
    weights = rounded(RNG.normal(size=shape), dtype)
    tol = TOL[dtype]

    results = []
    for device in (AD, BALANCED):
        xt = to_tensor(x, dtype, device).require_grad()
        gt = to_tensor(gamma, dtype, device).require_grad()
        bt = to_tensor(beta, dtype, device).require_grad() if beta is not None else None
        out = layer_norm(xt, gt, bt, EPS)
        assert out.dtype == dtype and out.dims() == shape
        np.testing.assert_allclose(wide(out), reference(x, gamma, beta), rtol=tol, atol=tol)
        grads = (out * to_tensor(weights, dtype, device)).sum().backward()
        got = [t.grad(grads) for t in (xt, gt, bt) if t is not None]
        assert all(g is not None and g.dtype == dtype for g in got)
        results.append([wide(g) for g in got if g is not None])

    def loss_of(k: int) -> Any:
        def loss(v: Any) -> float:
            args = [x, gamma, beta]
            args[k] = v
            return float((reference(*args) * weights).sum())

        return loss

    wanted = [central_differences(loss_of(k), v) for k, v in enumerate((x, gamma, beta)) if v is not None]
    for got, want in zip(results[0], wanted, strict=True):
        scale = max(1.0, float(np.abs(want).max()))
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale)
    for plain, balanced in zip(results[0], results[1], strict=True):
        np.testing.assert_array_equal(plain, balanced)


def test_layernorm_module_runs_the_fused_op_in_bf16() -> None:
    layer = LayerNormConfig(6, epsilon=EPS).init(AD)
    gamma = Tensor.from_numpy(RNG.normal(size=6).astype(np.float32), AD).cast(DType.BF16)
    layer = layer.replace(gamma=Param(gamma))
    assert layer.beta is not None
    layer = layer.replace(beta=Param(layer.beta.val().cast(DType.BF16)))
    x = rounded(RNG.normal(size=(4, 6)), DType.BF16)
    out = layer.forward(to_tensor(x, DType.BF16, AD))
    assert out.dtype == DType.BF16
    assert layer.beta is not None
    want = reference(x, wide(layer.gamma.val()), wide(layer.beta.val()))
    np.testing.assert_allclose(wide(out), want, rtol=4e-2, atol=4e-2)


def test_bad_operands_raise_clear_errors() -> None:
    x = Tensor.ones((2, 3), AD)
    with pytest.raises(ShapeError, match=r"layer_norm.*gamma must have shape \[3\]"):
        layer_norm(x, Tensor.ones((4,), AD))
    with pytest.raises(ShapeError, match=r"layer_norm.*beta must have shape \[3\]"):
        matrix: Any = Tensor.ones((1, 3), AD)
        layer_norm(x, Tensor.ones((3,), AD), matrix)
    with pytest.raises(KindError, match="layer_norm"):
        layer_norm(x, Tensor.ones((3,), AD).cast(DType.BF16))
    with pytest.raises(ArgumentError, match="epsilon"):
        layer_norm(x, Tensor.ones((3,), AD), None, -1.0)
    with pytest.raises(ShapeError, match=r"LayerNorm\.forward"):
        LayerNormConfig(4).init(AD).forward(x)
