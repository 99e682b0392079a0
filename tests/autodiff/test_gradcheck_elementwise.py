"""Gradients of element-wise ops against central finite differences: unary
math, rounding, sign/abs/neg, binary ops with broadcasting (methods, scalar
and reflected-scalar forms, Python operators), powers, clamps and matmul."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from ferrum import DType, Tensor

from tests.support.gradcheck import (
    AD_DEVICE,
    Array,
    Case,
    case,
    check_case,
    distinct,
    gradcheck_test,
    ints,
    rng_for,
    smooth,
)

# --------------------------------------------------------------------------- unary math

SHAPES = ((3, 4), (2, 3, 2), (5,))


def unary_cases() -> list[Case]:
    # (low, high) -> the methods checked on values in it
    domains: dict[tuple[float, float], tuple[str, ...]] = {
        (-2.0, 2.0): ("exp", "erf", "square", "sinh", "cosh", "tanh", "asinh", "neg"),
        (0.2, 3.0): ("log", "sqrt"),
        (-0.5, 2.0): ("log1p",),
        (-3.0, 3.0): ("sin", "cos", "atan"),
        (-1.2, 1.2): ("tan",),
        (-0.9, 0.9): ("asin", "acos", "atanh"),
        (1.2, 3.0): ("acosh",),
        (-4.0, 4.0): ("sigmoid",),
    }
    cases: list[Case] = []
    for (low, high), names in domains.items():
        cases += [
            case(f"{name}{shape}", lambda x, n=name: getattr(x, n)(), smooth(shape, low, high))
            for name in names
            for shape in SHAPES
        ]
    for shape in SHAPES:
        # recip on both signs, away from the pole at 0.
        mag = smooth(shape, 0.4, 2.0, seed="recip")
        signs = rng_for(f"recip{shape}").choice([-1.0, 1.0], size=shape)
        cases.append(case(f"recip{shape}", lambda x: x.recip(), mag * signs))
        cases.append(case(f"abs{shape}", lambda x: x.abs(), distinct(shape)))
        cases.append(case(f"__abs__{shape}", lambda x: abs(x), distinct(shape)))
        cases.append(case(f"__neg__{shape}", lambda x: -x, smooth(shape)))
        cases.append(case(f"__pos__{shape}", lambda x: (+x) * 1.0, smooth(shape)))
    return cases


def off_grid(shape: tuple[int, ...]) -> Array:
    """Values at least 0.1 away from every multiple of 0.5: no rounding
    boundary is within the finite-difference step."""
    rng = rng_for(f"off_grid{shape}")
    return rng.integers(-6, 6, size=shape) * 0.5 + rng.uniform(0.1, 0.4, size=shape)


@pytest.mark.parametrize("name", ["round", "floor", "ceil", "trunc", "sign"])
@pytest.mark.parametrize("shape", SHAPES)
def test_piecewise_constant_ops_have_zero_gradient(name: str, shape: tuple[int, ...]) -> None:
    x = off_grid(shape) if name != "sign" else distinct(shape)
    check_case(case(f"{name}{shape}", lambda t: getattr(t, name)() * 1.0 + t * 0.5, x))
    leaf = Tensor.from_numpy(x, AD_DEVICE, dtype=DType.F64).require_grad()
    g = leaf.grad(getattr(leaf, name)().sum().backward())
    assert g is not None
    np.testing.assert_array_equal(g.to_numpy(), np.zeros(shape))


# --------------------------------------------------------------------------- binary ops

BROADCAST_PAIRS: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...] = (
    ((3, 4), (3, 4)),
    ((3, 1), (1, 4)),
    ((1, 4), (3, 4)),
    ((2, 3, 4), (1, 3, 1)),
    ((2, 1, 3), (2, 4, 1)),
    ((5,), (1,)),
)


def nonzero(shape: tuple[int, ...], seed: str) -> Array:
    """Magnitudes in [0.5, 1.5] with random signs."""
    rng = rng_for(f"nonzero{seed}{shape}")
    return np.asarray(rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape))


def quotient_safe(
    name: str, num_shape: tuple[int, ...], den_shape: tuple[int, ...], *, num: Array | None = None
) -> tuple[Array, Array]:
    """(numerator, denominator) whose broadcast quotients are all at least 0.1
    away from an integer, where remainder and fmod jump."""
    for attempt in range(10_000):
        rng = rng_for(f"{name}{attempt}")
        x = rng.uniform(-3.0, 3.0, size=num_shape) if num is None else num
        y = rng.uniform(0.5, 1.5, size=den_shape) * rng.choice([-1.0, 1.0], size=den_shape)
        q = x / y
        if np.all(np.abs(q - np.round(q)) > 0.1):
            return x, y
    raise AssertionError(f"no remainder-safe inputs found for {name}")


def numerator_safe(name: str, shape: tuple[int, ...], divisor: float) -> Array:
    """Numerators whose quotients by ``divisor`` are all at least 0.1 away
    from an integer."""
    for attempt in range(10_000):
        x = rng_for(f"{name}{attempt}").uniform(-3.0, 3.0, size=shape)
        q = x / divisor
        if np.all(np.abs(q - np.round(q)) > 0.1):
            return x
    raise AssertionError(f"no remainder-safe numerators found for {name}")


def distinct_pair(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> tuple[Array, Array]:
    """Two arrays with no value in common (no ties for max_pair/min_pair)."""
    na = int(np.prod(a_shape))
    values = distinct((na + int(np.prod(b_shape)),), seed=f"pair{a_shape}{b_shape}")
    return values[:na].reshape(a_shape), values[na:].reshape(b_shape)


def binary_cases() -> list[Case]:
    cases: list[Case] = []
    for sa, sb in BROADCAST_PAIRS:
        tag = f"{sa}{sb}"
        a, b = smooth(sa, seed="a"), smooth(sb, seed="b")
        cases += [
            case(f"add{tag}", lambda x, y: x.add(y), a, b),
            case(f"sub{tag}", lambda x, y: x.sub(y), a, b),
            case(f"mul{tag}", lambda x, y: x.mul(y), a, b),
            case(f"div{tag}", lambda x, y: x.div(y), a, nonzero(sb, "div")),
            case(f"powf{tag}", lambda x, y: x.powf(y), smooth(sa, 0.3, 2.0), smooth(sb, -1.5, 1.5)),
            case(f"atan2{tag}", lambda x, y: x.atan2(y), nonzero(sa, "atan2"), smooth(sb, -2.0, 2.0)),
            case(f"remainder{tag}", lambda x, y: x.remainder(y), *quotient_safe(f"rem{tag}", sa, sb)),
            case(f"fmod{tag}", lambda x, y: x.fmod(y), *quotient_safe(f"fmod{tag}", sa, sb)),
            case(f"max_pair{tag}", lambda x, y: x.max_pair(y), *distinct_pair(sa, sb)),
            case(f"min_pair{tag}", lambda x, y: x.min_pair(y), *distinct_pair(sa, sb)),
            case(f"op_add{tag}", lambda x, y: x + y, a, b),
            case(f"op_sub{tag}", lambda x, y: x - y, a, b),
            case(f"op_mul{tag}", lambda x, y: x * y, a, b),
            case(f"op_div{tag}", lambda x, y: x / y, a, nonzero(sb, "opdiv")),
            case(f"op_mod{tag}", lambda x, y: x % y, *quotient_safe(f"opmod{tag}", sa, sb)),
            case(f"op_pow{tag}", lambda x, y: x**y, smooth(sa, 0.3, 2.0), smooth(sb, -1.5, 1.5)),
        ]
    # Only one side tracked: the other gets no gradient.
    a, b = smooth((3, 4), seed="a"), smooth((1, 4), seed="b")
    cases += [
        case("mul_wrt_lhs_only", lambda x, y: x * y, a, b, wrt=(0,)),
        case("div_wrt_rhs_only", lambda x, y: x / y, a, nonzero((1, 4), "d"), wrt=(1,)),
        case("same_tensor_both_sides", lambda x: x * x + x / (x * x + 1.0), smooth((3, 4))),
    ]
    return cases


def scalar_cases() -> list[Case]:
    cases: list[Case] = []
    for shape in ((3, 4), (2, 3, 2)):
        x = smooth(shape)
        pos = smooth(shape, 0.3, 2.0, seed="pos")
        nz = nonzero(shape, "scalar")
        tag = str(shape)
        rmod_den = quotient_safe(f"rmod{tag}", (1,), shape, num=np.array([2.0]))[1]
        cases += [
            case(f"add_scalar{tag}", lambda t: t.add_scalar(1.5), x),
            case(f"sub_scalar{tag}", lambda t: t.sub_scalar(1.5), x),
            case(f"mul_scalar{tag}", lambda t: t.mul_scalar(-2.5), x),
            case(f"div_scalar{tag}", lambda t: t.div_scalar(-0.4), x),
            case(
                f"remainder_scalar{tag}",
                lambda t: t.remainder_scalar(0.7),
                numerator_safe(f"r{tag}", shape, 0.7),
            ),
            case(
                f"remainder_scalar_neg{tag}",
                lambda t: t.remainder_scalar(-0.7),
                numerator_safe(f"rn{tag}", shape, -0.7),
            ),
            case(f"fmod_scalar{tag}", lambda t: t.fmod_scalar(0.7), numerator_safe(f"f{tag}", shape, 0.7)),
            case(f"atan2_scalar{tag}", lambda t: t.atan2_scalar(-0.8), x),
            case(f"powf_scalar_frac{tag}", lambda t: t.powf_scalar(2.5), pos),
            case(f"powf_scalar_neg{tag}", lambda t: t.powf_scalar(-0.5), pos),
            case(f"powf_scalar_int{tag}", lambda t: t.powf_scalar(3.0), x),
            case(f"powi_scalar{tag}", lambda t: t.powi_scalar(3), x),
            case(f"powi_scalar_neg{tag}", lambda t: t.powi_scalar(-2), nz),
            case(f"powi_scalar_zero{tag}", lambda t: t.powi_scalar(0) + t, x),
            case(f"op_add_scalar{tag}", lambda t: t + 1.5, x),
            case(f"op_radd{tag}", lambda t: 1.5 + t, x),
            case(f"op_sub_scalar{tag}", lambda t: t - 1.5, x),
            case(f"op_rsub{tag}", lambda t: 1.5 - t, x),
            case(f"op_mul_scalar{tag}", lambda t: t * -2.0, x),
            case(f"op_rmul{tag}", lambda t: -2.0 * t, x),
            case(f"op_div_scalar{tag}", lambda t: t / 0.3, x),
            case(f"op_rdiv{tag}", lambda t: 2.0 / t, nz),
            case(f"op_mod_scalar{tag}", lambda t: t % 0.7, numerator_safe(f"m{tag}", shape, 0.7)),
            case(f"op_rmod{tag}", lambda t: 2.0 % t, rmod_den),
            case(f"op_pow_float{tag}", lambda t: t**2.5, pos),
            case(f"op_pow_int{tag}", lambda t: t**3, x),
            case(f"op_rpow{tag}", lambda t: 2.0**t, x),
        ]
    return cases


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 2)])
def test_powi_with_int_exponents(shape: tuple[int, ...]) -> None:
    exps = rng_for(f"powi{shape}").integers(-2, 4, size=shape)
    check_case(case(f"powi{shape}", lambda t: t.powi(ints(exps, t)), nonzero(shape, "powi")))


# --------------------------------------------------------------------------- clamp


def clamp_cases() -> list[Case]:
    # distinct() values sit at (k + 1/2) * 0.25 +- 0.05, so bounds at
    # multiples of 0.25 are never within 0.075 of a value.
    cases: list[Case] = []
    for shape in ((4, 5), (2, 3, 4)):
        x = distinct(shape)
        tag = str(shape)
        cases += [
            case(f"clamp{tag}", lambda t: t.clamp(-0.5, 0.75), x),
            case(f"clamp_min{tag}", lambda t: t.clamp_min(-0.25), x),
            case(f"clamp_max{tag}", lambda t: t.clamp_max(0.5), x),
        ]
    return cases


# --------------------------------------------------------------------------- matmul

MATMUL_SHAPES: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...] = (
    ((3, 4), (4, 2)),
    ((1, 4), (4, 1)),
    ((2, 3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (1, 3, 4, 2)),
    ((1, 3, 4), (2, 4, 2)),
    ((2, 3, 4), (1, 4, 2)),
)


def matmul_cases() -> list[Case]:
    cases: list[Case] = []
    for sa, sb in MATMUL_SHAPES:
        a, b = smooth(sa, seed="ma"), smooth(sb, seed="mb")
        cases.append(case(f"matmul{sa}{sb}", lambda x, y: x.matmul(y), a, b))
        cases.append(case(f"op_matmul{sa}{sb}", lambda x, y: x @ y, a, b))
    cases.append(case("dot(5,)", lambda x, y: x.dot(y), smooth((5,), seed="da"), smooth((5,), seed="db")))
    cases.append(case("dot_self", lambda x: x.dot(x), smooth((6,))))
    cases.append(case("matmul_self_transposed", lambda x: x @ x.transpose(), smooth((3, 4))))
    return cases


test_gradients_match_finite_differences = gradcheck_test(
    unary_cases, binary_cases, scalar_cases, clamp_cases, matmul_cases
)


# --------------------------------------------------------------------------- casts


@pytest.mark.parametrize(("src", "dst"), [(DType.F64, DType.F32), (DType.F32, DType.F64)])
def test_cast_passes_gradients_back_in_the_source_dtype(src: DType, dst: DType) -> None:
    rng = rng_for(f"cast{src}{dst}")
    xv, wv = rng.uniform(-1, 1, size=(3, 4)), rng.standard_normal((3, 4))
    x = Tensor.from_numpy(xv, AD_DEVICE, dtype=src).require_grad()
    w = Tensor.from_numpy(wv, AD_DEVICE, dtype=dst)
    y: Any = x.cast(dst)
    assert y.dtype == dst
    grads = (y.square() * w).sum().backward()
    g = x.grad(grads)
    assert g is not None
    assert g.dtype == src
    # d/dx sum(x^2 * w) = 2 x w, computed in f32 on one of the two sides.
    np.testing.assert_allclose(g.to_numpy(), 2 * xv * wv, rtol=1e-5, atol=1e-6)


def test_cast_round_trip_inside_an_f64_computation() -> None:
    # f64 -> f32 -> f64 is the identity up to f32 rounding, so its gradient is 1.
    x = Tensor.from_numpy(smooth((3, 4)), AD_DEVICE, dtype=DType.F64).require_grad()
    g = x.grad((x.cast(DType.F32).cast(DType.F64) * 2.0).sum().backward())
    assert g is not None and g.dtype == DType.F64
    np.testing.assert_array_equal(g.to_numpy(), np.full((3, 4), 2.0))
