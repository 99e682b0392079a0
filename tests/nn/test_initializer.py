"""Initializer variants: values, statistics within tolerance, Burn's fan rules, errors, JSON."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ferrum import D1, D2, Tensor, config
from ferrum.backend import Autodiff, NdArray
from ferrum.module import Param
from ferrum.nn import Initializer

from tests.support.devices import AD, DEVICE


def values(
    init: Initializer, shape: tuple[int, ...], fan_in: int | None = None, fan_out: int | None = None
) -> Any:
    NdArray.seed(123)
    return np.asarray(init.init_with(shape, fan_in, fan_out, DEVICE).val().to_numpy(), dtype=np.float64)


def test_constant_ones_zeros() -> None:
    np.testing.assert_array_equal(values(Initializer.Constant(2.5), (2, 3)), np.full((2, 3), 2.5))
    np.testing.assert_array_equal(values(Initializer.Ones, (4,)), np.ones(4))
    np.testing.assert_array_equal(values(Initializer.Zeros, (2, 2, 2)), np.zeros((2, 2, 2)))


def test_uniform_bounds_and_moments() -> None:
    w = values(Initializer.Uniform(-2.0, 6.0), (200, 100))
    assert w.min() >= -2.0 and w.max() < 6.0
    assert abs(w.mean() - 2.0) < 0.05
    assert abs(w.var() - 64 / 12) < 0.1


def test_normal_moments() -> None:
    w = values(Initializer.Normal(1.5, 0.5), (200, 100))
    assert abs(w.mean() - 1.5) < 0.01
    assert abs(w.std() - 0.5) < 0.01


@pytest.mark.parametrize("fan_out_only", [False, True])
def test_kaiming_uniform_bound_uses_the_right_fan(fan_out_only: bool) -> None:
    fan_in, fan_out = 50, 400
    init = Initializer.KaimingUniform(gain=2.0, fan_out_only=fan_out_only)
    w = values(init, (fan_in, fan_out), fan_in, fan_out)
    fan = fan_out if fan_out_only else fan_in
    bound = math.sqrt(3.0) * 2.0 / math.sqrt(fan)
    assert np.abs(w).max() <= bound * (1 + 1e-6)
    assert np.abs(w).max() > 0.98 * bound
    assert abs(w.var() - bound**2 / 3) < 0.05 * bound**2 / 3


@pytest.mark.parametrize("fan_out_only", [False, True])
def test_kaiming_normal_std(fan_out_only: bool) -> None:
    fan_in, fan_out = 80, 250
    init = Initializer.KaimingNormal(gain=math.sqrt(2.0), fan_out_only=fan_out_only)
    w = values(init, (fan_in, fan_out), fan_in, fan_out)
    fan = fan_out if fan_out_only else fan_in
    assert abs(w.mean()) < 0.01 * math.sqrt(2.0 / fan) * 10
    np.testing.assert_allclose(w.std(), math.sqrt(2.0 / fan), rtol=0.03)


def test_xavier_uniform_and_normal() -> None:
    fan_in, fan_out = 120, 200
    std = 1.5 * math.sqrt(2.0 / (fan_in + fan_out))
    uniform = values(Initializer.XavierUniform(gain=1.5), (fan_in, fan_out), fan_in, fan_out)
    assert np.abs(uniform).max() <= math.sqrt(3.0) * std * (1 + 1e-6)
    np.testing.assert_allclose(uniform.std(), std, rtol=0.03)
    normal = values(Initializer.XavierNormal(gain=1.5), (fan_in, fan_out), fan_in, fan_out)
    np.testing.assert_allclose(normal.std(), std, rtol=0.03)


@pytest.mark.parametrize("shape", [(6, 6), (4, 9), (9, 4), (3, 2, 4)])
def test_orthogonal_rows_or_columns_are_orthonormal(shape: tuple[int, ...]) -> None:
    w = values(Initializer.Orthogonal(gain=2.0), shape)
    assert w.shape == shape
    flat = w.reshape(shape[0], -1) / 2.0
    rows, cols = flat.shape
    gram = flat @ flat.T if rows <= cols else flat.T @ flat
    np.testing.assert_allclose(gram, np.eye(min(rows, cols)), atol=1e-5)


def test_seeded_draws_repeat() -> None:
    init = Initializer.Normal(0.0, 1.0)
    np.testing.assert_array_equal(values(init, (5, 5)), values(init, (5, 5)))


def test_fans_are_required_where_burn_requires_them() -> None:
    with pytest.raises(ValueError, match=r"KaimingUniform needs fan_in; use init_with"):
        Initializer.KaimingUniform(gain=1.0, fan_out_only=False).init((3, 3), DEVICE)
    with pytest.raises(ValueError, match=r"KaimingNormal needs fan_out"):
        Initializer.KaimingNormal(gain=1.0, fan_out_only=True).init_with((3, 3), 3, None, DEVICE)
    with pytest.raises(ValueError, match=r"XavierNormal needs fan_out"):
        Initializer.XavierNormal(gain=1.0).init_with((3, 3), 3, None, DEVICE)
    with pytest.raises(ValueError, match=r"Orthogonal needs a shape of rank >= 2, found \[4\]"):
        Initializer.Orthogonal(gain=1.0).init((4,), DEVICE)


def test_variant_settings_are_validated() -> None:
    message = r"Initializer\.Uniform: min must be <= max, found min=2\.0, max=1\.0"
    with pytest.raises(ValueError, match=message):
        Initializer.Uniform(2.0, 1.0)
    with pytest.raises(ValueError, match=r"Initializer\.Normal: std must be >= 0"):
        Initializer.Normal(0.0, -1.0)
    with pytest.raises(ValueError, match=r"Initializer\.Ones takes no 'gain'"):
        Initializer("Ones", gain=1.0)
    with pytest.raises(ValueError, match=r"Initializer\.Constant needs 'value'"):
        Initializer("Constant")
    with pytest.raises(ValueError, match=r"shape must be a non-empty sequence"):
        Initializer.Zeros.init((), DEVICE)


def test_init_returns_typed_trainable_params() -> None:
    weight: Param[Tensor[Autodiff[NdArray], D2]] = Initializer.Ones.init((2, 3), AD)
    bias: Param[Tensor[Autodiff[NdArray], D1]] = Initializer.Zeros.init((3,), AD)
    assert weight.val().is_require_grad() and bias.shape() == (3,)


def test_repr_and_json_round_trip(tmp_path: Path) -> None:
    @config
    class HasInit:
        init: Initializer = Initializer.Zeros

    assert repr(Initializer.Zeros) == "Initializer.Zeros"
    assert repr(Initializer.XavierUniform(gain=1.0)) == "Initializer.XavierUniform(gain=1.0)"
    for init in (
        Initializer.Constant(0.3),
        Initializer.Ones,
        Initializer.Uniform(-1.0, 1.0),
        Initializer.KaimingNormal(gain=2.0, fan_out_only=True),
        Initializer.Orthogonal(gain=0.5),
    ):
        cfg = HasInit(init)
        cfg.save(tmp_path / "init.json")
        assert HasInit.load(tmp_path / "init.json") == cfg
