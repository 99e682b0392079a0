"""Gradients of reductions, statistics, cumulative ops and sorting against
central finite differences. Inputs for max/min/sort/cummax are tie-free and
products include zeros, where a division-based backward would fail."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from ferrum import DType, Tensor

from tests.support.gradcheck import (
    AD_DEVICE,
    Array,
    Case,
    case,
    check_case,
    distinct,
    distinct_abs,
    gradcheck_test,
    rng_for,
    smooth,
)

SHAPES = ((3, 4), (2, 3, 4), (6,))


def with_zeros(shape: tuple[int, ...], count: int, seed: str) -> Array:
    """Magnitudes in [0.5, 1.5] with random signs, and ``count`` exact zeros."""
    rng = rng_for(f"zeros{seed}{shape}{count}")
    x = rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    flat = x.reshape(-1)
    flat[rng.permutation(flat.size)[:count]] = 0.0
    return np.asarray(flat.reshape(shape))


def dims_of(shape: tuple[int, ...]) -> list[int]:
    return [*range(len(shape)), -1]


def shape_dims() -> Iterator[tuple[tuple[int, ...], int, str]]:
    """Each of ``SHAPES`` with each of its dims, and the case-name tag ``{shape}dim{d}``."""
    for shape in SHAPES:
        for d in dims_of(shape):
            yield shape, d, f"{shape}dim{d}"


def full_reduction_cases() -> list[Case]:
    cases: list[Case] = []
    for shape in SHAPES:
        tag = str(shape)
        cases += [
            case(f"sum{tag}", lambda x: x.sum(), smooth(shape)),
            case(f"mean{tag}", lambda x: x.mean(), smooth(shape)),
            case(f"prod{tag}", lambda x: x.prod(), with_zeros(shape, 0, "p")),
            case(f"prod_one_zero{tag}", lambda x: x.prod(), with_zeros(shape, 1, "p1")),
            case(f"prod_two_zeros{tag}", lambda x: x.prod(), with_zeros(shape, 2, "p2")),
            case(f"max{tag}", lambda x: x.max(), distinct(shape)),
            case(f"min{tag}", lambda x: x.min(), distinct(shape)),
            case(f"max_abs{tag}", lambda x: x.max_abs(), distinct_abs(shape)),
        ]
    return cases


def dim_reduction_cases() -> list[Case]:
    cases: list[Case] = []
    for shape, d, tag in shape_dims():
        cases += [
            case(f"sum_dim{tag}", lambda x, d=d: x.sum_dim(d), smooth(shape)),
            case(f"mean_dim{tag}", lambda x, d=d: x.mean_dim(d), smooth(shape)),
            case(f"prod_dim{tag}", lambda x, d=d: x.prod_dim(d), with_zeros(shape, 0, "pd")),
            case(f"prod_dim_zeros{tag}", lambda x, d=d: x.prod_dim(d), with_zeros(shape, 2, "pdz")),
            case(f"max_dim{tag}", lambda x, d=d: x.max_dim(d), distinct(shape)),
            case(f"min_dim{tag}", lambda x, d=d: x.min_dim(d), distinct(shape)),
            case(f"max_abs_dim{tag}", lambda x, d=d: x.max_abs_dim(d), distinct_abs(shape)),
            case(
                f"max_dim_with_indices{tag}", lambda x, d=d: x.max_dim_with_indices(d)[0], distinct(shape)
            ),
            case(
                f"min_dim_with_indices{tag}", lambda x, d=d: x.min_dim_with_indices(d)[0], distinct(shape)
            ),
        ]
    return cases


def multi_dim_cases() -> list[Case]:
    shape = (2, 3, 4)
    cases: list[Case] = []
    for dims in ([0, 2], [1], [0, 1, 2], [-1, 0]):
        tag = f"{dims}"
        cases += [
            case(f"sum_dims{tag}", lambda x, ds=dims: x.sum_dims(ds), smooth(shape)),
            case(f"mean_dims{tag}", lambda x, ds=dims: x.mean_dims(ds), smooth(shape)),
            case(f"prod_dims{tag}", lambda x, ds=dims: x.prod_dims(ds), with_zeros(shape, 0, "pds")),
            case(f"prod_dims_zero{tag}", lambda x, ds=dims: x.prod_dims(ds), with_zeros(shape, 3, "pdsz")),
        ]
    return cases


def stats_cases() -> list[Case]:
    cases: list[Case] = []
    for shape, d, tag in shape_dims():
        x = smooth(shape, seed="stats")
        cases += [
            case(f"var{tag}", lambda t, d=d: t.var(d), x),
            case(f"var_bias{tag}", lambda t, d=d: t.var_bias(d), x),
            case(f"var_mean{tag}", lambda t, d=d: t.var_mean(d), x),
            case(f"var_mean_bias{tag}", lambda t, d=d: t.var_mean_bias(d), x),
        ]
    for shape in ((3, 5), (4, 2)):
        for d in (0, 1, -1):
            for correction in (0, 1):
                cases.append(
                    case(
                        f"cov{shape}dim{d}c{correction}",
                        lambda t, d=d, c=correction: t.cov(d, c),
                        smooth(shape, seed="cov"),
                    )
                )
    return cases


def cumulative_cases() -> list[Case]:
    cases: list[Case] = []
    for shape, d, tag in shape_dims():
        cases += [
            case(f"cumsum{tag}", lambda x, d=d: x.cumsum(d), smooth(shape)),
            case(f"cumprod{tag}", lambda x, d=d: x.cumprod(d), with_zeros(shape, 0, "cp")),
            case(f"cumprod_one_zero{tag}", lambda x, d=d: x.cumprod(d), with_zeros(shape, 1, "cp1")),
            case(f"cumprod_two_zeros{tag}", lambda x, d=d: x.cumprod(d), with_zeros(shape, 2, "cp2")),
            case(f"cummin{tag}", lambda x, d=d: x.cummin(d), distinct(shape)),
            case(f"cummax{tag}", lambda x, d=d: x.cummax(d), distinct(shape)),
        ]
    return cases


def sort_cases() -> list[Case]:
    cases: list[Case] = []
    for shape, d, tag in shape_dims():
        x = distinct(shape, seed="sort")
        k = min(2, shape[d])
        cases += [
            case(f"sort{tag}", lambda t, d=d: t.sort(d), x),
            case(f"sort_descending{tag}", lambda t, d=d: t.sort_descending(d), x),
            case(f"sort_with_indices{tag}", lambda t, d=d: t.sort_with_indices(d)[0], x),
            case(
                f"sort_descending_with_indices{tag}",
                lambda t, d=d: t.sort_descending_with_indices(d)[0],
                x,
            ),
            case(f"topk{tag}", lambda t, d=d, k=k: t.topk(k, d), x),
            case(f"topk_with_indices{tag}", lambda t, d=d, k=k: t.topk_with_indices(k, d)[0], x),
        ]
    return cases


test_gradients_match_finite_differences = gradcheck_test(
    full_reduction_cases, dim_reduction_cases, multi_dim_cases, stats_cases, cumulative_cases, sort_cases
)


def test_prod_gradient_at_a_single_zero_is_the_product_of_the_others() -> None:
    # Independent of finite differences: d prod / d x_i = prod_{j != i} x_j.
    x = np.array([[2.0, 0.0, -3.0], [0.5, 4.0, 1.5]])
    others = np.array([[0.0, 2.0 * -3.0 * 0.5 * 4.0 * 1.5, 0.0], [0.0, 0.0, 0.0]])
    check_case(case("prod_known", lambda t: t.prod(), x))
    leaf = Tensor.from_numpy(x, AD_DEVICE, dtype=DType.F64).require_grad()
    g = leaf.grad(leaf.prod().backward())
    assert g is not None
    np.testing.assert_allclose(g.to_numpy(), others, rtol=1e-12, atol=0.0)


def test_cumprod_gradient_with_a_zero() -> None:
    # sum(cumprod([a, b, c, d])) = a + ab + abc + abcd; at (2, 0, 3, 4) its
    # gradient is (1 + b + bc + bcd, a + ac + acd, ab + abd, abc) = (1, 32, 0, 0).
    leaf = Tensor.from_floats([2.0, 0.0, 3.0, 4.0], AD_DEVICE, dtype=DType.F64).require_grad()
    g = leaf.grad(leaf.cumprod(0).sum().backward())
    assert g is not None
    assert g.to_data().to_list() == [1.0, 32.0, 0.0, 0.0]
