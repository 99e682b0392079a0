"""Burn 0.20.1's tests of activations, grids, transactions and printing, ported.

From crates/burn-backend-tests/tests/tensor: float/activation/quiet_softmax.rs,
float/activation/prelu.rs, float/grid/meshgrid.rs,
int/ops/cartesian_grid.rs, float/ops/grid_sample.rs,
float/ops/transaction.rs, float/ops/aggregation.rs (sum_dims_squeeze),
float/ops/transpose.rs (t), float/ops/maxmin.rs (max_dims, min_dims,
max_abs_dims), float/ops/cross.rs, autodiff/cross.rs and float/stats/display.rs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from ferrum import (
    ArgumentError,
    DType,
    KindError,
    OutOfBoundsError,
    PrintOptions,
    ShapeError,
    Tensor,
    Transaction,
    activation,
    print_options,
    set_print_options,
)
from ferrum.grid import GridIndexing, GridOptions, GridSparsity, IndexPos, meshgrid, meshgrid_stack

from tests.support.burn_port import AD, DEVICE, assert_approx, assert_eq, values
from tests.support.tensors import Array

# --------------------------------------------------------------------------- activations


def test_quiet_softmax_d2() -> None:
    out = activation.quiet_softmax(Tensor.from_floats([[1.0, 7.0], [13.0, -3.0]], DEVICE), 1)
    assert_approx(out, [[2.47e-03, 9.975e-01], [1.0, 1.1254e-07]])
    # Exactly exp(x) / (1 + sum exp(x)) (ferrum's old formula was off by up to 0.25 here).
    x = np.array([[1.0, 7.0], [13.0, -3.0]])
    np.testing.assert_allclose(out.to_numpy(), np.exp(x) / (1.0 + np.exp(x).sum(1, keepdims=True)), rtol=1e-6)


def test_quiet_softmax_is_stable_and_differentiable() -> None:
    x = Tensor.from_floats([[1000.0, 1000.0], [-1000.0, -1000.0]], DEVICE)
    assert_eq(activation.quiet_softmax(x, 1), [[0.5, 0.5], [0.0, 0.0]])
    # The gradient is softmax's Jacobian diag(y) - y y^T applied to the upstream gradient.
    v = Tensor.from_floats([[0.5, -1.0, 2.0]], AD).require_grad()
    w = np.array([[1.0, 2.0, 3.0]])
    y = activation.quiet_softmax(v, 1)
    g = v.grad((y * Tensor.from_floats(w.tolist(), AD)).sum().backward())
    assert g is not None
    yy = y.inner().to_numpy().astype(np.float64)
    expected = yy * (w - (w * yy).sum(1, keepdims=True))
    np.testing.assert_allclose(g.to_numpy(), expected, rtol=1e-5)


PRELU_INPUT = [[-1.1, 0.0, 1.2, 0.25, -5.4], [-4.567, 0.56, -1.55, 99.9, 0.0]]


def test_prelu() -> None:
    t = Tensor.from_floats(PRELU_INPUT, DEVICE)
    out = activation.prelu(t, Tensor.from_floats([0.5, 0.25, 0.0, -0.8, -0.4], DEVICE))
    assert_approx(out, [[-0.55, 0.0, 1.2, 0.25, 2.16], [-2.2835, 0.56, -0.0, 99.9, -0.0]])
    out = activation.prelu(t, Tensor.from_floats([-0.8], DEVICE))
    assert_approx(out, [[0.88, -0.0, 1.2, 0.25, 4.32], [3.6536, 0.56, 1.24, 99.9, -0.0]])
    positives = [[0.5447, 0.9809, 0.4114, 0.1398, 0.8045, 0.4103, 0.2388, 0.5262, 0.6677, 0.6737]]
    assert_approx(
        activation.prelu(Tensor.from_floats(positives, DEVICE), Tensor.from_floats([0.25], DEVICE)), positives
    )
    one_d = Tensor.from_floats([-1.1, 0.0, 1.2, 0.25, -5.4], DEVICE)
    assert_approx(activation.prelu(one_d, Tensor.from_floats([0.0], DEVICE)), [0.0, 0.0, 1.2, 0.25, 0.0])
    assert_approx(activation.prelu(one_d, Tensor.from_floats([0.5], DEVICE)), [-0.55, 0.0, 1.2, 0.25, -2.7])


def test_prelu_weights_that_match_no_channel_dim() -> None:
    one_d = Tensor.from_floats([-1.1, 2.0, 1.2, 0.25, -5.4], DEVICE)
    with pytest.raises(ArgumentError, match="an input of rank below 2 has one channel"):
        activation.prelu(one_d, Tensor.from_floats([0.5, -0.25, 0.0, 0.5, -1.0], DEVICE))
    with pytest.raises(ArgumentError, match="alpha has 2 weights"):
        activation.prelu(Tensor.from_floats(PRELU_INPUT, DEVICE), Tensor.from_floats([-0.8, 0.1], DEVICE))


# --------------------------------------------------------------------------- meshgrid.rs, cartesian_grid.rs


def test_meshgrid() -> None:
    x, y, z = (Tensor.from_ints(v, DEVICE) for v in ([1, 2, 3, 4], [5, 6], [7, 8]))
    grid = (4, 2, 2)
    dense = [
        x.reshape((4, 1, 1)).expand(grid),
        y.reshape((1, 2, 1)).expand(grid),
        z.reshape((1, 1, 2)).expand(grid),
    ]
    sparse = [x.reshape((4, 1, 1)), y.reshape((1, 2, 1)), z.reshape((1, 1, 2))]

    def same(got: list[Tensor[Any, Any, Any]], want: list[Tensor[Any, Any, Any]]) -> None:
        assert [values(t) for t in got] == [values(t) for t in want]

    for options in (None, GridOptions(), GridSparsity.Dense, GridIndexing.Matrix):
        same(meshgrid([x, y, z], options), dense)
    same(meshgrid([x, y, z], GridOptions(GridIndexing.Matrix, GridSparsity.Sparse)), sparse)
    same(meshgrid([x, y, z], GridSparsity.Sparse), sparse)
    same(meshgrid([x, y, z], GridIndexing.Cartesian), [t.swap_dims(0, 1) for t in dense])
    same(
        meshgrid([x, y, z], GridOptions(GridIndexing.Cartesian, GridSparsity.Sparse)),
        [t.swap_dims(0, 1) for t in sparse],
    )
    # NumPy's meshgrid gives the same dense grids ("ij" is Matrix, "xy" is Cartesian).
    for got, want in zip(
        meshgrid([x, y, z], GridIndexing.Cartesian), np.meshgrid([1, 2, 3, 4], [5, 6], [7, 8]), strict=True
    ):
        np.testing.assert_array_equal(got.to_numpy(), want)


def test_meshgrid_stack() -> None:
    tensors = [Tensor.from_floats([0.5, 1.0, 2.5], DEVICE), Tensor.from_floats([0.5, 1.0], DEVICE)]
    first = [[[0.5, 0.5], [1.0, 1.0], [2.5, 2.5]], [[0.5, 1.0], [0.5, 1.0], [0.5, 1.0]]]
    assert_eq(meshgrid_stack(tensors, IndexPos.First), first)
    last = [[[0.5, 0.5], [0.5, 1.0]], [[1.0, 0.5], [1.0, 1.0]], [[2.5, 0.5], [2.5, 1.0]]]
    assert_eq(meshgrid_stack(tensors, IndexPos.Last), last)


def test_meshgrid_bad_input() -> None:
    with pytest.raises(ValueError, match="at least one tensor"):
        meshgrid([])
    with pytest.raises(ValueError, match=r"tensors\[0\] must be a rank-1 tensor, found shape \[2, 2\]"):
        meshgrid([Tensor.zeros((2, 2), DEVICE)])  # type: ignore[list-item]


def test_cartesian_grid() -> None:
    assert_eq(Tensor.cartesian_grid((1,), DEVICE), [[0]])
    assert_eq(Tensor.cartesian_grid((2, 2), DEVICE), [[[0, 0], [0, 1]], [[1, 0], [1, 1]]])
    grid = Tensor.cartesian_grid((2, 3, 4), DEVICE)
    np.testing.assert_array_equal(grid.to_numpy(), np.stack(list(np.indices((2, 3, 4))), axis=-1))
    assert Tensor.cartesian_grid((0, 3), DEVICE).shape() == (0, 3, 2)
    with pytest.raises(ArgumentError, match="at least one dim"):
        Tensor.cartesian_grid((), DEVICE)


# --------------------------------------------------------------------------- grid_sample.rs

IMAGE = [[[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]]]]
GRID = [[[[0.0, 0.0], [-1.0, 0.25]], [[1.0, 1.0], [0.2, -0.8]]]]


@pytest.mark.parametrize(
    ("padding_mode", "align_corners", "expected"),
    [
        ("zeros", False, [[[[4.0, 2.0625], [2.0, 1.04]]]]),
        ("border", True, [[[[4.0, 3.75], [8.0, 1.8]]]]),
        ("reflection", False, [[[[4.0, 4.125], [8.0, 1.3]]]]),
    ],
)
def test_grid_sample_2d(
    padding_mode: str, align_corners: bool, expected: list[list[list[list[float]]]]
) -> None:
    image, grid = Tensor.from_floats(IMAGE, DEVICE), Tensor.from_floats(GRID, DEVICE)
    out = image.grid_sample_2d(grid, padding_mode=padding_mode, align_corners=align_corners)  # type: ignore[arg-type]
    assert_approx(out, expected)


def test_grid_sample_2d_out_of_bounds() -> None:
    image, grid = Tensor.from_floats(IMAGE, DEVICE), Tensor.from_floats([[[[0.0, -2.0]]]], DEVICE)
    assert_approx(image.grid_sample_2d(grid), [[[[0.0]]]])
    assert_approx(image.grid_sample_2d(grid, padding_mode="border"), [[[[1.0]]]])
    # A NaN or huge location reads nothing with zero padding, as in PyTorch (was NaN: 0 * NaN weight).
    far = Tensor.from_floats([[[[float("nan"), 0.0], [1e30, 0.0], [0.0, float("nan")]]]], DEVICE)
    assert_eq(image.grid_sample_2d(far), [[[[0.0, 0.0, 0.0]]]])


def test_grid_sample_2d_gradients_reach_input_and_grid() -> None:
    image = Tensor.from_floats(IMAGE, AD).require_grad()
    grid = Tensor.from_floats(GRID, AD).require_grad()
    grads = image.grid_sample_2d(grid).sum().backward()
    gi, gg = image.grad(grads), grid.grad(grads)
    assert gi is not None and gg is not None
    # Central differences of the plain forward.
    base_image, base_grid = np.array(IMAGE), np.array(GRID)

    def loss(img: Array, grd: Array) -> float:
        plain = Tensor.from_numpy(img, DEVICE).grid_sample_2d(Tensor.from_numpy(grd, DEVICE))
        return float(plain.sum().into_scalar())

    def numeric(arr: Array, other: Array, first: bool) -> Array:
        def f(a: Array) -> float:
            return loss(a, other) if first else loss(other, a)

        out = np.zeros_like(arr)
        for i in np.ndindex(arr.shape):
            up, down = arr.copy(), arr.copy()
            up[i] += 1e-3
            down[i] -= 1e-3
            out[i] = (f(up) - f(down)) / 2e-3
        return out

    np.testing.assert_allclose(gi.to_numpy(), numeric(base_image, base_grid, True), atol=2e-3)
    np.testing.assert_allclose(gg.to_numpy(), numeric(base_grid, base_image, False), atol=2e-2)


def test_grid_sample_2d_bad_arguments() -> None:
    image, grid = Tensor.from_floats(IMAGE, DEVICE), Tensor.from_floats(GRID, DEVICE)
    with pytest.raises(ArgumentError, match="mode must be 'bilinear'"):
        image.grid_sample_2d(grid, mode="nearest")  # type: ignore[arg-type]
    with pytest.raises(ArgumentError, match="padding_mode must be"):
        image.grid_sample_2d(grid, padding_mode="wrap")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- transaction, sum_dims_squeeze, t


def test_transaction_reads_every_tensor_byte_for_byte() -> None:
    # Burn's regression test (issue 4021) on a transposed matmul result, at a size fit for a test.
    j = Tensor.random((300, 40), __import__("ferrum").Distribution.Default, DEVICE)
    g = (j.transpose() @ j).transpose()
    expected = g.to_data()
    ints = Tensor.arange(0, 5, DEVICE)
    [data, idata] = Transaction().register(g).register(ints).execute()
    assert g.shape() == (40, 40)
    assert data == expected and idata == ints.to_data()
    assert Transaction().execute() == []
    with pytest.raises(TypeError, match="expected a Tensor"):
        Transaction().register([1.0])  # type: ignore[arg-type]


def test_sum_dims_squeeze() -> None:
    t = Tensor.from_floats([[[1.0, -2.0, 3.0], [5.0, 9.0, 6.0]], [[9.0, 2.0, 5.0], [5.0, 7.0, 7.0]]], DEVICE)
    assert_eq(t.sum_dims_squeeze([0, 1]), [20.0, 16.0, 21.0])
    assert_eq(t.sum_dims_squeeze([-1]), [[2.0, 20.0], [16.0, 19.0]])
    x = Tensor.from_floats([[1.0, 2.0], [3.0, 4.0]], AD).require_grad()
    g = x.grad(x.sum_dims_squeeze([1]).sum().backward())
    assert g is not None
    assert_eq(g, [[1.0, 1.0], [1.0, 1.0]])


# ------------------------------------------------------------------- maxmin.rs (max_dims, ...), cross.rs


def test_max_min_max_abs_dims() -> None:
    f = Tensor.from_floats([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], DEVICE)
    for dims in ([0], [-2]):
        assert_eq(f.max_dims(dims), [[3.0, 4.0, 5.0]])
        assert_eq(f.min_dims(dims), [[0.0, 1.0, 2.0]])
    assert_eq(f.max_dims([0, 1]), [[5.0]])
    assert_eq(f.min_dims([0, 1]), [[0.0]])
    g = Tensor.from_floats([[0.0, 1.0, -2.0], [-5.0, 6.0, 1.0]], DEVICE)
    assert_eq(g.max_abs_dims([0]), [[5.0, 6.0, 2.0]])
    assert_eq(g.max_abs_dims([-2]), [[5.0, 6.0, 2.0]])
    assert_eq(Tensor.from_ints([[3, -7], [2, 5]], DEVICE).max_abs_dims([1]), [[7], [5]])
    with pytest.raises(OutOfBoundsError):
        f.max_dims([2])


def test_max_dims_gradient_goes_to_each_winner() -> None:
    x = Tensor.from_floats([[0.0, -9.0, 2.0], [3.0, 4.0, 1.0]], AD).require_grad()
    grad = x.grad(x.max_abs_dims([0, 1]).sum().backward())
    assert grad is not None
    assert_eq(grad, [[0.0, -1.0, 0.0], [0.0, 0.0, 0.0]])
    grad = x.grad(x.min_dims([1]).sum().backward())
    assert grad is not None
    assert_eq(grad, [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])


CROSS_A = [[1.0, 3.0, -5.0], [2.0, -1.0, 4.0]]
CROSS_B = [[4.0, -2.0, 1.0], [3.0, 5.0, -2.0]]


def test_cross() -> None:
    a, b = Tensor.from_floats(CROSS_A, DEVICE), Tensor.from_floats(CROSS_B, DEVICE)
    assert_eq(a.cross(b, -1), [[-7.0, -21.0, -14.0], [-18.0, 16.0, 13.0]])
    b_t = Tensor.from_floats(np.array(CROSS_B).T.tolist(), DEVICE)
    assert_eq(a.cross(b_t.permute([1, 0]), -1), [[-7.0, -21.0, -14.0], [-18.0, 16.0, 13.0]])
    x = Tensor.from_floats([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]], DEVICE)
    y = Tensor.from_floats([[0.0, 1.0], [0.0, 0.0], [1.0, 0.0]], DEVICE)
    assert_eq(x.cross(y, 0), [[0.0, 0.0], [-1.0, 0.0], [0.0, -1.0]])
    row = Tensor.from_floats([[1.0, 3.0, -5.0]], DEVICE)
    assert_eq(row.cross(b, -1), [[-7.0, -21.0, -14.0], [19.0, -13.0, -4.0]])
    e0 = Tensor.from_floats([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], DEVICE)
    e1 = Tensor.from_floats([[[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]], DEVICE)
    assert_eq(e0.cross(e1, -1), [[[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]])
    rng = np.random.default_rng(0)
    p, q = rng.normal(size=(4, 3, 5)), rng.normal(size=(1, 3, 5))
    f64 = DType.F64
    got = Tensor.from_numpy(p, DEVICE, dtype=f64).cross(Tensor.from_numpy(q, DEVICE, dtype=f64), 1).to_numpy()
    np.testing.assert_allclose(got, np.cross(p, q, axis=1), rtol=1e-12)


def test_cross_gradients() -> None:
    # Burn's autodiff/cross.rs: with ones upstream, a gets b x 1 and b gets 1 x a.
    a = Tensor.from_floats([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], AD).require_grad()
    b = Tensor.from_floats([[4.0, 5.0, 6.0], [7.0, 8.0, 9.0]], AD).require_grad()
    grads = a.cross(b, 1).sum().backward()
    ga, gb = a.grad(grads), b.grad(grads)
    assert ga is not None and gb is not None
    assert_approx(ga, [[-1.0, 2.0, -1.0], [-1.0, 2.0, -1.0]])
    assert_approx(gb, [[1.0, -2.0, 1.0], [1.0, -2.0, 1.0]])


def test_cross_bad_arguments() -> None:
    a = Tensor.from_floats(CROSS_A, DEVICE)
    with pytest.raises(ShapeError, match="expected size 3 along dim 0"):
        a.cross(a, 0)
    with pytest.raises(ShapeError, match="does not broadcast"):
        a.cross(Tensor.zeros((3, 3), DEVICE), 1)
    with pytest.raises(KindError, match="cross"):
        ints = Tensor.from_ints([[1, 2, 3]], DEVICE)
        ints.cross(ints, 1)  # type: ignore[misc, arg-type]


def test_t_is_transpose() -> None:
    t = Tensor.arange(0, 6, DEVICE).reshape((1, 2, 3))
    assert_eq(t.t(), values(t.transpose()))
    assert t.t().shape() == (1, 3, 2)


# --------------------------------------------------------------------------- stats/display.rs


@pytest.fixture
def default_print_options() -> Iterator[None]:
    set_print_options(PrintOptions())
    yield
    set_print_options(PrintOptions())


def display(data: str, shape: str, kind: str, dtype: str) -> str:
    return (
        f'Tensor {{\n  data:\n{data},\n  shape:  {shape},\n  device:  Cpu,\n  backend:  "ndarray",\n'
        f'  kind:  "{kind}",\n  dtype:  "{dtype}",\n}}'
    )


@pytest.mark.usefixtures("default_print_options")
def test_display_2d() -> None:
    ints = Tensor.from_ints([[1, 2, 3], [4, 5, 6], [7, 8, 9]], DEVICE)
    assert str(ints) == display("[[1, 2, 3],\n [4, 5, 6],\n [7, 8, 9]]", "[3, 3]", "Int", "i64")
    floats = Tensor.from_floats([[1.1, 2.2, 3.3], [4.4, 5.5, 6.6], [7.7, 8.8, 9.9]], DEVICE)
    assert str(floats) == display(
        "[[1.1, 2.2, 3.3],\n [4.4, 5.5, 6.6],\n [7.7, 8.8, 9.9]]", "[3, 3]", "Float", "f32"
    )
    bools = Tensor.from_bool([[True, False, True], [False, True, False], [False, True, True]], DEVICE)
    expected = "[[true, false, true],\n [false, true, false],\n [false, true, true]]"
    assert str(bools) == display(expected, "[3, 3]", "Bool", "bool")


@pytest.mark.usefixtures("default_print_options")
def test_display_3d_and_4d() -> None:
    t = Tensor.arange(1, 25, DEVICE).reshape((2, 3, 4))
    data = (
        "[[[1, 2, 3, 4],\n  [5, 6, 7, 8],\n  [9, 10, 11, 12]],\n"
        " [[13, 14, 15, 16],\n  [17, 18, 19, 20],\n  [21, 22, 23, 24]]]"
    )
    assert str(t) == display(data, "[2, 3, 4]", "Int", "i64")
    t4 = Tensor.arange(1, 25, DEVICE).reshape((2, 2, 2, 3))
    data = (
        "[[[[1, 2, 3],\n   [4, 5, 6]],\n  [[7, 8, 9],\n   [10, 11, 12]]],\n"
        " [[[13, 14, 15],\n   [16, 17, 18]],\n  [[19, 20, 21],\n   [22, 23, 24]]]]"
    )
    assert str(t4) == display(data, "[2, 2, 2, 3]", "Int", "i64")


@pytest.mark.usefixtures("default_print_options")
def test_display_summarizes_past_the_threshold() -> None:
    row = "[0.0, 0.0, 0.0, ..., 0.0, 0.0, 0.0]"
    block = f"[{row},\n   {row}]"
    data = f"[[{block},\n  {block}],\n [{block},\n  {block}]]"
    assert str(Tensor.zeros((2, 2, 2, 1000), DEVICE)) == display(data, "[2, 2, 2, 1000]", "Float", "f32")
    rows = ",\n   ".join([row] * 3)
    block = f"[{rows},\n   ...\n   {rows}]"
    data = f"[[{block},\n  {block}],\n [{block},\n  {block}]]"
    assert str(Tensor.zeros((2, 2, 20, 100), DEVICE)) == display(data, "[2, 2, 20, 100]", "Float", "f32")
    short = "[0.0, 0.0, 0.0, 0.0, 0.0, 0.0]"
    rows = ",\n   ".join([short] * 3)
    block = f"[{rows},\n   ...\n   {rows}]"
    data = f"[[{block},\n  {block}],\n [{block},\n  {block}]]"
    assert str(Tensor.zeros((2, 2, 200, 6), DEVICE)) == display(data, "[2, 2, 200, 6]", "Float", "f32")


@pytest.mark.usefixtures("default_print_options")
def test_display_precision_and_print_options() -> None:
    t = Tensor.full((1, 1), 0.123456789, DEVICE)
    assert str(t) == display("[[0.12345679]]", "[1, 1]", "Float", "f32")
    t = Tensor.full((3, 2), 0.123456789, DEVICE)
    assert f"{t:.3}" == display(
        "[[0.123, 0.123],\n [0.123, 0.123],\n [0.123, 0.123]]", "[3, 2]", "Float", "f32"
    )
    set_print_options(PrintOptions(threshold=4, edge_items=1, precision=2))
    assert print_options() == PrintOptions(4, 1, 2)
    assert str(Tensor.full((5,), 0.5, DEVICE)).startswith("Tensor {\n  data:\n[0.50, ..., 0.50],")
    # Precision is for Float values only.
    assert "[1, ..., 5]" in str(Tensor.arange(1, 6, DEVICE))
    with pytest.raises(ArgumentError, match="threshold must be >= 0"):
        set_print_options(PrintOptions(threshold=-1))
    with pytest.raises(ArgumentError, match=r"expected a spec like '\.3'"):
        format(t, "e")


@pytest.mark.usefixtures("default_print_options")
def test_display_of_an_autodiff_tensor_names_burns_backend() -> None:
    assert '  backend:  "autodiff<ndarray>",' in str(Tensor.ones((1,), AD))
