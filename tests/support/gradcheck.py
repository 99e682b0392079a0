"""Gradient checking for the autodiff tests: analytic gradients from
``Autodiff[NdArray]`` against central finite differences.

For an op ``f`` and f64 inputs, the loss is ``sum_i sum(f(x)_i * w_i)`` with
fixed random weights ``w_i`` (one per output, so symmetric outputs cannot
cancel a wrong gradient). The numeric gradient perturbs one input element at a
time by ``+-eps`` and evaluates the loss with ferrum forwards on the plain
backend, in NumPy-driven loops; the analytic one is ``x.grad(loss.backward())``.

The analytic side runs once per input layout: contiguous leaves, leaves that
are themselves strided views (transposed, flipped, stepped), and contiguous
leaves viewed through a tracked op (transpose, or a step-2 slice) before
``f``, so non-contiguous values reach the op's forward and backward.

Test modules import these names with ``from gradcheck import ...``.
"""

from __future__ import annotations

import functools
import operator
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt
import pytest
from ferrum import Device, DType, Tensor
from ferrum.backend import Autodiff, BalancedCheckpointing, NdArray

AD_DEVICE = Autodiff[NdArray].device()
#: Burn runs its autodiff tests again under checkpointing: every analytic
#: gradient here is also computed on this device and must match bit for bit.
BALANCED_DEVICE = Autodiff[NdArray, BalancedCheckpointing].device()
PLAIN_DEVICE = NdArray.device()

T: TypeAlias = Tensor[Any, Any, Any]
Array: TypeAlias = npt.NDArray[Any]
Op: TypeAlias = Callable[..., "T | Sequence[T]"]

#: How the tracked inputs reach ``f`` on the autodiff side.
LAYOUTS = ("contiguous", "transposed", "flipped", "stepped", "tracked_transpose", "tracked_slice")

EPS = 1e-6
RTOL = 1e-5
ATOL = 1e-6


@dataclass(frozen=True)
class Case:
    """One gradient check: ``f`` applied to ``inputs``, differentiated with
    respect to the inputs listed in ``wrt`` (default: all)."""

    name: str
    f: Op
    inputs: tuple[Array, ...]
    wrt: tuple[int, ...] | None = None
    layouts: tuple[str, ...] = LAYOUTS
    rtol: float = RTOL
    atol: float = ATOL
    eps: float = EPS


def case(
    name: str, f: Op, *inputs: Array | Sequence[Any], wrt: tuple[int, ...] | None = None, **kw: Any
) -> Case:
    """A :class:`Case` with its inputs converted to f64 arrays."""
    arrays = tuple(np.asarray(a, dtype=np.float64) for a in inputs)
    return Case(name, f, arrays, wrt, **kw)


def case_id(c: Case) -> str:
    return c.name


# --------------------------------------------------------------------------- input values


def rng_for(name: str) -> np.random.Generator:
    """A generator seeded from ``name``, so every case draws fixed values."""
    return np.random.default_rng(zlib.crc32(name.encode()))


def smooth(shape: tuple[int, ...], low: float = -1.0, high: float = 1.0, *, seed: str = "smooth") -> Array:
    """Uniform values in ``[low, high]``, for ops that are smooth there."""
    return rng_for(f"{seed}{shape}{low}{high}").uniform(low, high, size=shape)


def distinct(
    shape: tuple[int, ...], gap: float = 0.25, *, seed: str = "distinct", positive: bool = False
) -> Array:
    """Values pairwise at least ``0.6 * gap`` apart and at least ``0.3 * gap``
    away from zero: no ties for max/sort/cummax and no kinks at 0 for
    abs/relu, far beyond the finite-difference step."""
    rng = rng_for(f"{seed}{shape}{gap}{positive}")
    n = int(np.prod(shape))
    grid = np.arange(0, 2 * n) if positive else np.arange(-n, n)
    picks = rng.permutation(grid)[:n]
    jitter = rng.uniform(-gap / 5, gap / 5, size=n)
    return ((picks + 0.5) * gap + jitter).reshape(shape)


def distinct_abs(shape: tuple[int, ...], gap: float = 0.25, *, seed: str = "distinct_abs") -> Array:
    """Values whose absolute values are pairwise distinct, with random signs."""
    rng = rng_for(f"{seed}{shape}{gap}")
    mags = distinct(shape, gap, seed=seed, positive=True)
    return np.asarray(mags * rng.choice([-1.0, 1.0], size=shape))


# --------------------------------------------------------------------------- constants for f


def ints(values: Array | Sequence[Any], like: T) -> T:
    """An Int tensor on ``like``'s backend (indices for gather, select, ...)."""
    return Tensor.from_numpy(np.asarray(values, dtype=np.int64), like.device())


def bools(values: Array | Sequence[Any], like: T) -> T:
    """A Bool tensor on ``like``'s backend (masks)."""
    return Tensor.from_numpy(np.asarray(values, dtype=np.bool_), like.device())


def floats(values: Array | Sequence[Any], like: T) -> T:
    """An untracked f64 tensor on ``like``'s backend."""
    return Tensor.from_numpy(np.asarray(values, dtype=np.float64), like.device(), dtype=DType.F64)


# --------------------------------------------------------------------------- machinery


def as_outputs(out: T | Sequence[T]) -> list[T]:
    return [out] if isinstance(out, Tensor) else list(out)


def plain(array: Array) -> T:
    return Tensor.from_numpy(np.ascontiguousarray(array), PLAIN_DEVICE, dtype=DType.F64)


def numeric_loss(f: Op, arrays: Sequence[Array], weights: Sequence[Array]) -> float:
    outs = as_outputs(f(*(plain(a) for a in arrays)))
    return float(sum(np.sum(o.to_numpy() * w) for o, w in zip(outs, weights, strict=True)))


def numeric_gradient(f: Op, arrays: Sequence[Array], k: int, weights: Sequence[Array], eps: float) -> Array:
    """Central differences of the loss with respect to ``arrays[k]``."""
    grad = np.zeros_like(arrays[k])
    work = [a.copy() for a in arrays]
    for index in np.ndindex(arrays[k].shape):
        x0 = arrays[k][index]
        work[k][index] = x0 + eps
        up = numeric_loss(f, work, weights)
        work[k][index] = x0 - eps
        down = numeric_loss(f, work, weights)
        work[k][index] = x0
        grad[index] = (up - down) / (2 * eps)
    return grad


def central_differences(loss: Callable[[Array], float], x: Array, eps: float = 1e-6) -> Array:
    """The gradient of a NumPy ``loss`` at ``x`` by central differences, one entry at a time."""
    grad = np.zeros_like(x)
    for index in np.ndindex(*x.shape):
        up, down = x.copy(), x.copy()
        up[index] += eps
        down[index] -= eps
        grad[index] = (loss(up) - loss(down)) / (2 * eps)
    return grad


@dataclass
class Tracked:
    """A tracked input: the leaf whose gradient backward() reports, the
    tensor handed to ``f``, and how to read the leaf's gradient back in the
    input's shape (checking that entries outside the view got zero)."""

    leaf: T
    value: T
    to_input: Callable[[Array], Array]


def _keep(g: Array) -> Array:
    return g


def _odd_rows(g: Array) -> Array:
    np.testing.assert_array_equal(g[0::2], 0.0, err_msg="gradient outside the sliced rows must be zero")
    return np.asarray(g[1::2])


def tracked_input(array: Array, layout: str, device: Device[Any] = AD_DEVICE) -> Tracked:
    """``array`` as a gradient-requiring input on the autodiff backend, in ``layout``."""
    rank = array.ndim
    if layout == "transposed" and rank < 2:
        layout = "flipped"
    if layout == "tracked_transpose" and rank < 2:
        layout = "tracked_slice"
    if layout == "contiguous":
        leaf = Tensor.from_numpy(np.ascontiguousarray(array), device, dtype=DType.F64).require_grad()
        return Tracked(leaf, leaf, _keep)
    if layout == "transposed":
        base = Tensor.from_numpy(np.ascontiguousarray(np.swapaxes(array, -1, -2)), device, dtype=DType.F64)
        leaf = base.transpose().require_grad()
        return Tracked(leaf, leaf, _keep)
    if layout == "flipped":
        base = Tensor.from_numpy(np.ascontiguousarray(np.flip(array, -1)), device, dtype=DType.F64)
        leaf = base.flip([-1]).require_grad()
        return Tracked(leaf, leaf, _keep)
    if layout == "stepped":
        big = np.zeros((2 * array.shape[0] + 1, *array.shape[1:]))
        big[1::2] = array
        leaf = Tensor.from_numpy(big, device, dtype=DType.F64)[1::2].require_grad()
        return Tracked(leaf, leaf, _keep)
    if layout == "tracked_transpose":
        leaf = Tensor.from_numpy(
            np.ascontiguousarray(np.swapaxes(array, -1, -2)), device, dtype=DType.F64
        ).require_grad()
        return Tracked(leaf, leaf.transpose(), lambda g: np.swapaxes(g, -1, -2))
    if layout == "tracked_slice":
        big = np.full((2 * array.shape[0], *array.shape[1:]), 7.0)
        big[1::2] = array
        leaf = Tensor.from_numpy(big, device, dtype=DType.F64).require_grad()
        return Tracked(leaf, leaf[1::2], _odd_rows)
    raise ValueError(f"unknown layout {layout!r}")


def analytic_gradients(
    f: Op,
    arrays: Sequence[Array],
    wrt: Sequence[int],
    weights: Sequence[Array],
    layout: str,
    device: Device[Any] = AD_DEVICE,
) -> dict[int, Array]:
    """``x.grad(loss.backward())`` for each input in ``wrt``, in its input's
    shape; the other inputs enter as untracked tensors, which get no gradient."""
    tracked = {k: tracked_input(arrays[k], layout, device) for k in wrt}
    args = [
        tracked[k].value if k in tracked else Tensor.from_numpy(a, device, dtype=DType.F64)
        for k, a in enumerate(arrays)
    ]
    outs = as_outputs(f(*args))
    for o in outs:
        assert o.dtype == DType.F64, f"output dtype {o.dtype}, expected f64"
    terms = [
        (o * Tensor.from_numpy(w, device, dtype=DType.F64)).sum()
        for o, w in zip(outs, weights, strict=True)
    ]
    loss = functools.reduce(operator.add, terms)
    grads = loss.backward()
    result: dict[int, Array] = {}
    for k, t in tracked.items():
        g = t.leaf.grad(grads)
        assert g is not None, f"input {k} requires grad but got no gradient"
        assert g.dtype == DType.F64, f"input {k}: gradient dtype {g.dtype}, expected f64"
        assert tuple(g.shape()) == tuple(t.leaf.shape()), (
            f"input {k}: gradient shape {g.shape()} != {t.leaf.shape()}"
        )
        result[k] = t.to_input(np.array(g.to_numpy(), copy=True))
    for k, a in enumerate(args):
        if k not in tracked:
            assert a.grad(grads) is None, f"untracked input {k} got a gradient"
    return result


def check_case(c: Case) -> None:
    """Compare analytic and numeric gradients of ``c`` in every layout; one
    failure message lists every layout and input that disagrees."""
    arrays = list(c.inputs)
    wrt = tuple(range(len(arrays))) if c.wrt is None else c.wrt
    outs = as_outputs(c.f(*(plain(a) for a in arrays)))
    rng = rng_for(c.name)
    weights = [rng.standard_normal(tuple(o.shape())) for o in outs]
    numeric = {k: numeric_gradient(c.f, arrays, k, weights, c.eps) for k in wrt}
    failures: list[str] = []
    for layout in c.layouts:
        try:
            analytic = analytic_gradients(c.f, arrays, wrt, weights, layout)
            recomputed = analytic_gradients(c.f, arrays, wrt, weights, layout, BALANCED_DEVICE)
            for k in wrt:
                np.testing.assert_array_equal(
                    recomputed[k], analytic[k], err_msg=f"d/d(input {k}) under BalancedCheckpointing"
                )
            for k in wrt:
                np.testing.assert_allclose(
                    analytic[k], numeric[k], rtol=c.rtol, atol=c.atol, err_msg=f"d/d(input {k})"
                )
        except Exception as e:  # a failure in one layout must not hide the others
            failures.append(f"[{layout}] {type(e).__name__}: {e}")
    if failures:
        raise AssertionError(f"{c.name}: analytic gradient != finite differences\n" + "\n".join(failures))


def gradcheck_test(*makers: Callable[[], list[Case]]) -> Callable[[Case], None]:
    """A test that checks every case the ``makers`` make, with ids ``group-case``
    (``group``: the maker's name without ``_cases``). Bind it to a ``test_*`` name::

        test_gradients_match_finite_differences = gradcheck_test(unary_cases, binary_cases)
    """
    params = []
    for make in makers:
        group = make.__name__.removesuffix("_cases")
        params += [pytest.param(c, id=f"{group}-{c.name}") for c in make()]

    @pytest.mark.parametrize("c", params)
    def test(c: Case) -> None:
        check_case(c)

    return test
