"""ferrum.functional (Burn's ``burn::tensor::module`` ops) against NumPy references written
here, with gradients checked by central finite differences (tests/support/gradcheck.py)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from ferrum import ArgumentError, ShapeError, Tensor
from ferrum import functional as F
from ferrum.backend import NdArray

from tests.support.f64 import f64
from tests.support.gradcheck import case, check_case, distinct, smooth

Array = npt.NDArray[Any]
DEVICE = NdArray.device()
FEW_LAYOUTS = ("contiguous", "transposed")


def np_conv3d(x: Array, w: Array, b: Array | None, stride: Any, pad: Any, dil: Any, groups: int) -> Array:
    """A sum over kernel taps of strided slices of the zero-padded input."""
    n = x.shape[0]
    o, cg, *k = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), *((p, p) for p in pad)))
    size = [(xp.shape[2 + i] - dil[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(3)]
    out = np.zeros((n, o, *size))
    og = o // groups
    for g in range(groups):
        xs = xp[:, g * cg : (g + 1) * cg]
        ws = w[g * og : (g + 1) * og]
        for a in range(k[0]):
            for bb in range(k[1]):
                for cc in range(k[2]):
                    s = [a * dil[0], bb * dil[1], cc * dil[2]]
                    patch = xs[
                        :,
                        :,
                        s[0] : s[0] + stride[0] * size[0] : stride[0],
                        s[1] : s[1] + stride[1] * size[1] : stride[1],
                        s[2] : s[2] + stride[2] * size[2] : stride[2],
                    ]
                    out[:, g * og : (g + 1) * og] += np.einsum("ncdhw,oc->nodhw", patch, ws[:, :, a, bb, cc])
    if b is not None:
        out += b.reshape(1, -1, 1, 1, 1)
    return out


def test_conv3d_matches_numpy() -> None:
    x, w, b = (
        smooth((2, 4, 5, 6, 5), seed="c3x"),
        smooth((6, 2, 3, 2, 3), seed="c3w"),
        smooth((6,), seed="c3b"),
    )
    args = ((2, 1, 1), (1, 0, 2), (1, 2, 1), 2)
    got = F.conv3d(f64(x), f64(w), f64(b), *args).to_numpy()
    np.testing.assert_allclose(got, np_conv3d(x, w, b, *args), rtol=1e-10, atol=1e-12)


def test_conv_transpose3d_is_the_adjoint_of_conv3d() -> None:
    # <conv(x, w), y> == <x, conv_transpose(y, w)> for every x, y: the transposed
    # convolution is the convolution's adjoint in its input.
    x, w = smooth((1, 4, 5, 6, 5), seed="t3x"), smooth((6, 2, 3, 2, 3), seed="t3w")
    stride, pad, dil = (2, 1, 2), (1, 0, 1), (1, 2, 1)
    y = np_conv3d(x, w, None, stride, pad, dil, 2)
    probe = smooth(y.shape, seed="t3y")
    # Weight [c_in(of the transpose)=6, c_out/groups=2, ...]: the convolution's weight as it is.
    out_pad = tuple(
        (x.shape[2 + i] + 2 * pad[i] - dil[i] * (w.shape[2 + i] - 1) - 1) % stride[i] for i in range(3)
    )
    back = F.conv_transpose3d(f64(probe), f64(w), None, stride, pad, out_pad, dil, 2).to_numpy()
    assert back.shape == x.shape
    np.testing.assert_allclose((y * probe).sum(), (x * back).sum(), rtol=1e-10)
    bias = smooth((4,), seed="t3b")
    with_bias = F.conv_transpose3d(f64(probe), f64(w), f64(bias), stride, pad, out_pad, dil, 2).to_numpy()
    np.testing.assert_allclose(with_bias - back, np.broadcast_to(bias.reshape(1, 4, 1, 1, 1), back.shape))


def _bilinear(img: Array, y: float, x: float) -> float:
    h, w = img.shape
    if y <= -1 or y >= h or x <= -1 or x >= w:
        return 0.0
    y0, x0 = math.floor(y), math.floor(x)
    total = 0.0
    for yy, wy in ((y0, 1 - (y - y0)), (y0 + 1, y - y0)):
        for xx, wx in ((x0, 1 - (x - x0)), (x0 + 1, x - x0)):
            if 0 <= yy < h and 0 <= xx < w:
                total += wy * wx * img[yy, xx]
    return total


def np_deform_conv2d(
    x: Array,
    off: Array,
    w: Array,
    mask: Array | None,
    b: Array | None,
    stride: Any,
    pad: Any,
    dil: Any,
    wg: int,
    og: int,
) -> Array:
    """torchvision's deformable convolution v2, one output element at a time."""
    n, c = x.shape[:2]
    o, cg, kh, kw = w.shape
    oh, ow = off.shape[2:]
    out = np.zeros((n, o, oh, ow))
    for bi in range(n):
        for oc in range(o):
            g = oc // (o // wg)
            for oy in range(oh):
                for ox in range(ow):
                    acc = 0.0
                    for ic in range(cg):
                        ch = g * cg + ic
                        ogi = ch // (c // og)
                        for ky in range(kh):
                            for kx in range(kw):
                                k = ky * kw + kx
                                dy = off[bi, ogi * 2 * kh * kw + 2 * k, oy, ox]
                                dx = off[bi, ogi * 2 * kh * kw + 2 * k + 1, oy, ox]
                                py = oy * stride[0] - pad[0] + ky * dil[0] + dy
                                px = ox * stride[1] - pad[1] + kx * dil[1] + dx
                                m = 1.0 if mask is None else mask[bi, ogi * kh * kw + k, oy, ox]
                                acc += w[oc, ic, ky, kx] * m * _bilinear(x[bi, ch], py, px)
                    out[bi, oc, oy, ox] = acc + (0.0 if b is None else b[oc])
    return out


def test_deform_conv2d_matches_numpy() -> None:
    x, w, b = smooth((2, 4, 5, 6), seed="dx"), smooth((4, 2, 3, 2), seed="dw"), smooth((4,), seed="db")
    stride, pad, dil = (1, 2), (1, 0), (1, 2)
    oh, ow = 5, 2
    off = smooth((2, 2 * 2 * 6, oh, ow), -1.7, 1.7, seed="doff")
    mask = smooth((2, 2 * 6, oh, ow), 0.0, 1.0, seed="dmask")
    got = F.deform_conv2d(f64(x), f64(off), f64(w), f64(mask), f64(b), stride, pad, dil, 2, 2).to_numpy()
    np.testing.assert_allclose(got, np_deform_conv2d(x, off, w, mask, b, stride, pad, dil, 2, 2), atol=1e-12)
    # Zero offsets and no mask: a plain convolution.
    zero = np.zeros((2, 12, 5, 2))
    got = F.deform_conv2d(f64(x), f64(zero), f64(w), None, None, stride, pad, dil, 2, 1).to_numpy()
    plain = F.conv2d(f64(x), f64(w), None, stride, pad, dil, 2).to_numpy()
    np.testing.assert_allclose(got, plain, atol=1e-12)


def test_deform_conv2d_rejects_offsets_of_the_wrong_shape() -> None:
    x, w = f64(np.ones((1, 2, 4, 4))), f64(np.ones((3, 2, 3, 3)))
    with pytest.raises(ShapeError):
        F.deform_conv2d(x, f64(np.zeros((1, 17, 2, 2))), w)


def np_resize_linear(a: Array, size: tuple[int, int]) -> Array:
    """Corner-aligned linear resize along the last two axes."""
    for axis, out in ((2, size[0]), (3, size[1])):
        n = a.shape[axis]
        pos = np.arange(out) * ((n - 1) / (out - 1) if out > 1 else 0.0)
        lo = np.floor(pos).astype(int)
        hi = np.minimum(lo + 1, n - 1)
        t = pos - lo
        shape = [1, 1, 1, 1]
        shape[axis] = out
        a = np.take(a, lo, axis=axis) * (1 - t).reshape(shape) + np.take(a, hi, axis=axis) * t.reshape(shape)
    return a


@pytest.mark.parametrize("size", [(7, 3), (2, 9), (1, 1)])
def test_interpolate_nearest_and_bilinear_match_numpy(size: tuple[int, int]) -> None:
    x = smooth((2, 3, 4, 5), seed="interp")
    got = F.interpolate(f64(x), size, F.InterpolateMode.Nearest).to_numpy()
    rows = np.floor(np.arange(size[0]) * 4 / size[0]).astype(int)
    cols = np.floor(np.arange(size[1]) * 5 / size[1]).astype(int)
    np.testing.assert_array_equal(got, x[:, :, rows][:, :, :, cols])
    got = F.interpolate(f64(x), size, F.InterpolateMode.Bilinear).to_numpy()
    np.testing.assert_allclose(got, np_resize_linear(x, size), atol=1e-12)


def test_interpolate_bicubic_keeps_linear_ramps() -> None:
    # Cubic convolution (a = -0.75) reproduces a linear ramp exactly away from the border
    # and, with corners aligned, keeps the corner values.
    ramp = np.arange(8.0).reshape(1, 1, 1, 8) * np.ones((1, 1, 3, 1))
    got = F.interpolate(f64(ramp), (3, 15), F.InterpolateMode.Bicubic).to_numpy()
    np.testing.assert_allclose(got[0, 0, 1, 2:-2], np.linspace(0.0, 7.0, 15)[2:-2], atol=1e-12)
    assert got[0, 0, 0, 0] == 0.0 and got[0, 0, 0, -1] == 7.0


@pytest.mark.parametrize(
    ("name", "mode"),
    [
        ("nearest", F.InterpolateMode.Nearest),
        ("bilinear", F.InterpolateMode.Bilinear),
        ("bicubic", F.InterpolateMode.Bicubic),
    ],
)
def test_interpolate_takes_pytorchs_mode_names(name: F.InterpolateModeName, mode: F.InterpolateMode) -> None:
    x = f64(smooth((2, 3, 4, 5), seed="names"))
    np.testing.assert_array_equal(
        F.interpolate(x, (6, 3), name).to_numpy(), F.interpolate(x, (6, 3), mode).to_numpy()
    )


def test_interpolate_refuses_other_modes() -> None:
    x = f64(np.ones((1, 1, 2, 2)))
    for wrong in ("Bilinear", "linear", "area", ""):
        with pytest.raises(ArgumentError, match="'nearest', 'bilinear', 'bicubic'") as info:
            F.interpolate(x, (3, 3), wrong)  # type: ignore[arg-type]
        assert repr(wrong) in str(info.value)
    with pytest.raises(TypeError, match="InterpolateMode"):
        F.interpolate(x, (3, 3), 1)  # type: ignore[arg-type]


def np_unfold4d(x: Array, k: Any, stride: Any, pad: Any, dil: Any) -> Array:
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    oh = (h + 2 * pad[0] - dil[0] * (k[0] - 1) - 1) // stride[0] + 1
    ow = (w + 2 * pad[1] - dil[1] * (k[1] - 1) - 1) // stride[1] + 1
    out = np.zeros((n, c, k[0], k[1], oh, ow))
    for a in range(k[0]):
        for b in range(k[1]):
            out[:, :, a, b] = xp[:, :, a * dil[0] :: stride[0], b * dil[1] :: stride[1]][:, :, :oh, :ow]
    return out.reshape(n, c * k[0] * k[1], oh * ow)


def test_unfold4d_matches_numpy() -> None:
    x = smooth((2, 3, 6, 7), seed="unfold")
    args = ((2, 3), (2, 1), (1, 0), (1, 2))
    np.testing.assert_array_equal(F.unfold4d(f64(x), *args).to_numpy(), np_unfold4d(x, *args))


def test_attention_matches_numpy_softmax() -> None:
    q, k, v = (
        smooth((2, 3, 4, 5), seed="aq"),
        smooth((2, 3, 6, 5), seed="ak"),
        smooth((2, 3, 6, 5), seed="av"),
    )
    mask = np.zeros((2, 1, 4, 6), dtype=bool)
    mask[0, 0, :, 4:] = True
    scores = np.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(5)
    scores = np.where(mask, -np.inf, scores)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    got = F.attention(f64(q), f64(k), f64(v), Tensor.from_numpy(mask, DEVICE)).to_numpy()
    np.testing.assert_allclose(got, weights @ v, atol=1e-12)
    with pytest.raises(ShapeError, match="attention: expected query"):
        F.attention(f64(q), f64(k[:, :, :, :4]), f64(v))


def test_linear_and_embedding() -> None:
    x, w, b = smooth((2, 3, 4), seed="lx"), smooth((4, 5), seed="lw"), smooth((5,), seed="lb")
    np.testing.assert_allclose(F.linear(f64(x), f64(w), f64(b)).to_numpy(), x @ w + b, atol=1e-12)
    with pytest.raises(ShapeError, match=r"linear: expected an input \[\.\.\., 4\]"):
        F.linear(f64(w), f64(w))
    idx = np.array([[2, 0], [1, 1]])
    got = F.embedding(f64(w), Tensor.from_numpy(idx, DEVICE)).to_numpy()
    np.testing.assert_array_equal(got, w[idx])


def test_max_pool_with_indices_point_at_the_maxima() -> None:
    x = distinct((2, 3, 5, 6), seed="pool")
    out, idx = F.max_pool2d_with_indices(f64(x), (2, 3), (2, 2), (1, 1), (1, 1), False)
    flat = x.reshape(2, 3, 30)
    np.testing.assert_array_equal(
        np.take_along_axis(flat, idx.to_numpy().reshape(2, 3, -1), 2).reshape(out.dims()), out.to_numpy()
    )
    np.testing.assert_array_equal(
        out.to_numpy(), F.max_pool2d(f64(x), (2, 3), (2, 2), (1, 1), (1, 1), False).to_numpy()
    )
    x1 = distinct((2, 3, 9), seed="pool1")
    out1, idx1 = F.max_pool1d_with_indices(f64(x1), 3, 2, 1, 1, False)
    np.testing.assert_array_equal(np.take_along_axis(x1, idx1.to_numpy(), 2), out1.to_numpy())


GRADIENTS = [
    case(
        "conv3d",
        lambda x, w, b: F.conv3d(x, w, b, (2, 1, 1), (1, 0, 1), (1, 1, 2), 2),
        smooth((1, 4, 4, 3, 5), seed="g3x"),
        smooth((2, 2, 2, 2, 2), seed="g3w"),
        smooth((2,), seed="g3b"),
        layouts=FEW_LAYOUTS,
    ),
    case(
        "conv_transpose3d",
        lambda x, w, b: F.conv_transpose3d(x, w, b, (2, 1, 2), (1, 0, 0), (1, 0, 0), (1, 2, 1), 1),
        smooth((1, 2, 3, 2, 3), seed="gt3x"),
        smooth((2, 2, 2, 2, 2), seed="gt3w"),
        smooth((2,), seed="gt3b"),
        layouts=FEW_LAYOUTS,
    ),
    case(
        "deform_conv2d",
        lambda x, o, w, m, b: F.deform_conv2d(x, o, w, m, b, (1, 1), (1, 0), (1, 1), 1, 2),
        smooth((1, 2, 4, 4), seed="gdx"),
        # Offsets away from integers: bilinear sampling is not differentiable at grid points.
        smooth((1, 2 * 2 * 4, 5, 3), 0.1, 0.4, seed="gdo"),
        smooth((2, 2, 2, 2), seed="gdw"),
        smooth((1, 2 * 4, 5, 3), 0.2, 1.0, seed="gdm"),
        smooth((2,), seed="gdb"),
        layouts=("contiguous",),
    ),
    case(
        "interpolate_bilinear",
        lambda x: F.interpolate(x, (5, 3), F.InterpolateMode.Bilinear),
        smooth((1, 2, 3, 4), seed="gib"),
        layouts=FEW_LAYOUTS,
    ),
    case(
        "interpolate_bicubic",
        lambda x: F.interpolate(x, (4, 7), F.InterpolateMode.Bicubic),
        smooth((1, 2, 3, 4), seed="gic"),
        layouts=FEW_LAYOUTS,
    ),
    case(
        "interpolate_nearest",
        lambda x: F.interpolate(x, (5, 2), F.InterpolateMode.Nearest),
        smooth((1, 2, 3, 4), seed="gin"),
        layouts=FEW_LAYOUTS,
    ),
    case(
        "unfold4d",
        lambda x: F.unfold4d(x, (2, 2), (1, 2), (1, 0), (2, 1)),
        smooth((1, 2, 5, 5), seed="gu"),
        layouts=FEW_LAYOUTS,
    ),
    case(
        "attention",
        lambda q, k, v: F.attention(q, k, v),
        smooth((1, 2, 3, 4), seed="gaq"),
        smooth((1, 2, 5, 4), seed="gak"),
        smooth((1, 2, 5, 4), seed="gav"),
        layouts=FEW_LAYOUTS,
    ),
]


@pytest.mark.parametrize("c", GRADIENTS, ids=lambda c: c.name)
def test_gradients_match_finite_differences(c: Any) -> None:
    check_case(c)
