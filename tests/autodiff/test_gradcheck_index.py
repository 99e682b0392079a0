"""Gradients of views, slicing, concatenation, padding, repetition, rolls,
triangles, gather/scatter/select/take and masks against central finite
differences."""

from __future__ import annotations

from typing import Any

import numpy as np
from ferrum import Tensor

from tests.support.gradcheck import (
    AD_DEVICE,
    Case,
    bools,
    case,
    gradcheck_test,
    ints,
    rng_for,
    smooth,
)

X34 = smooth((3, 4), seed="x34")
X234 = smooth((2, 3, 4), seed="x234")


def view_cases() -> list[Case]:
    return [
        case("reshape(3,4)->(2,6)", lambda x: x.reshape((2, 6)), X34),
        case("reshape(3,4)->(12,)", lambda x: x.reshape((12,)), X34),
        case("reshape(2,3,4)->(-1,4)", lambda x: x.reshape((-1, 4)), X234),
        case("reshape(2,3,4)->(4,3,2)", lambda x: x.reshape((4, 3, 2)), X234),
        case("permute[2,0,1]", lambda x: x.permute([2, 0, 1]), X234),
        case("permute[1,0]", lambda x: x.permute([1, 0]), X34),
        case("transpose(3,4)", lambda x: x.transpose(), X34),
        case("transpose(2,3,4)", lambda x: x.transpose(), X234),
        case("swap_dims(0,2)", lambda x: x.swap_dims(0, 2), X234),
        case("swap_dims(-1,0)", lambda x: x.swap_dims(-1, 0), X34),
        case("movedim(0,2)", lambda x: x.movedim(0, 2), X234),
        case("movedim([0,1],[2,0])", lambda x: x.movedim([0, 1], [2, 0]), X234),
        case("flip[0]", lambda x: x.flip([0]), X34),
        case("flip[0,2]", lambda x: x.flip([0, 2]), X234),
        case("flip[-1]", lambda x: x.flip([-1]), X234),
        case("flatten(0,1)", lambda x: x.flatten(0, 1), X234),
        case("flatten(1,2)", lambda x: x.flatten(1, 2), X234),
        case("flatten(0,2)", lambda x: x.flatten(0, 2), X234),
        case("squeeze", lambda x: x.squeeze(), smooth((1, 3, 1, 4))),
        case("squeeze_dim(0)", lambda x: x.squeeze_dim(0), smooth((1, 3, 4))),
        case("squeeze_dim(-1)", lambda x: x.squeeze_dim(-1), smooth((3, 4, 1))),
        case("squeeze_dims[0,2]", lambda x: x.squeeze_dims([0, 2]), smooth((1, 3, 1, 4))),
        case("unsqueeze(4)", lambda x: x.unsqueeze(4), X34),
        case("unsqueeze_dim(1)", lambda x: x.unsqueeze_dim(1), X34),
        case("unsqueeze_dim(-1)", lambda x: x.unsqueeze_dim(-1), X234),
        case("unsqueeze_dims[0,2]", lambda x: x.unsqueeze_dims([0, 2]), X34),
        case("expand(1,4)->(3,4)", lambda x: x.expand((3, 4)), smooth((1, 4))),
        case("expand(3,1,2)->(3,4,2)", lambda x: x.expand((3, 4, 2)), smooth((3, 1, 2))),
        case("expand(4,)->(3,4)", lambda x: x.expand((3, 4)), smooth((4,))),
        case("expand(3,1)->(2,3,5)", lambda x: x.expand((2, 3, 5)), smooth((3, 1))),
        case("narrow(1,1,2)", lambda x: x.narrow(1, 1, 2), X34),
        case("narrow(0,1,1)", lambda x: x.narrow(0, 1, 1), X234),
        case("narrow(-1,0,3)", lambda x: x.narrow(-1, 0, 3), X234),
    ]


def split_cases() -> list[Case]:
    return [
        case("chunk(2,1)", lambda x: x.chunk(2, 1), X34),
        case("chunk(3,0)", lambda x: x.chunk(3, 0), X34),
        case("chunk(3,-1)uneven", lambda x: x.chunk(3, -1), X234),
        case("split(2,0)", lambda x: x.split(2, 0), X34),
        case("split(3,2)", lambda x: x.split(3, 2), X234),
        case("split_with_sizes([1,3],1)", lambda x: x.split_with_sizes([1, 3], 1), X34),
        case("split_with_sizes([1,1,2],-1)", lambda x: x.split_with_sizes([1, 1, 2], -1), X234),
        case("iter_dim(0)", lambda x: x.iter_dim(0), X34),
        case("iter_dim(1)", lambda x: x.iter_dim(1), X234),
        case("chunk_then_one_piece_used", lambda x: x.chunk(2, 1)[1], X34),
    ]


def slice_cases() -> list[Case]:
    v22 = smooth((2, 2), seed="v22")
    v_step = smooth((2, 2, 4), seed="vstep")
    return [
        case("slice[(0,2),1:]", lambda x: x.slice([(0, 2), slice(1, None)]), X34),
        case("slice[None,(1,3)]", lambda x: x.slice([None, (1, 3)]), X34),
        case("slice[::-1,2]", lambda x: x.slice([slice(None, None, -1), 2]), X34),
        case("getitem[1:3,::2]", lambda x: x[1:3, ::2], X34),
        case("getitem[...,::-1]", lambda x: x[..., ::-1], X234),
        case("getitem[1]", lambda x: x[1], X234),
        case("getitem[:,-2:]", lambda x: x[:, -2:], X34),
        case("getitem[::2,1::2]", lambda x: x[::2, 1::2], X34),
        case("getitem[:,::-2,1:3]", lambda x: x[:, ::-2, 1:3], X234),
        case("getitem_overlapping_views", lambda x: x[:, 1:3] * x[:, 0:2], X34),
        case("slice_assign", lambda x, v: x.slice_assign([(1, 3), (0, 2)], v), X34, v22),
        case("slice_assign_wrt_base", lambda x, v: x.slice_assign([(1, 3), (0, 2)], v), X34, v22, wrt=(0,)),
        case("slice_assign_wrt_values", lambda x, v: x.slice_assign([(1, 3), (0, 2)], v), X34, v22, wrt=(1,)),
        case(
            "slice_assign_stepped",
            lambda x, v: x.slice_assign([slice(None), slice(None, None, 2)], v),
            X234,
            v_step,
        ),
        case("slice_fill", lambda x: x.slice_fill([(0, 2), slice(1, None, 2)], 0.5), X34),
        case("slice_fill_3d", lambda x: x.slice_fill([1, None, (1, 3)], -1.0), X234),
    ]


def cat_stack_cases() -> list[Case]:
    a, b, c = smooth((3, 2), seed="ca"), smooth((3, 4), seed="cb"), smooth((3, 1), seed="cc")
    p, q = smooth((2, 3), seed="sp"), smooth((2, 3), seed="sq")
    return [
        case("cat dim1", lambda x, y, z: Tensor.cat([x, y, z], 1), a, b, c),
        case("cat dim0", lambda x, y: Tensor.cat([x, y], 0), smooth((1, 4)), smooth((3, 4))),
        case("cat dim-1 rank3", lambda x, y: Tensor.cat([x, y], -1), X234, smooth((2, 3, 2))),
        case("cat same tensor twice", lambda x: Tensor.cat([x, x * 2.0], 0), X34),
        case("cat one untracked", lambda x, y: Tensor.cat([x, y], 1), a, b, wrt=(1,)),
        case("stack dim0", lambda x, y: Tensor.stack([x, y], 0), p, q),
        case("stack dim1", lambda x, y: Tensor.stack([x, y], 1), p, q),
        case("stack dim-1", lambda x, y, z: Tensor.stack([x, y, z], -1), p, q, smooth((2, 3), seed="sr")),
    ]


def pad_repeat_roll_cases() -> list[Case]:
    return [
        case("pad(1,2)", lambda x: x.pad([1, 2], 0.5), X34),
        case("pad(1,0,2,1)", lambda x: x.pad([1, 0, 2, 1]), X34),
        case("pad 3d", lambda x: x.pad([0, 1, 1, 1], -2.0), X234),
        case("repeat[2,1]", lambda x: x.repeat([2, 1]), X34),
        case("repeat[2,1,3]", lambda x: x.repeat([2, 1, 3]), X234),
        case("repeat_dim(1,3)", lambda x: x.repeat_dim(1, 3), X34),
        case("repeat_dim(0,2) rank1", lambda x: x.repeat_dim(0, 2), smooth((5,))),
        case("roll[1,-2]", lambda x: x.roll([1, -2], [0, 1]), X34),
        case("roll 3d", lambda x: x.roll([5], [-1]), X234),
        case("roll_dim(2,-1)", lambda x: x.roll_dim(2, -1), X34),
        case("roll_dim(-1,0)", lambda x: x.roll_dim(-1, 0), X234),
        case("triu", lambda x: x.triu(), X34),
        case("triu(1)", lambda x: x.triu(1), X34),
        case("tril(-1)", lambda x: x.tril(-1), X34),
        case("tril batched", lambda x: x.tril(), X234),
        case("triu batched(-1)", lambda x: x.triu(-1), X234),
    ]


def gather_scatter_cases() -> list[Case]:
    rng = rng_for("gather")
    g_idx1 = rng.integers(0, 4, size=(3, 5))  # repeats: several outputs read one input
    g_idx0 = rng.integers(0, 3, size=(2, 4))
    g_idx3 = rng.integers(0, 3, size=(2, 3, 2))
    s_idx = rng.integers(0, 4, size=(3, 2))
    s_vals = smooth((3, 2), seed="svals")
    sel = [2, 0, 2, 1]
    sa_vals = smooth((3, 4), seed="savals")
    take2d = [[0, 3], [3, 1]]
    mask = rng.random((3, 4)) < 0.5
    other = smooth((3, 4), seed="other")

    def gather1(x: Any) -> Any:
        return x.gather(1, ints(g_idx1, x))

    return [
        case("gather dim1 repeats", gather1, X34),
        case("gather dim0", lambda x: x.gather(0, ints(g_idx0, x)), X34),
        case("gather dim1 rank3", lambda x: x.gather(1, ints(g_idx3, x)), X234),
        case("scatter", lambda x, v: x.scatter(1, ints(s_idx, x), v), X34, s_vals),
        case("scatter wrt values", lambda x, v: x.scatter(1, ints(s_idx, x), v), X34, s_vals, wrt=(1,)),
        case("scatter dim0", lambda x, v: x.scatter(0, ints([[0, 2, 2, 1]], x), v), X34, smooth((1, 4))),
        case("select dim0 repeats", lambda x: x.select(0, ints(sel[:3], x)), X34),
        case("select dim1", lambda x: x.select(1, ints(sel, x)), X34),
        case("select dim-1 rank3", lambda x: x.select(-1, ints([3, 3, 0], x)), X234),
        case("select_assign", lambda x, v: x.select_assign(1, ints(sel, x), v), X34, sa_vals),
        case(
            "select_assign dim0",
            lambda x, v: x.select_assign(0, ints([1, 1], x), v),
            X34,
            smooth((2, 4), seed="sa0"),
        ),
        case("take dim1 2d indices", lambda x: x.take(1, ints(take2d, x)), X34),
        case("take dim0 1d", lambda x: x.take(0, ints([1, 1, 0], x)), X234),
        case("mask_where", lambda x, y: x.mask_where(bools(mask, x), y), X34, other),
        case("mask_where wrt value", lambda x, y: x.mask_where(bools(mask, x), y), X34, other, wrt=(1,)),
        case("mask_where wrt self", lambda x, y: x.mask_where(bools(mask, x), y), X34, other, wrt=(0,)),
        case("mask_fill", lambda x: x.mask_fill(bools(mask, x), 0.25), X34),
    ]


test_gradients_match_finite_differences = gradcheck_test(
    view_cases, split_cases, slice_cases, cat_stack_cases, pad_repeat_roll_cases, gather_scatter_cases
)


def test_gather_gradient_counts_each_read() -> None:
    # Independent of finite differences: d sum(gather) / dx counts how often
    # each entry was read.
    idx = np.array([[0, 0, 2], [1, 1, 1]])
    x = Tensor.from_numpy(X34[:2, :3].copy(), AD_DEVICE).require_grad()
    g = x.grad(x.gather(1, ints(idx, x)).sum().backward())
    assert g is not None
    np.testing.assert_array_equal(g.to_numpy(), [[2.0, 0.0, 1.0], [0.0, 3.0, 0.0]])
