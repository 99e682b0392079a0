"""Burn 0.20.1's tests of ``mask_where`` and ``mask_fill``, ported.

From crates/burn-backend-tests/tests: tensor/float/ops/mask.rs,
tensor/int/ops/mask.rs, tensor/bool/ops/mask.rs and autodiff/mask.rs. The
tensor, the mask and the value broadcast to their common shape (Burn's
rule), also through autodiff, where a broadcast tensor or value gets the
sum of the gradients of the positions it fed.
"""

from __future__ import annotations

import numpy as np
import pytest
from ferrum import Bool, Int, ShapeError, Tensor

from tests.support.burn_port import AD, DEVICE, assert_approx, assert_eq

NAN = float("nan")


# --------------------------------------------------------------------------- float/ops/mask.rs


def test_mask_fill_swap_dims() -> None:
    t = Tensor.arange(0, 16, DEVICE).float().reshape((2, 2, 4)).swap_dims(0, 2)
    out = t.mask_fill(t.lower_equal_elem(5.0), -5.0)
    expected = [
        [[-5.0, 8.0], [-5.0, 12.0]],
        [[-5.0, 9.0], [-5.0, 13.0]],
        [[-5.0, 10.0], [6.0, 14.0]],
        [[-5.0, 11.0], [7.0, 15.0]],
    ]
    assert_eq(out, expected)


def test_mask_where_ops() -> None:
    t = Tensor.from_floats([[1.0, 7.0], [2.0, 3.0]], DEVICE)
    mask = Tensor.from_bool([[True, False], [False, True]], DEVICE)
    value = Tensor.from_floats([[1.8, 2.8], [3.8, 4.8]], DEVICE)
    assert_approx(t.mask_where(mask, value), [[1.8, 7.0], [2.0, 4.8]])


BROADCAST_MASK = [
    [[True, False], [False, True]],
    [[False, True], [True, False]],
    [[False, False], [False, False]],
    [[True, True], [True, True]],
]
BROADCAST_EXPECTED = [[[1, 3], [4, 1]], [[2, 1], [1, 5]], [[2, 3], [4, 5]], [[1, 1], [1, 1]]]


def test_mask_where_broadcasts_the_tensor() -> None:
    # The [1, 2, 2] input [[2, 3], [4, 5]] is repeated 4 times.
    t = Tensor.arange(2, 6, DEVICE).reshape((1, 2, 2))
    mask = Tensor.from_bool(BROADCAST_MASK, DEVICE)
    out = t.float().mask_where(mask, Tensor.ones((4, 2, 2), DEVICE))
    assert_eq(out, BROADCAST_EXPECTED)
    # int/ops/mask.rs: should_support_mask_where_broadcast_int
    assert_eq(t.mask_where(mask, Tensor.ones((4, 2, 2), DEVICE, kind=Int)), BROADCAST_EXPECTED)


def test_mask_where_broadcasts_a_small_value() -> None:
    t = Tensor.arange(2, 4, DEVICE).float()
    out = t.mask_where(Tensor.from_bool([True, False], DEVICE), Tensor.ones((1,), DEVICE))
    assert_eq(out, [1.0, 3.0])


def test_mask_where_nans() -> None:
    t = Tensor.from_floats([[NAN] * 3] * 3, DEVICE)
    mask = Tensor.from_bool([[True, True, True], [True, True, False], [False, False, False]], DEVICE)
    value = Tensor.from_floats([[0.9, 0.8, 0.7], [0.6, 0.5, 0.4], [0.3, 0.2, 0.1]], DEVICE)
    assert_approx(t.mask_where(mask, value), [[0.9, 0.8, 0.7], [0.6, 0.5, NAN], [NAN, NAN, NAN]])


def test_mask_fill() -> None:
    t = Tensor.from_floats([[1.0, 7.0], [2.0, 3.0]], DEVICE)
    assert_eq(
        t.mask_fill(Tensor.from_bool([[True, False], [False, True]], DEVICE), 2.0), [[2.0, 7.0], [2.0, 2.0]]
    )
    zeros = Tensor.zeros((1, 4, 2, 2), DEVICE)
    out = zeros.mask_fill(Tensor.from_bool([[[[True, False], [False, True]]]], DEVICE), 2.0)
    assert_eq(out, [[[[2.0, 0.0], [0.0, 2.0]]] * 4])
    inf = Tensor.from_floats([[-np.inf, -np.inf], [-np.inf, -np.inf]], DEVICE)
    out2 = inf.mask_fill(Tensor.from_bool([[True, False], [False, True]], DEVICE), 10.0)
    assert_eq(out2, [[10.0, -np.inf], [-np.inf, 10.0]])


def test_mask_fill_broadcasts_the_tensor() -> None:
    t = Tensor.from_floats([[1.0, 2.0]], DEVICE)
    out = t.mask_fill(Tensor.from_bool([[True, False], [False, True], [False, False]], DEVICE), 0.0)
    assert_eq(out, [[0.0, 2.0], [1.0, 0.0], [1.0, 2.0]])


def test_incompatible_shapes_still_fail() -> None:
    t = Tensor.zeros((2, 3), DEVICE)
    with pytest.raises(ShapeError, match="dim 1 has sizes 3 and 2"):
        t.mask_fill(Tensor.ones((2, 2), DEVICE, Bool), 1.0)
    with pytest.raises(ShapeError, match="the mask has rank 1, the tensor rank 2"):
        t.mask_where(Tensor.ones((3,), DEVICE, Bool), t)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- int and bool mask.rs


def test_int_and_bool_masks() -> None:
    t = Tensor.from_ints([[1, 7], [2, 3]], DEVICE)
    mask = Tensor.from_bool([[True, False], [False, True]], DEVICE)
    assert_eq(t.mask_where(mask, Tensor.from_ints([[8, 9], [10, 11]], DEVICE)), [[8, 7], [2, 11]])
    assert_eq(t.mask_fill(mask, 9), [[9, 7], [2, 9]])
    b = Tensor.from_bool([[True, False], [False, False]], DEVICE)
    value = Tensor.from_bool([[False, True], [True, False]], DEVICE)
    assert_eq(b.mask_where(mask, value), [[False, False], [False, False]])
    assert_eq(
        Tensor.from_bool([[False, True], [False, False]], DEVICE).mask_fill(mask, True),
        [[True, True], [False, True]],
    )


# --------------------------------------------------------------------------- autodiff/mask.rs


def test_diff_mask_fill() -> None:
    t1 = Tensor.from_floats([[1.0, 7.0], [2.0, 3.0]], AD).require_grad()
    t2 = Tensor.from_floats([[4.0, 7.0], [2.0, 3.0]], AD).require_grad()
    mask = Tensor.from_bool([[True, False], [False, True]], AD)
    grads = (t1 @ t2).mask_fill(mask, 2.0).backward()
    g1, g2 = t1.grad(grads), t2.grad(grads)
    assert g1 is not None and g2 is not None
    assert_eq(g1, [[7.0, 3.0], [4.0, 2.0]])
    assert_eq(g2, [[2.0, 1.0], [3.0, 7.0]])


def test_diff_mask_where() -> None:
    t1 = Tensor.from_floats([[1.0, 7.0], [2.0, 3.0]], AD).require_grad()
    t2 = Tensor.from_floats([[4.0, 7.0], [2.0, 3.0]], AD).require_grad()
    t3 = Tensor.from_floats([[8.8, 9.8], [10.8, 11.8]], AD).require_grad()
    mask = Tensor.from_bool([[True, False], [False, True]], AD)
    grads = ((t1 @ t2) @ t3).mask_where(mask, t3).backward()
    g1, g2, g3 = t1.grad(grads), t2.grad(grads), t3.grad(grads)
    assert g1 is not None and g2 is not None and g3 is not None
    assert_approx(g1, [[121.8, 55.0], [110.8, 50.0]])
    assert_approx(g2, [[27.4, 33.4], [95.0, 115.0]])
    assert_approx(g3, [[15.0, 18.0], [23.0, 29.0]])


def test_diff_broadcast_tensor_gets_summed_gradients() -> None:
    # A [1, 2, 2] tensor broadcast against a [4, 2, 2] mask: each element's gradient
    # counts the rows where the mask is False.
    x = Tensor.from_floats([[[2.0, 3.0], [4.0, 5.0]]], AD).require_grad()
    value = Tensor.ones((4, 1, 1), AD).require_grad()
    mask = Tensor.from_bool(BROADCAST_MASK, AD)
    grads = x.mask_where(mask, value).sum().backward()
    gx, gv = x.grad(grads), value.grad(grads)
    assert gx is not None and gv is not None
    unmasked = (~np.array(BROADCAST_MASK)).sum(axis=0, keepdims=True).astype(np.float32)
    assert_eq(gx, unmasked)
    assert_eq(gv, np.array(BROADCAST_MASK).sum(axis=(1, 2), keepdims=True).astype(np.float32))
    grads = (x.mask_fill(mask, 0.0) * 3.0).sum().backward()
    gx = x.grad(grads)
    assert gx is not None
    assert_eq(gx, 3.0 * unmasked)
