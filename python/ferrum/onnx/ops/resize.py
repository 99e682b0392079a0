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

from ferrum._ferrum import Float, Tensor
from ferrum.onnx.ops._util import AnyTensor, ints, same_kind
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
        return x * (in_len - 1) / (out_len - 1) if out_len > 1 else np.zeros_like(x)
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
    """``x`` resized to ``sizes`` or by ``scales`` over ``axes`` (all by default)."""
    if antialias:
        raise ValueError("Resize antialias=1 is not supported")
    if mode not in ("nearest", "linear", "cubic"):
        raise ValueError(f"Resize mode must be nearest, linear or cubic, found {mode!r}")
    rank = x.rank()
    axes_l = [a + rank if a < 0 else a for a in (axes or range(rank))]
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


@op("GridSample")
def grid_sample(
    x: AnyTensor, grid: AnyTensor, align_corners: int = 0, mode: str = "linear", padding_mode: str = "zeros"
) -> AnyTensor:
    """Bilinear samples of ``[n, c, h, w]`` at the ``[n, h_out, w_out, 2]`` grid's (x, y) in [-1, 1]."""
    if mode not in ("linear", "bilinear"):
        raise ValueError(f"GridSample mode {mode!r} is not supported (linear only)")
    if x.rank() != 4:
        raise ValueError(f"GridSample over {x.rank() - 2} spatial dims is not supported (2 only)")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(
            f"GridSample padding_mode must be zeros, border or reflection, found {padding_mode!r}"
        )
    padding = cast(Literal["zeros", "border", "reflection"], padding_mode)
    return x.grid_sample_2d(grid, "bilinear", padding, bool(align_corners))
