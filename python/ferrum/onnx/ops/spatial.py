"""Spatial ops: AffineGrid, CenterCropPad, Col2Im, DeformConv, MaxUnpool, RoiAlign, MaxRoiPool.

Where an op moves values to positions that depend only on shapes and attributes (Col2Im,
MaxUnpool) or on small index inputs (RoiAlign, MaxRoiPool), the positions are worked out with NumPy
and the values moved with ferrum's gather/scatter, so the data stays on its device.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import ferrum._ferrum as _ferrum
from ferrum._ferrum import Float, PadMode, Tensor
from ferrum.onnx.ops._util import AnyTensor, IntArg, axis, check_size, ints
from ferrum.onnx.ops.registry import op

__all__ = [
    "affine_grid",
    "center_crop_pad",
    "col2im",
    "deform_conv",
    "max_roi_pool",
    "max_unpool",
    "roi_align",
]


def _ramp(size: int, align_corners: int) -> np.ndarray[Any, Any]:
    """The normalized ``[-1, 1]`` coordinates of ``size`` samples (pixel centres or corners)."""
    if align_corners:
        return np.linspace(-1.0, 1.0, size) if size > 1 else np.zeros(size)
    return (2.0 * np.arange(size) + 1.0) / size - 1.0


@op("AffineGrid", static=(None, "size"), since=20)
def affine_grid(theta: AnyTensor, size: IntArg = None, align_corners: int = 0) -> AnyTensor:
    """The sampling grid of ``theta`` (``[N, 2, 3]`` or ``[N, 3, 4]``) over ``size`` (``[N, C, H, W]``
    or ``[N, C, D, H, W]``): ``[N, H, W, 2]`` or ``[N, D, H, W, 3]``, coordinates ``(x, y[, z])``."""
    dims = ints(size)
    if dims is None or len(dims) not in (4, 5):
        raise ValueError(f"AffineGrid: size must be [N, C, H, W] or [N, C, D, H, W], found {dims}")
    spatial = check_size(dims[2:], "AffineGrid")
    n = len(spatial)
    if theta.rank() != 3 or tuple(theta.dims()[1:]) != (n, n + 1):
        raise ValueError(
            f"AffineGrid: theta must be [N, {n}, {n + 1}] for size {dims}, found {list(theta.dims())}"
        )
    batch = theta.dims()[0]
    # homogeneous coordinates, the last spatial dim (x) first
    axes = np.meshgrid(*(_ramp(s, align_corners) for s in spatial), indexing="ij")
    base = np.stack([*reversed(axes), np.ones(spatial)], axis=-1).reshape(-1, n + 1)
    points = Tensor.from_numpy(base.astype(np.float64), theta.device()).cast(theta.dtype)
    count = base.shape[0]
    grid = points.reshape((1, count, n + 1)).expand((batch, count, n + 1)) @ theta.swap_dims(1, 2)
    return grid.reshape((batch, *spatial, n))


@op("CenterCropPad", static=(None, "shape"), since=18)
def center_crop_pad(x: AnyTensor, shape: IntArg = None, axes: tuple[int, ...] | None = None) -> AnyTensor:
    """Crop or zero-pad each of ``axes`` (all by default) to ``shape``, keeping the centre (an odd
    difference leaves the extra row at the end)."""
    target = ints(shape)
    rank = x.rank()
    picked = [axis(a, rank) for a in axes] if axes is not None else list(range(rank))
    if target is None or len(target) != len(picked):
        raise ValueError(f"CenterCropPad: shape {target} does not give one size per axis {picked}")
    ranges: list[tuple[int, int]] = [(0, d) for d in x.dims()]
    pads = [(0, 0)] * rank
    for a, want in zip(picked, target, strict=True):
        have = x.dims()[a]
        if want < 0:
            raise ValueError(f"CenterCropPad: negative size {want}")
        if want < have:
            start = (have - want) // 2
            ranges[a] = (start, start + want)
        elif want > have:
            before = (want - have) // 2
            pads[a] = (before, want - have - before)
    check_size([r[1] - r[0] + p[0] + p[1] for r, p in zip(ranges, pads, strict=True)], "CenterCropPad")
    out = x.slice(ranges) if any(r != (0, d) for r, d in zip(ranges, x.dims(), strict=True)) else x
    if any(p != (0, 0) for p in pads):
        flat: list[int] = []
        for before, after in reversed(pads):
            flat += [before, after]
        out = out.pad(flat, PadMode.Constant(0.0)) if out.kind is Float else out.pad(flat, 0)
    return out


def _window_targets(
    image: Sequence[int],
    block: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    pads: list[tuple[int, int]],
) -> tuple[np.ndarray[Any, Any], list[int], list[int]]:
    """For every (kernel offset, block) pair, its flat position in the padded image; the padded
    image's shape and the number of blocks along each dim."""
    padded = [s + b + e for s, (b, e) in zip(image, pads, strict=True)]
    blocks = [
        (p - (d * (k - 1) + 1)) // s + 1 for p, k, d, s in zip(padded, block, dilations, strides, strict=True)
    ]
    if any(b < 1 for b in blocks):
        raise ValueError(f"Col2Im: the blocks {list(block)} do not fit the image {list(image)}")
    kernel_pos = np.meshgrid(
        *(np.arange(k) * d for k, d in zip(block, dilations, strict=True)), indexing="ij"
    )
    block_pos = np.meshgrid(*(np.arange(b) * s for b, s in zip(blocks, strides, strict=True)), indexing="ij")
    flat = np.zeros((math.prod(block), math.prod(blocks)), np.int64)
    for i, size in enumerate(padded):
        coord = kernel_pos[i].reshape(-1, 1) + block_pos[i].reshape(1, -1)
        flat = flat * size + coord
    return flat, padded, blocks


@op("Col2Im", static=(None, "image_shape", "block_shape"), since=18)
def col2im(
    x: AnyTensor,
    image_shape: IntArg = None,
    block_shape: IntArg = None,
    dilations: tuple[int, ...] | None = None,
    pads: tuple[int, ...] | None = None,
    strides: tuple[int, ...] | None = None,
) -> AnyTensor:
    """Sum sliding blocks ``[N, C * prod(block), L]`` back into an image ``[N, C, *image_shape]``
    (the inverse layout of an im2col; overlapping blocks add up)."""
    image, block = ints(image_shape), ints(block_shape)
    if image is None or block is None or len(image) != len(block):
        raise ValueError(f"Col2Im: image_shape {image} and block_shape {block} must have one size per dim")
    n = len(image)
    s = list(strides or [1] * n)
    d = list(dilations or [1] * n)
    p = list(pads or [0] * (2 * n))
    flat, padded, blocks = _window_targets(image, block, s, d, [(p[i], p[i + n]) for i in range(n)])
    batch, width, length = x.dims()
    k = math.prod(block)
    if width % k or length != math.prod(blocks):
        raise ValueError(
            f"Col2Im: input {list(x.dims())} is not [N, C * {k}, {math.prod(blocks)}] for blocks {block} "
            f"over image {image}"
        )
    channels = width // k
    check_size([batch, channels, *padded], "Col2Im")
    index = Tensor.from_numpy(flat.reshape(1, 1, -1), x.device()).expand((batch, channels, k * length))
    zeros = Tensor.zeros((batch, channels, math.prod(padded)), x.device(), dtype=x.dtype)
    out = zeros.scatter(2, index, x.reshape((batch, channels, k * length))).reshape(
        (batch, channels, *padded)
    )
    if any(p):
        out = out.slice([(0, batch), (0, channels), *((p[i], p[i] + image[i]) for i in range(n))])
    return out


@op("MaxUnpool", static=(None, None, "output_shape"), since=9)
def max_unpool(
    x: AnyTensor,
    indices: AnyTensor,
    output_shape: IntArg = None,
    kernel_shape: tuple[int, ...] = (),
    pads: tuple[int, ...] | None = None,
    strides: tuple[int, ...] | None = None,
) -> AnyTensor:
    """Put each value of ``x`` at its flat index (MaxPool's second output) in a zero tensor of the
    pooled input's shape; with ``output_shape``, zero-padded at the end to that shape (as ONNX's
    reference does). An index given twice (overlapping windows) holds its value once."""
    n = len(kernel_shape)
    if n == 0 or x.rank() != n + 2:
        raise ValueError(f"MaxUnpool: kernel_shape {list(kernel_shape)} does not fit a rank-{x.rank()} input")
    s = list(strides or [1] * n)
    p = list(pads or [0] * (2 * n))
    size = [(x.dims()[2 + i] - 1) * s[i] - p[i] - p[i + n] + kernel_shape[i] for i in range(n)]
    inferred = check_size([*x.dims()[:2], *size], "MaxUnpool")
    total = math.prod(inferred)
    if tuple(indices.dims()) != tuple(x.dims()):
        raise ValueError(
            f"MaxUnpool: indices {list(indices.dims())} must have the shape of x {list(x.dims())}"
        )
    found = np.asarray(indices.to_numpy()).reshape(-1).astype(np.int64)
    if found.size and (found.min() < 0 or found.max() >= total):
        raise ValueError(f"MaxUnpool: indices must be in [0, {total}) for the output {list(inferred)}")
    values = x.reshape((-1,))
    # scatter adds: an index given twice (overlapping windows, same maximum) is written once
    unique, first = np.unique(found, return_index=True)
    if unique.size < found.size:
        values = values.take(0, Tensor.from_numpy(first.astype(np.int64), x.device()))
        found = unique
    zeros = Tensor.zeros((total,), x.device(), dtype=x.dtype)
    out = zeros.scatter(0, Tensor.from_numpy(found, x.device()), values).reshape(inferred)
    wanted = ints(output_shape)
    if wanted is not None:
        wanted_t = check_size(wanted, "MaxUnpool")
        if len(wanted_t) != len(inferred) or any(w < i for w, i in zip(wanted_t, inferred, strict=True)):
            raise ValueError(f"MaxUnpool: output_shape {list(wanted_t)} is smaller than {list(inferred)}")
        if wanted_t != inferred:
            flat: list[int] = []
            for w, i in reversed(list(zip(wanted_t, inferred, strict=True))):
                flat += [0, w - i]
            out = out.pad(flat, PadMode.Constant(0.0))
    return out


@op("DeformConv", since=19)
def deform_conv(
    x: AnyTensor,
    weight: AnyTensor,
    offset: AnyTensor,
    bias: AnyTensor | None = None,
    mask: AnyTensor | None = None,
    dilations: tuple[int, ...] | None = None,
    group: int = 1,
    kernel_shape: tuple[int, ...] | None = None,
    offset_group: int = 1,
    pads: tuple[int, ...] | None = None,
    strides: tuple[int, ...] | None = None,
) -> AnyTensor:
    """2-d deformable convolution (ferrum's ``deform_conv2d``): each tap reads ``x`` at its place plus
    its offset ``(dy, dx)`` (``offset [N, offset_group * kh * kw * 2, oh, ow]``) by bilinear
    interpolation, zero outside, scaled by ``mask [N, offset_group * kh * kw, oh, ow]`` if given."""
    if x.rank() != 4:
        raise ValueError(f"DeformConv over {x.rank() - 2} spatial dims is not supported (2 only)")
    kernel = list(kernel_shape or weight.dims()[2:])
    if list(weight.dims()[2:]) != kernel:
        raise ValueError(f"DeformConv: kernel_shape {kernel} does not match the weight {list(weight.dims())}")
    s = list(strides or [1, 1])
    d = list(dilations or [1, 1])
    p = list(pads or [0, 0, 0, 0])
    if (p[0], p[1]) != (p[2], p[3]):
        flat = [p[1], p[3], p[0], p[2]]
        x = x.pad(flat, PadMode.Constant(0.0))
        p = [0, 0, 0, 0]
    out: AnyTensor = _ferrum.deform_conv2d(
        x, offset, weight, mask, bias, (s[0], s[1]), (p[0], p[1]), (d[0], d[1]), group, offset_group
    )
    return out


def _gather_bins(x: AnyTensor, batch_index: np.ndarray[Any, Any], pos: np.ndarray[Any, Any]) -> AnyTensor:
    """``x [N, C, H, W]`` read at flat plane positions ``pos [R, ...]`` of the images ``batch_index
    [R]``: ``[R, C, *pos.shape[1:]]``."""
    n, c, h, w = x.dims()
    if np.any(batch_index < 0) or np.any(batch_index >= n):
        raise ValueError(f"batch indices {batch_index.tolist()} are out of range for a batch of {n}")
    rois = pos.shape[0]
    inner = pos.shape[1:]
    planes = x.reshape((n, c, h * w)).take(0, Tensor.from_numpy(batch_index.astype(np.int64), x.device()))
    flat = Tensor.from_numpy(pos.reshape(rois, 1, -1).astype(np.int64), x.device())
    picked = planes.gather(2, flat.expand((rois, c, flat.dims()[2])))
    return picked.reshape((rois, c, *inner))


def _roi_samples(
    roi: np.ndarray[Any, Any],
    height: int,
    width: int,
    out_h: int,
    out_w: int,
    sampling_ratio: int,
    half_pixel: bool,
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], int]:
    """One RoI's bilinear taps: positions and weights ``[out_h * out_w, samples, 4]``, and the
    samples' count per bin (ONNX's RoiAlign reference, sample by sample)."""
    offset = 0.5 if half_pixel else 0.0
    start_w, start_h, end_w, end_h = (float(v) - offset for v in roi)
    roi_w, roi_h = end_w - start_w, end_h - start_h
    if not half_pixel:
        roi_w, roi_h = max(roi_w, 1.0), max(roi_h, 1.0)
    bin_h, bin_w = roi_h / out_h, roi_w / out_w
    grid_h = sampling_ratio if sampling_ratio > 0 else math.ceil(roi_h / out_h)
    grid_w = sampling_ratio if sampling_ratio > 0 else math.ceil(roi_w / out_w)
    grid_h, grid_w = max(grid_h, 0), max(grid_w, 0)
    ph, pw, iy, ix = np.meshgrid(
        np.arange(out_h), np.arange(out_w), np.arange(grid_h), np.arange(grid_w), indexing="ij"
    )
    y = start_h + ph * bin_h + (iy + 0.5) * bin_h / max(grid_h, 1)
    x = start_w + pw * bin_w + (ix + 0.5) * bin_w / max(grid_w, 1)
    outside = (y < -1.0) | (y > height) | (x < -1.0) | (x > width)
    y, x = np.maximum(y, 0.0), np.maximum(x, 0.0)
    y_low, x_low = y.astype(np.int64), x.astype(np.int64)
    y_top, x_top = y_low >= height - 1, x_low >= width - 1
    y_low, x_low = np.where(y_top, height - 1, y_low), np.where(x_top, width - 1, x_low)
    y_high, x_high = np.where(y_top, y_low, y_low + 1), np.where(x_top, x_low, x_low + 1)
    y, x = np.where(y_top, y_low, y), np.where(x_top, x_low, x)
    ly, lx = y - y_low, x - x_low
    hy, hx = 1.0 - ly, 1.0 - lx
    pos = np.stack(
        [y_low * width + x_low, y_low * width + x_high, y_high * width + x_low, y_high * width + x_high], -1
    )
    weights = np.stack([hy * hx, hy * lx, ly * hx, ly * lx], -1)
    pos = np.where(outside[..., None], 0, pos)
    weights = np.where(outside[..., None], 0.0, weights)
    samples = grid_h * grid_w
    return pos.reshape(out_h * out_w, samples, 4), weights.reshape(out_h * out_w, samples, 4), max(samples, 1)


@op("RoiAlign", since=10)
def roi_align(
    x: AnyTensor,
    rois: AnyTensor,
    batch_indices: AnyTensor,
    coordinate_transformation_mode: str = "half_pixel",
    mode: str = "avg",
    output_height: int = 1,
    output_width: int = 1,
    sampling_ratio: int = 0,
    spatial_scale: float = 1.0,
    opset: int = 16,
) -> AnyTensor:
    """Each RoI ``(x1, y1, x2, y2)`` of ``rois [R, 4]`` (in the image ``batch_indices[r]``) pooled to
    ``[R, C, output_height, output_width]``: the average (or ``max``) of bilinear samples per bin.

    The sampling positions come from the RoIs' values (read at run time); the values move by gather.
    Before opset 16 the default mode is ``output_half_pixel``.
    """
    if mode not in ("avg", "max"):
        raise ValueError(f"RoiAlign mode {mode!r} is not avg or max")
    if opset < 16 and coordinate_transformation_mode == "half_pixel":
        coordinate_transformation_mode = "output_half_pixel"
    if coordinate_transformation_mode not in ("half_pixel", "output_half_pixel"):
        raise ValueError(
            f"RoiAlign coordinate_transformation_mode {coordinate_transformation_mode!r} is unknown"
        )
    if x.rank() != 4 or rois.rank() != 2 or rois.dims()[1] != 4:
        raise ValueError(
            f"RoiAlign: x {list(x.dims())} must be [N, C, H, W] and rois {list(rois.dims())} [R, 4]"
        )
    _, channels, height, width = x.dims()
    boxes = np.asarray(rois.to_numpy(), np.float64) * spatial_scale
    batch = np.asarray(batch_indices.to_numpy()).reshape(-1).astype(np.int64)
    count = boxes.shape[0]
    if batch.shape[0] != count:
        raise ValueError(f"RoiAlign: {count} rois but {batch.shape[0]} batch indices")
    bins = output_height * output_width
    found = [
        _roi_samples(
            box,
            height,
            width,
            output_height,
            output_width,
            sampling_ratio,
            coordinate_transformation_mode == "half_pixel",
        )
        for box in boxes
    ]
    most = max([p.shape[1] for p, _, _ in found] + [1])
    check_size([count, channels, bins, most, 4], "RoiAlign")
    pos = np.zeros((count, bins, most, 4), np.int64)
    weights = np.zeros((count, bins, most, 4), np.float64)
    used = np.zeros((count, bins, most), bool)
    divisor = np.ones((count, 1, 1), np.float64)
    for r, (p, w, n) in enumerate(found):
        pos[r, :, : p.shape[1]] = p
        weights[r, :, : p.shape[1]] = w
        used[r, :, : p.shape[1]] = True
        divisor[r] = n
    if count == 0:
        return Tensor.zeros((0, channels, output_height, output_width), x.device(), dtype=x.dtype)
    values = _gather_bins(x, batch, pos)  # [R, C, bins, most, 4]
    w_t = Tensor.from_numpy(weights, x.device()).cast(x.dtype).unsqueeze_dims([1])
    taps = values * w_t
    if mode == "avg":
        mean = taps.sum_dim(4).sum_dim(3).reshape((count, channels, bins))
        mean = mean / Tensor.from_numpy(divisor, x.device()).cast(x.dtype)
        return mean.reshape((count, channels, output_height, output_width))
    best = _bin_max(taps.max_dim(4).reshape((count, channels, bins, most)), used)
    return best.reshape((count, channels, output_height, output_width))


def _bin_max(values: AnyTensor, used: np.ndarray[Any, Any]) -> AnyTensor:
    """The max of each bin's used samples, 0 for a bin with none: ``values [R, C, bins, most]`` and
    ``used [R, bins, most]`` give ``[R, C, bins]``."""
    count, channels, bins, most = values.dims()
    device = values.device()
    unused = Tensor.from_numpy(~used, device).unsqueeze_dims([1]).expand((count, channels, bins, most))
    best = values.mask_fill(unused, float("-inf")).max_dim(3).reshape((count, channels, bins))
    none_used = np.asarray(~used.any(axis=2))
    empty = Tensor.from_numpy(none_used, device).unsqueeze_dims([1]).expand((count, channels, bins))
    return best.mask_fill(empty, 0.0)


def _round_half_away(v: float) -> int:
    return math.floor(abs(v) + 0.5) * (1 if v >= 0 else -1)


@op("MaxRoiPool")
def max_roi_pool(
    x: AnyTensor,
    rois: AnyTensor,
    pooled_shape: tuple[int, ...] = (),
    spatial_scale: float = 1.0,
) -> AnyTensor:
    """Max pooling of each RoI ``(batch_index, x1, y1, x2, y2)`` of ``rois [R, 5]`` over a
    ``pooled_shape`` grid of bins (Caffe's RoI pooling: corners rounded after scaling, bins of at
    least one pixel, an empty bin gives 0): ``[R, C, *pooled_shape]``."""
    if len(pooled_shape) != 2:
        raise ValueError(f"MaxRoiPool: pooled_shape must be [height, width], found {list(pooled_shape)}")
    if x.rank() != 4 or rois.rank() != 2 or rois.dims()[1] != 5:
        raise ValueError(
            f"MaxRoiPool: x {list(x.dims())} must be [N, C, H, W] and rois {list(rois.dims())} [R, 5]"
        )
    out_h, out_w = pooled_shape
    _, channels, height, width = x.dims()
    boxes = np.asarray(rois.to_numpy(), np.float64)
    count = boxes.shape[0]
    if count == 0:
        return Tensor.zeros((0, channels, out_h, out_w), x.device(), dtype=x.dtype)
    cells: list[list[np.ndarray[Any, Any]]] = []
    for box in boxes:
        x1, y1, x2, y2 = (_round_half_away(v * spatial_scale) for v in box[1:])
        roi_h, roi_w = max(y2 - y1 + 1, 1), max(x2 - x1 + 1, 1)
        bin_h, bin_w = roi_h / out_h, roi_w / out_w
        row: list[np.ndarray[Any, Any]] = []
        for ph in range(out_h):
            h0 = min(max(math.floor(ph * bin_h) + y1, 0), height)
            h1 = min(max(math.ceil((ph + 1) * bin_h) + y1, 0), height)
            for pw in range(out_w):
                w0 = min(max(math.floor(pw * bin_w) + x1, 0), width)
                w1 = min(max(math.ceil((pw + 1) * bin_w) + x1, 0), width)
                hh, ww = np.meshgrid(np.arange(h0, h1), np.arange(w0, w1), indexing="ij")
                row.append((hh * width + ww).reshape(-1))
        cells.append(row)
    most = max(max(len(c) for c in row) for row in cells)
    most = max(most, 1)
    bins = out_h * out_w
    check_size([count, channels, bins, most], "MaxRoiPool")
    pos = np.zeros((count, bins, most), np.int64)
    used = np.zeros((count, bins, most), bool)
    for r, row in enumerate(cells):
        for b, cell in enumerate(row):
            pos[r, b, : len(cell)] = cell
            used[r, b, : len(cell)] = True
    values = _gather_bins(x, boxes[:, 0].astype(np.int64), pos)  # [R, C, bins, most]
    return _bin_max(values, used).reshape((count, channels, out_h, out_w))
