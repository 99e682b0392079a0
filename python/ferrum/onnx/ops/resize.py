"""Resize (and the older Upsample): nearest, linear and cubic interpolation over any axes.

Each resized axis is separable: nearest gathers source indices (exact for
every type), linear and cubic multiply by an ``[in, out]`` interpolation
matrix along the axis. Source coordinates follow ONNX's
``coordinate_transformation_mode`` formulas, computed with NumPy from the
static shapes.
"""

from __future__ import annotations

import math
from typing import Any, Literal, cast

import numpy as np

from ferrum._ferrum import Float, KindError, Tensor
from ferrum.onnx.ops._util import AnyTensor, ints, same_kind
from ferrum.onnx.ops._util import axis as dim_of
from ferrum.onnx.ops.registry import op

__all__ = ["grid_sample", "resize", "resize_v10", "upsample"]


def _floats(value: Any) -> list[float] | None:
    if value is None:
        return None
    array = value.to_numpy() if isinstance(value, Tensor) else np.asarray(value)
    flat = [float(v) for v in np.asarray(array).reshape(-1)]
    return flat or None


def _source(
    out_len: int, in_len: int, scale: float, mode: str, roi: tuple[float, float]
) -> np.ndarray[Any, Any]:
    x = np.arange(out_len, dtype=np.float64)
    if mode == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        adjustment = out_len / (scale * in_len)
        offset = in_len / 2 * (1 - adjustment)
        return offset + (x + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (x + 0.5) / scale - 0.5 if out_len > 1 else np.zeros_like(x)
    if mode == "align_corners":
        # ONNX's reference divides by the unrounded output length (scale * in_len), not the size made
        # of it: they differ when the scale does not land on an integer (downsample by 0.6).
        width = scale * in_len
        return x * (in_len - 1) / (width - 1) if width != 1 else np.zeros_like(x)
    if mode == "asymmetric":
        return x / scale
    if mode == "tf_crop_and_resize":
        start, end = roi
        if out_len > 1:
            return start * (in_len - 1) + x * (end - start) * (in_len - 1) / (out_len - 1)
        return np.full_like(x, 0.5 * (start + end) * (in_len - 1))
    raise ValueError(f"Resize coordinate_transformation_mode {mode!r} is not supported")


def _nearest(src: np.ndarray[Any, Any], in_len: int, nearest_mode: str) -> np.ndarray[Any, Any]:
    if nearest_mode == "round_prefer_floor":
        index = np.ceil(src - 0.5)
    elif nearest_mode == "round_prefer_ceil":
        index = np.floor(src + 0.5)
    elif nearest_mode == "floor":
        index = np.floor(src)
    elif nearest_mode == "ceil":
        index = np.ceil(src)
    else:
        raise ValueError(f"Resize nearest_mode {nearest_mode!r} is not supported")
    return np.clip(index, 0, in_len - 1).astype(np.int64)


def _weights(
    src: np.ndarray[Any, Any], in_len: int, mode: str, a: float, exclude_outside: bool
) -> np.ndarray[Any, Any]:
    """The ``[in_len, out_len]`` matrix of interpolation weights (edge values repeat outside)."""
    base = np.floor(src)
    t = src - base
    if mode == "linear":
        taps, coeffs = [0, 1], [1 - t, t]
    else:
        taps = [-1, 0, 1, 2]
        coeffs = [
            ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a,
            ((a + 2) * t - (a + 3)) * t * t + 1,
            ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1,
            ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a,
        ]
    w = np.zeros((in_len, len(src)), np.float64)
    cols = np.arange(len(src))
    inside_total = np.zeros(len(src))
    for tap, c in zip(taps, coeffs, strict=True):
        index = base + tap
        inside = (index >= 0) & (index <= in_len - 1)
        weight = np.where(inside, c, 0.0) if exclude_outside else c
        np.add.at(w, (np.clip(index, 0, in_len - 1).astype(np.int64), cols), weight)
        inside_total += weight
    if exclude_outside:
        w /= np.where(inside_total == 0, 1.0, inside_total)
    return w


def _antialias_weights(
    src: np.ndarray[Any, Any], in_len: int, mode: str, a: float, exclude_outside: bool, scale: float
) -> np.ndarray[Any, Any]:
    """The ``[in_len, out_len]`` weights of an antialiased resize: the kernel stretched by ``1 / scale``.

    Downsampling by ``scale < 1`` widens the linear (triangle) or cubic kernel to cover every input
    sample that falls in an output sample's footprint, normalised to sum 1 (ONNX's reference, as
    Pillow and TensorFlow's ``antialias``); upsampling uses the plain kernel.
    """
    s = min(scale, 1.0)
    base = np.floor(src)
    # An exact integer coordinate takes the pixel on its left with ratio 1 (the reference's choice).
    ratio = np.where(src == base, 1.0, src - base)
    start = int(np.floor((-1.0 if mode == "linear" else -2.0) / s) + 1)
    n = 2 - 2 * start
    args = np.abs(s * (np.arange(start, start + n)[None, :] - ratio[:, None]))
    if mode == "linear":
        coeffs = np.clip(1 - args, 0, 1)
    else:
        near = (a + 2) * args**3 - (a + 3) * args**2 + 1
        far = a * args**3 - 5 * a * args**2 + 8 * a * args - 4 * a
        coeffs = np.where(args <= 1, near, np.where(args < 2, far, 0.0))
    coeffs = coeffs / coeffs.sum(axis=1, keepdims=True)
    # Tap i of the window sits at floor(src) + i (src - 1 + i at an exact integer).
    index = np.where(src == base, src - 1, base)[:, None] + np.arange(start, start + n)[None, :]
    if exclude_outside:
        coeffs = np.where((index < 0) | (index > in_len - 1), 0.0, coeffs)
        total = coeffs.sum(axis=1, keepdims=True)
        coeffs = coeffs / np.where(total == 0, 1.0, total)
    w = np.zeros((in_len, len(src)), np.float64)
    cols = np.broadcast_to(np.arange(len(src))[:, None], index.shape)
    np.add.at(w, (np.clip(index, 0, in_len - 1).astype(np.int64), cols), coeffs)
    return w


def _along(x: AnyTensor, axis: int, matrix: np.ndarray[Any, Any]) -> AnyTensor:
    rank = x.rank()
    order = [d for d in range(rank) if d != axis] + [axis]
    moved = x.permute(order) if axis != rank - 1 else x
    dims = tuple(moved.dims())
    flat = moved.reshape((-1, dims[-1]))
    w = Tensor.from_numpy(matrix.astype(np.float32), x.device()).cast(flat.dtype)
    out = (flat @ w).reshape((*dims[:-1], matrix.shape[1]))
    if axis == rank - 1:
        return out
    inverse = [order.index(d) for d in range(rank)]
    return out.permute(inverse)


@op("Resize", static=(None, "roi", "scales", "sizes"), since=11)
def resize(
    x: AnyTensor,
    roi: Any = None,
    scales: Any = None,
    sizes: Any = None,
    antialias: int = 0,
    axes: tuple[int, ...] | None = None,
    coordinate_transformation_mode: str = "half_pixel",
    cubic_coeff_a: float = -0.75,
    exclude_outside: int = 0,
    extrapolation_value: float = 0.0,
    keep_aspect_ratio_policy: str = "stretch",
    mode: str = "nearest",
    nearest_mode: str = "round_prefer_floor",
) -> AnyTensor:
    """``x`` resized to ``sizes`` or by ``scales`` over ``axes`` (all by default).

    ``antialias=1`` widens the linear or cubic kernel when downsampling (see
    ``_antialias_weights``); it does not change ``nearest``.
    """
    if mode not in ("nearest", "linear", "cubic"):
        raise ValueError(f"Resize mode must be nearest, linear or cubic, found {mode!r}")
    rank = x.rank()
    axes_l = [dim_of(a, rank) for a in (axes or range(rank))]
    in_dims = list(x.dims())
    scale_l = _floats(scales)
    size_l = ints(sizes) if sizes is not None and (not isinstance(sizes, tuple) or sizes) else None
    if size_l:
        if keep_aspect_ratio_policy != "stretch":
            ratios = [size_l[i] / in_dims[a] for i, a in enumerate(axes_l)]
            r = min(ratios) if keep_aspect_ratio_policy == "not_larger" else max(ratios)
            size_l = [math.floor(r * in_dims[a] + 0.5) for a in axes_l]
            scale_l = [r] * len(axes_l)
        else:
            scale_l = [size_l[i] / in_dims[a] for i, a in enumerate(axes_l)]
    elif scale_l:
        size_l = [math.floor(in_dims[a] * scale_l[i]) for i, a in enumerate(axes_l)]
    else:
        raise ValueError("Resize needs scales or sizes")
    roi_l = _floats(roi) or []
    out = x
    valid: list[tuple[int, np.ndarray[Any, Any]]] = []
    for i, a in enumerate(axes_l):
        in_len, out_len, scale = in_dims[a], size_l[i], scale_l[i]
        if in_len == out_len and coordinate_transformation_mode != "tf_crop_and_resize" and scale == 1.0:
            continue
        box = (roi_l[i], roi_l[i + len(axes_l)]) if len(roi_l) == 2 * len(axes_l) else (0.0, 1.0)
        src = _source(out_len, in_len, scale, coordinate_transformation_mode, box)
        if coordinate_transformation_mode == "tf_crop_and_resize":
            valid.append((a, (src >= 0) & (src <= in_len - 1)))
        if mode == "nearest":
            index = Tensor.from_numpy(_nearest(src, in_len, nearest_mode), x.device())
            out = out.take(a, index)
        else:
            if antialias:
                matrix = _antialias_weights(src, in_len, mode, cubic_coeff_a, bool(exclude_outside), scale)
            else:
                matrix = _weights(src, in_len, mode, cubic_coeff_a, bool(exclude_outside))
            out = same_kind(_along(out if out.kind is Float else out.float(), a, matrix), x)
    if valid:
        keep = np.ones(tuple(out.dims()), dtype=bool)
        for a, inside in valid:
            shape = [1] * rank
            shape[a] = len(inside)
            keep = keep & inside.reshape(shape)
        out = out.mask_fill(Tensor.from_numpy(~keep, x.device()), extrapolation_value)
    return out


@op("Resize", static=(None, "scales"), since=10)
def resize_v10(x: AnyTensor, scales: Any = None, mode: str = "nearest") -> AnyTensor:
    """Resize before opset 11: scales only, asymmetric coordinates, nearest rounding down."""
    return resize(
        x,
        None,
        scales,
        None,
        coordinate_transformation_mode="asymmetric",
        mode=_linear(mode),
        nearest_mode="floor",
    )


def _linear(mode: str) -> str:
    return "linear" if mode in ("linear", "bilinear") else mode


@op("Upsample", static=(None, "scales"))
def upsample(x: AnyTensor, scales: Any = None, mode: str = "nearest") -> AnyTensor:
    """Upsample (deprecated in favour of Resize): scales as an attribute (opset 7-8) or an input (9)."""
    return resize_v10(x, scales, mode)


def _reflect(v: np.ndarray[Any, Any], lo: float, hi: float) -> np.ndarray[Any, Any]:
    """``v`` folded back into ``[lo, hi]`` by reflecting at the borders (PyTorch's and ONNX's rule)."""
    span = hi - lo
    if span <= 0:
        return np.full_like(v, lo)
    below, above = lo - v, v - hi
    dx = np.where(v < lo, below, above)
    n = np.trunc(dx / span)
    r = dx - n * span
    even = n % 2 == 0
    low_side = np.where(even, lo + r, hi - r)
    high_side = np.where(even, hi - r, lo + r)
    return np.where(v < lo, low_side, np.where(v > hi, high_side, v)).astype(v.dtype)


def _cubic(t: np.ndarray[Any, Any]) -> list[np.ndarray[Any, Any]]:
    a = -0.75
    return [
        ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a,
        ((a + 2) * t - (a + 3)) * t * t + 1,
        ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1,
        ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a,
    ]


def _grid_taps(
    g: np.ndarray[Any, Any], size: int, mode: str, padding: str, align: bool
) -> list[tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]]:
    """For one spatial dim: each tap's ``(index, weight)`` arrays over the grid's points."""
    x = (g + 1) / 2 * (size - 1) if align else ((g + 1) * size - 1) / 2
    lo, hi = (0.0, size - 1.0) if align else (-0.5, size - 0.5)
    if mode == "nearest":
        x = np.rint(x)  # half to even, as PyTorch
    if padding == "border":
        x = np.where((x < lo) | (x > hi), np.clip(x, 0, size - 1), x)
    elif padding == "reflection":
        x = _reflect(x, lo, hi)
    if mode == "nearest":
        taps = [(np.trunc(x), np.ones_like(x))]
    else:
        base = np.floor(x)
        t = x - base
        offsets = [0, 1] if mode == "linear" else [-1, 0, 1, 2]
        weights = [1 - t, t] if mode == "linear" else _cubic(t)
        taps = [(base + o, w) for o, w in zip(offsets, weights, strict=True)]
    found = []
    for index, weight in taps:
        # Taps outside the image read 0 (zeros), the edge (border) or their mirror (reflection).
        if padding == "zeros":
            weight = np.where((index >= 0) & (index <= size - 1), weight, 0)
        elif padding == "reflection":
            index = np.trunc(_reflect(index, lo, hi))
        found.append((np.clip(index, 0, size - 1).astype(np.int64), weight))
    return found


def _grid_sample_nd(x: AnyTensor, grid: AnyTensor, mode: str, padding: str, align: bool) -> AnyTensor:
    """GridSample over any number of spatial dims: per-dim taps in NumPy, one gather from ``x``."""
    n, c, *spatial = (int(d) for d in x.dims())
    points = tuple(int(d) for d in grid.dims()[1:-1])
    g = np.asarray(grid.to_numpy()).reshape(n, -1, len(spatial))
    flat_index = np.zeros((1, n, g.shape[1]), np.int64)
    flat_weight = np.ones((1, n, g.shape[1]), g.dtype)
    for d, size in enumerate(spatial):
        # The grid's last dim lists coordinates innermost dim first: (x, y[, z]) for [.., (d,) h, w].
        taps = _grid_taps(g[..., len(spatial) - 1 - d], size, mode, padding, align)
        flat_index = np.concatenate([flat_index * size + i for i, _ in taps])
        flat_weight = np.concatenate([flat_weight * w for _, w in taps])
    taps_n = flat_index.shape[0]
    index = np.ascontiguousarray(flat_index.transpose(1, 0, 2).reshape(n, 1, -1))
    weight = np.ascontiguousarray(flat_weight.transpose(1, 0, 2).reshape(n, 1, -1))
    source = x.reshape((n, c, -1))
    picked = source.gather(2, Tensor.from_numpy(index, x.device()).expand((n, c, index.shape[2])))
    weighted = picked * Tensor.from_numpy(weight.astype(np.float64), x.device(), dtype=x.dtype)
    return weighted.reshape((n, c, taps_n, -1)).sum_dim(2).reshape((n, c, *points))


@op("GridSample")
def grid_sample(
    x: AnyTensor, grid: AnyTensor, align_corners: int = 0, mode: str = "linear", padding_mode: str = "zeros"
) -> AnyTensor:
    """GridSample: samples of ``[n, c, *spatial]`` at the ``[n, *out, k]`` grid's points in [-1, 1].

    The grid lists each point's coordinates innermost dim first (``x, y`` for
    a 2-d image, ``x, y, z`` for a volume). ``mode`` is ``linear`` (``bilinear``
    before opset 20), ``nearest`` (rounding half to even, as PyTorch) or
    ``cubic`` (``bicubic``; Keys' kernel with ``a = -0.75``); ``padding_mode``
    what points outside read (``zeros``, ``border`` or ``reflection``).
    Bilinear 2-d sampling runs in the engine (differentiable in ``x`` and the
    grid); the other modes and volumes compute taps and weights from the grid's
    values in NumPy and gather from ``x`` with engine ops (differentiable in
    ``x`` only).
    """
    # opset 16 spells linear and cubic "bilinear" and "bicubic"
    modes = {"bilinear": "linear", "bicubic": "cubic", "linear": "linear", "cubic": "cubic"}
    modes["nearest"] = "nearest"
    if mode not in modes:
        raise ValueError(f"GridSample mode must be linear, nearest or cubic, found {mode!r}")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(
            f"GridSample padding_mode must be zeros, border or reflection, found {padding_mode!r}"
        )
    fits = grid.rank() == x.rank() and grid.dims()[-1] == x.rank() - 2 and grid.dims()[0] == x.dims()[0]
    if x.rank() < 3 or not fits:
        raise ValueError(
            f"GridSample: expected x [n, c, *spatial] and grid [n, *out, {max(x.rank() - 2, 1)}], "
            f"found {list(x.dims())} and {list(grid.dims())}"
        )
    if x.kind is not Float:
        raise KindError(f"GridSample: x must be a float tensor, found {x.kind.__name__}")
    if modes[mode] == "linear" and x.rank() == 4:
        padding = cast(Literal["zeros", "border", "reflection"], padding_mode)
        return x.grid_sample_2d(grid, "bilinear", padding, bool(align_corners))
    return _grid_sample_nd(x, grid, modes[mode], padding_mode, bool(align_corners))
