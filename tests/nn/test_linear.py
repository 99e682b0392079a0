"""Linear against NumPy: forward over ranks, gradients, Burn's init bounds, config and records."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ferrum import D2, D3, ShapeError, Tensor
from ferrum.backend import NdArray
from ferrum.nn import Initializer, Linear, LinearConfig

from tests.support.devices import AD, DEVICE
from tests.support.f64 import arr


def reference(layer: Linear[Any], x: Any) -> Any:
    out = x @ arr(layer.weight.val())
    return out + arr(layer.bias.val()) if layer.bias is not None else out


@pytest.mark.parametrize("shape", [(4,), (5, 4), (2, 3, 4), (2, 1, 3, 4)])
@pytest.mark.parametrize("bias", [True, False])
def test_forward_matches_numpy_for_any_rank(shape: tuple[int, ...], bias: bool) -> None:
    NdArray.seed(1)
    layer = LinearConfig(4, 3).with_bias(bias).init(DEVICE)
    x = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    out = layer.forward(Tensor.from_floats(x, DEVICE))
    assert out.dims() == (*shape[:-1], 3)
    np.testing.assert_allclose(arr(out), reference(layer, x.astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_gradients_match_the_closed_form() -> None:
    layer = LinearConfig(3, 2).init(AD)
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 4, 3)).astype(np.float32)
    c = rng.normal(size=(2, 4, 2)).astype(np.float32)
    xt = Tensor.from_floats(x, AD).require_grad()
    loss = (layer.forward(xt) * Tensor.from_floats(c, AD)).sum()
    grads = loss.backward()
    w_grad = layer.weight.val().grad(grads)
    assert layer.bias is not None
    b_grad = layer.bias.val().grad(grads)
    x_grad = xt.grad(grads)
    assert w_grad is not None and b_grad is not None and x_grad is not None
    np.testing.assert_allclose(arr(w_grad), np.einsum("bni,bno->io", x, c), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(arr(b_grad), c.sum(axis=(0, 1)), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(arr(x_grad), c @ arr(layer.weight.val()).T, rtol=1e-4, atol=1e-5)


def test_gradient_matches_finite_differences() -> None:
    NdArray.seed(5)
    base = LinearConfig(3, 2).init(DEVICE)
    x = np.random.default_rng(2).normal(size=(4, 3))

    def loss_of(weight: Any) -> float:
        out = np.tanh(x @ weight + arr(base.bias.val()))  # type: ignore[union-attr]
        return float((out**2).sum())

    trained: Linear[Any] = base.to_device(AD)
    out = trained.forward(Tensor.from_floats(x.astype(np.float32), AD)).tanh()
    grad = trained.weight.val().grad((out * out).sum().backward())
    assert grad is not None
    w = arr(base.weight.val())
    numeric = np.zeros_like(w)
    eps = 1e-6
    for i in range(w.shape[0]):
        for j in range(w.shape[1]):
            up, down = w.copy(), w.copy()
            up[i, j] += eps
            down[i, j] -= eps
            numeric[i, j] = (loss_of(up) - loss_of(down)) / (2 * eps)
    np.testing.assert_allclose(arr(grad), numeric, rtol=1e-3, atol=1e-4)


def test_weight_layout_is_d_input_by_d_output() -> None:
    layer = LinearConfig(5, 2).init(DEVICE)
    assert layer.weight.shape() == (5, 2)
    assert layer.bias is not None and layer.bias.shape() == (2,)
    assert layer.num_params() == 12
    assert LinearConfig(5, 2, bias=False).init(DEVICE).bias is None


def test_default_init_is_burns_kaiming_uniform() -> None:
    # gain 1/sqrt(3) makes the bound sqrt(3) * gain / sqrt(fan_in) = 1 / sqrt(d_input).
    NdArray.seed(7)
    layer = LinearConfig(64, 256).init(DEVICE)
    w = arr(layer.weight.val())
    bound = 1.0 / math.sqrt(64)
    assert np.abs(w).max() <= bound + 1e-7
    assert np.abs(w).max() > 0.95 * bound
    assert abs(w.mean()) < 0.05 * bound
    np.testing.assert_allclose(w.var(), bound**2 / 3, rtol=0.05)
    assert layer.bias is not None and np.abs(arr(layer.bias.val())).max() <= bound + 1e-7


def test_config_defaults_and_json_round_trip(tmp_path: Path) -> None:
    cfg = LinearConfig(3, 4)
    assert cfg.bias is True
    assert cfg.initializer == Initializer.KaimingUniform(gain=1 / math.sqrt(3), fan_out_only=False)
    custom = cfg.with_initializer(Initializer.Normal(0.0, 0.1)).with_bias(False)
    custom.save(tmp_path / "linear.json")
    assert LinearConfig.load(tmp_path / "linear.json") == custom


def test_config_and_input_errors_name_the_problem() -> None:
    with pytest.raises(ValueError, match=r"LinearConfig\.d_output must be a positive int, found 0"):
        LinearConfig(3, 0)
    layer = LinearConfig(3, 4).init(DEVICE)
    expected = r"Linear\.forward: expected input of shape \[\.\.\., 3\], found \[2, 5\]"
    with pytest.raises(ShapeError, match=expected):
        layer.forward(Tensor.zeros((2, 5), DEVICE))


def test_typed_forward_keeps_rank() -> None:
    layer = LinearConfig(2, 3).init(DEVICE)
    x2: Tensor[NdArray, D2] = Tensor.zeros((4, 2), DEVICE)
    x3: Tensor[NdArray, D3] = Tensor.zeros((1, 4, 2), DEVICE)
    y2: Tensor[NdArray, D2] = layer.forward(x2)
    y3: Tensor[NdArray, D3] = layer.forward(x3)
    assert y2.dims() == (4, 3) and y3.dims() == (1, 4, 3)


def test_seeded_init_is_reproducible() -> None:
    NdArray.seed(11)
    a = LinearConfig(4, 4).init(DEVICE)
    NdArray.seed(11)
    b = LinearConfig(4, 4).init(DEVICE)
    np.testing.assert_array_equal(arr(a.weight.val()), arr(b.weight.val()))


def test_record_round_trip_reproduces_outputs() -> None:
    source = LinearConfig(4, 3).init(DEVICE)
    loaded = LinearConfig(4, 3).init(DEVICE).load_record(source.into_record())
    x = Tensor.ones((2, 4), DEVICE)
    assert loaded.forward(x).equal(source.forward(x)).all().into_scalar()
    with pytest.raises(ValueError, match=r"weight.*\[4, 3\].*\[5, 3\]"):
        LinearConfig(5, 3).init(DEVICE).load_record(source.into_record())
