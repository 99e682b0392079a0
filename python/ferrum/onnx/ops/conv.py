"""Convolution and pooling: Conv, ConvTranspose, MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool.

ONNX gives padding as begin/end per spatial dim (or ``auto_pad``); they are
resolved against the input size at run time. A 1-d or 2-d Conv whose weights
are constants and whose padding is symmetric becomes a ``Conv1d``/``Conv2d``
layer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ferrum import functional as F
from ferrum._ferrum import Device, Float, PadMode, Tensor
from ferrum.module import Param
from ferrum.nn.conv import Conv1d, Conv2d
from ferrum.nn.padding import PaddingConfig1d, PaddingConfig2d
from ferrum.onnx.ops._util import AnyTensor, pool_pads, same_kind
from ferrum.onnx.ops.registry import LayerPlan, NodeInfo, op

__all__ = ["average_pool", "conv", "conv_transpose", "global_average_pool", "global_max_pool", "max_pool"]


def _settings(
    x: AnyTensor,
    kernel: Sequence[int],
    strides: Sequence[int] | None,
    dilations: Sequence[int] | None,
    pads: Sequence[int] | None,
    auto_pad: str,
) -> tuple[list[int], list[int], list[tuple[int, int]]]:
    n = x.rank() - 2
    strides_l = list(strides or [1] * n)
    dilations_l = list(dilations or [1] * n)
    return strides_l, dilations_l, pool_pads(x.dims()[2:], kernel, strides_l, dilations_l, pads, auto_pad)


def _prepad(x: AnyTensor, pads: list[tuple[int, int]], value: float = 0.0) -> AnyTensor:
    flat: list[int] = []
    for before, after in reversed(pads):
        flat += [before, after]
    return x.pad(flat, PadMode.Constant(value)) if any(flat) else x


def _conv_layer(info: NodeInfo, device: Device[Any]) -> LayerPlan | None:
    weight, bias = info.constants[1], info.constants[2] if len(info.constants) > 2 else None
    has_bias = len(info.present) > 2 and info.present[2]
    if weight is None or weight.dtype.kind != "f" or (has_bias and bias is None):
        return None
    kw = info.kwargs
    n = weight.ndim - 2
    pads = kw.get("pads")
    auto_pad = kw.get("auto_pad", "NOTSET")
    if n not in (1, 2) or auto_pad not in ("NOTSET", "VALID"):
        return None
    if pads and auto_pad == "NOTSET" and tuple(pads[:n]) != tuple(pads[n:]):
        return None
    sym = list(pads[:n]) if pads and auto_pad == "NOTSET" else [0] * n
    strides = list(kw.get("strides") or [1] * n)
    dilations = list(kw.get("dilations") or [1] * n)
    w = Param(Tensor.from_numpy(weight, device))
    b = Param(Tensor.from_numpy(bias, device)) if bias is not None else None
    kernel = list(weight.shape[2:])
    group = int(kw.get("group", 1))
    if n == 1:
        layer: Any = Conv1d(
            weight=w,
            bias=b,
            stride=strides[0],
            kernel_size=kernel[0],
            dilation=dilations[0],
            groups=group,
            padding=PaddingConfig1d.Explicit(sym[0]),
        )
    else:
        layer = Conv2d(
            weight=w,
            bias=b,
            stride=(strides[0], strides[1]),
            kernel_size=(kernel[0], kernel[1]),
            dilation=(dilations[0], dilations[1]),
            groups=group,
            padding=PaddingConfig2d.Explicit(sym[0], sym[1]),
        )
    return LayerPlan(layer, (0,))


@op("Conv", layer=_conv_layer)
def conv(
    x: AnyTensor,
    weight: AnyTensor,
    bias: AnyTensor | None = None,
    auto_pad: str = "NOTSET",
    dilations: tuple[int, ...] | None = None,
    group: int = 1,
    kernel_shape: tuple[int, ...] | None = None,
    pads: tuple[int, ...] | None = None,
    strides: tuple[int, ...] | None = None,
) -> AnyTensor:
    """N-d convolution of ``[batch, channels, *spatial]`` by ``[out, channels / group, *kernel]``."""
    kernel = list(kernel_shape or weight.dims()[2:])
    s, d, p = _settings(x, kernel, strides, dilations, pads, auto_pad)
    n = len(kernel)
    if n == 1:
        return F.conv1d(x, weight, bias, s[0], p[0], d[0], group)
    if n == 2:
        return F.conv2d(x, weight, bias, (s[0], s[1]), (p[0], p[1]), (d[0], d[1]), group)
    if n == 3:
        return F.conv3d(_prepad(x, p), weight, bias, (s[0], s[1], s[2]), (0, 0, 0), (d[0], d[1], d[2]), group)
    raise ValueError(f"Conv over {n} spatial dims is not supported (1 to 3)")


@op("ConvTranspose")
def conv_transpose(
    x: AnyTensor,
    weight: AnyTensor,
    bias: AnyTensor | None = None,
    auto_pad: str = "NOTSET",
    dilations: tuple[int, ...] | None = None,
    group: int = 1,
    kernel_shape: tuple[int, ...] | None = None,
    output_padding: tuple[int, ...] | None = None,
    output_shape: tuple[int, ...] | None = None,
    pads: tuple[int, ...] | None = None,
    strides: tuple[int, ...] | None = None,
) -> AnyTensor:
    """N-d transposed convolution; weight ``[channels, out / group, *kernel]``."""
    kernel = list(kernel_shape or weight.dims()[2:])
    n = len(kernel)
    size = x.dims()[2:]
    s = list(strides or [1] * n)
    d = list(dilations or [1] * n)
    out_pad = list(output_padding or [0] * n)
    full = [(size[i] - 1) * s[i] + (kernel[i] - 1) * d[i] + 1 + out_pad[i] for i in range(n)]
    if output_shape is not None:
        target = list(output_shape[-n:])
        total = [full[i] - target[i] for i in range(n)]
        for i, t in enumerate(total):
            if t < 0:
                # a larger output than the kernel reaches: the extra rows are output padding.
                out_pad[i] -= t
                total[i] = 0
        if auto_pad == "SAME_LOWER":
            begin_end = [(t - t // 2, t // 2) for t in total]
        else:
            begin_end = [(t // 2, t - t // 2) for t in total]
    elif auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        total = [full[i] - size[i] * s[i] for i in range(n)]
        if auto_pad == "SAME_UPPER":
            begin_end = [(t // 2, t - t // 2) for t in total]
        else:
            begin_end = [(t - t // 2, t // 2) for t in total]
    elif pads:
        begin_end = [(pads[i], pads[i + n]) for i in range(n)]
    else:
        begin_end = [(0, 0)] * n
    # ferrum pads symmetrically: run with the smaller side, then crop the extra one.
    sym = [min(b, e) for b, e in begin_end]
    fns: dict[int, Any] = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}
    if n not in fns:
        raise ValueError(f"ConvTranspose over {n} spatial dims is not supported (1 to 3)")
    args: list[Any] = [sym, out_pad, d] if n > 1 else [sym[0], out_pad[0], d[0]]
    stride: Any = tuple(s) if n > 1 else s[0]
    y: AnyTensor = fns[n](x, weight, bias, stride, *(tuple(a) if n > 1 else a for a in args), group)
    crops = [(b - m, e - m) for (b, e), m in zip(begin_end, sym, strict=True)]
    if any(c for pair in crops for c in pair):
        ranges: list[Any] = [(0, y.dims()[0]), (0, y.dims()[1])]
        for i, (b, e) in enumerate(crops):
            ranges.append((b, y.dims()[2 + i] - e))
        y = y.slice(ranges)
    return y


def _fits(pads: list[tuple[int, int]], kernel: list[int], dilations: list[int]) -> bool:
    """Whether ferrum's pooling kernels take these pads (at most half the kernel's span per side)."""
    return all(max(p) <= ((k - 1) * d + 1) // 2 for p, k, d in zip(pads, kernel, dilations, strict=True))


@op("MaxPool")
def max_pool(
    x: AnyTensor,
    auto_pad: str = "NOTSET",
    ceil_mode: int = 0,
    dilations: tuple[int, ...] | None = None,
    kernel_shape: tuple[int, ...] = (),
    pads: tuple[int, ...] | None = None,
    storage_order: int = 0,
    strides: tuple[int, ...] | None = None,
    outputs: int = 1,
) -> tuple[AnyTensor, ...]:
    """Max pooling over 1 to 3 spatial dims; with a second output, the flat indices of the maxima
    (1 or 2 spatial dims), row-major or, with ``storage_order=1``, column-major within each plane."""
    if storage_order not in (0, 1):
        raise ValueError(
            f"MaxPool storage_order must be 0 (row-major) or 1 (column-major), found {storage_order}"
        )
    if x.kind is not Float:
        found = max_pool(
            x.float(), auto_pad, ceil_mode, dilations, kernel_shape, pads, storage_order, strides, outputs
        )
        return (same_kind(found[0], x), *found[1:])
    kernel = list(kernel_shape)
    n = len(kernel)
    if n == 3 and outputs == 1:
        s, d, p = _settings(x, kernel, strides, dilations, pads, auto_pad)
        return (_separable_3d(x, kernel, s, d, p, bool(ceil_mode), "max"),)
    if n not in (1, 2):
        raise ValueError(f"MaxPool over {n} spatial dims is not supported with indices (1 or 2)")
    s, d, p = _settings(x, kernel, strides, dilations, pads, auto_pad)
    source = x
    if not _fits(p, kernel, d):
        x = _prepad(x, p, float("-inf"))
        shifted, p = p, [(0, 0)] * n
    else:
        shifted = [(0, 0)] * n
    x4 = x.unsqueeze_dims([2]) if n == 1 else x
    k2, s2, p2, d2 = ([1, *kernel], [1, *s], [(0, 0), *p], [1, *d]) if n == 1 else (kernel, s, p, d)
    if outputs == 1:
        # no Indices output: the kernel without index bookkeeping
        pooled = F.max_pool2d(
            x4, (k2[0], k2[1]), (s2[0], s2[1]), (p2[0], p2[1]), (d2[0], d2[1]), bool(ceil_mode)
        )
        return (pooled.squeeze_dims([2]) if n == 1 else pooled,)
    out, idx = F.max_pool2d_with_indices(
        x4, (k2[0], k2[1]), (s2[0], s2[1]), (p2[0], p2[1]), (d2[0], d2[1]), bool(ceil_mode)
    )
    if any(b for b, _ in shifted):
        # indices into the padded plane, back to the input's
        width_padded = x4.dims()[-1]
        top, left = (0, shifted[0][0]) if n == 1 else (shifted[0][0], shifted[1][0])
        width = source.dims()[-1]
        row, col = idx / width_padded, idx.remainder(idx * 0 + width_padded)
        idx = (row - top) * width + (col - left)
    if n == 1:
        out, idx = out.squeeze_dims([2]), idx.squeeze_dims([2])
    elif storage_order:
        # column-major within each plane: h + w * height instead of h * width + w
        height, width = source.dims()[2:]
        idx = idx / width + idx.remainder(idx * 0 + width) * height
    return out, _global_index(idx, source)


def _separable_3d(
    x: AnyTensor,
    kernel: list[int],
    s: list[int],
    d: list[int],
    p: list[tuple[int, int]],
    ceil: bool,
    kind: str,
) -> AnyTensor:
    """A 3-d max or average pool as a 2-d pool over (height, width), then a 1-d pool over depth.

    Both reduce over the product of the per-axis windows, so the two passes give the 3-d result.
    """
    if kind == "max" and not _fits(p, kernel, d):
        x, p = _prepad(x, p, float("-inf")), [(0, 0)] * 3
    b, c, depth, h, w = x.dims()
    planes = x.reshape((b, c * depth, h, w))
    if kind == "max":
        hw = F.max_pool2d(planes, (kernel[1], kernel[2]), (s[1], s[2]), (p[1], p[2]), (d[1], d[2]), ceil)
    else:
        hw = F.avg_pool2d(planes, (kernel[1], kernel[2]), (s[1], s[2]), (p[1], p[2]), True, ceil)
    h2, w2 = hw.dims()[2:]
    columns = hw.reshape((b, c, depth, h2 * w2))
    if kind == "max":
        out = F.max_pool2d(columns, (kernel[0], 1), (s[0], 1), (p[0], (0, 0)), (d[0], 1), ceil)
    else:
        out = F.avg_pool2d(columns, (kernel[0], 1), (s[0], 1), (p[0], (0, 0)), True, ceil)
    return out.reshape((b, c, out.dims()[2], h2, w2))


def _global_index(idx: AnyTensor, x: AnyTensor) -> AnyTensor:
    """Per-plane indices as ONNX's indices into the whole flattened input."""
    b, c = x.dims()[:2]
    plane = math.prod(x.dims()[2:])
    offsets = Tensor.arange(0, b * c, x.device()).reshape((b, c) + (1,) * (x.rank() - 2)) * plane
    return idx + offsets


def _window_matrix(
    size: int, kernel: int, stride: int, dilation: int, pad: tuple[int, int], ceil: bool, include_pad: int
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """One axis of a dilated average pool: the ``[size, out]`` 0/1 tap matrix and each window's count.

    Windows start at ``o * stride - pad[0]`` and take every ``dilation``-th sample; a ceil-mode window
    must start inside the input or the leading padding. Taps in the padding read zero and count
    only with ``include_pad``; taps past the trailing padding (ceil mode) never count.
    """
    span = dilation * (kernel - 1) + 1
    room = size + pad[0] + pad[1] - span
    out = -(-room // stride) + 1 if ceil else room // stride + 1
    if ceil and (out - 1) * stride >= size + pad[0]:
        out -= 1
    if out < 1:
        raise ValueError(
            f"AveragePool: a window of span {span} does not fit an axis of {size} (padded {pad})"
        )
    taps = (np.arange(out) * stride - pad[0])[None, :] + (np.arange(kernel) * dilation)[:, None]
    real = (taps >= 0) & (taps < size)
    counted = (taps < size + pad[1]) if include_pad else real
    matrix = np.zeros((size, out), np.float64)
    cols = np.broadcast_to(np.arange(out)[None, :], taps.shape)
    np.add.at(matrix, (np.clip(taps, 0, size - 1)[real], cols[real]), 1.0)
    return matrix, counted.sum(axis=0).astype(np.float64)


def _dilated_average(
    x: AnyTensor,
    kernel: list[int],
    s: list[int],
    d: list[int],
    p: list[tuple[int, int]],
    ceil: bool,
    include_pad: int,
) -> AnyTensor:
    """An average pool with dilations over any number of spatial dims.

    A box window's sum is separable: one matmul per axis with its tap matrix, then a division by the
    product of the per-axis counts (ferrum's pooling kernels take no dilation for averages).
    """
    out = x
    counts = np.ones((), np.float64)
    for axis, size in enumerate(x.dims()[2:]):
        matrix, count = _window_matrix(int(size), kernel[axis], s[axis], d[axis], p[axis], ceil, include_pad)
        out = _pool_along(out, axis + 2, matrix)
        counts = np.multiply.outer(counts, count)
    divisor = Tensor.from_numpy(np.maximum(counts, 1.0)[None, None], x.device(), dtype=x.dtype)
    return out / divisor


def _pool_along(x: AnyTensor, axis: int, matrix: np.ndarray[Any, Any]) -> AnyTensor:
    """``x`` with ``axis`` (size ``in``) replaced by ``x @ matrix`` along it (size ``out``)."""
    rank = x.rank()
    order = [a for a in range(rank) if a != axis] + [axis]
    moved = x.permute(order)
    dims = tuple(moved.dims())
    flat = moved.reshape((-1, dims[-1])) @ Tensor.from_numpy(matrix, x.device(), dtype=x.dtype)
    return flat.reshape((*dims[:-1], matrix.shape[1])).permute([order.index(a) for a in range(rank)])


@op("AveragePool")
def average_pool(
    x: AnyTensor,
    auto_pad: str = "NOTSET",
    ceil_mode: int = 0,
    count_include_pad: int = 0,
    dilations: tuple[int, ...] | None = None,
    kernel_shape: tuple[int, ...] = (),
    pads: tuple[int, ...] | None = None,
    strides: tuple[int, ...] | None = None,
) -> AnyTensor:
    """Average pooling over 1 to 3 spatial dims (padding counted only with ``count_include_pad``).

    With ``dilations``, any number of spatial dims, as a matmul per axis (see ``_dilated_average``).
    """
    kernel = list(kernel_shape)
    n = len(kernel)
    s, d, p = _settings(x, kernel, strides, dilations, pads, auto_pad)
    if any(v != 1 for v in d):
        if x.kind is not Float:
            found = _dilated_average(x.float(), kernel, s, d, p, bool(ceil_mode), count_include_pad)
            return same_kind(found, x)
        return _dilated_average(x, kernel, s, d, p, bool(ceil_mode), count_include_pad)
    if n == 3:
        volume = _separable_3d(_prepad(x, p), kernel, s, d, [(0, 0)] * 3, bool(ceil_mode), "avg")
        if count_include_pad or not any(v for pair in p for v in pair):
            return volume
        ones = Tensor.ones((x.dims()[0], 1, *x.dims()[2:]), x.device()).cast(x.dtype)
        covered = _separable_3d(_prepad(ones, p), kernel, s, d, [(0, 0)] * 3, bool(ceil_mode), "avg")
        return volume / covered
    if n not in (1, 2):
        raise ValueError(f"AveragePool over {n} spatial dims is not supported (1 to 3)")
    if not _fits(p, kernel, d):
        # ferrum's kernel takes at most half a kernel of padding: pad here, and when padding must not
        # count, divide by the average of a mask that is one inside the input and zero in the padding.
        padded = _prepad(x, p)
        total: AnyTensor = average_pool(padded, "NOTSET", ceil_mode, 1, None, kernel_shape, None, strides)
        if count_include_pad:
            return total
        ones = Tensor.ones((x.dims()[0], 1, *x.dims()[2:]), x.device()).cast(x.dtype)
        mask = _prepad(ones, p)
        share: AnyTensor = average_pool(mask, "NOTSET", ceil_mode, 1, None, kernel_shape, None, strides)
        return total / share
    if n == 1:
        return F.avg_pool1d(x, kernel[0], s[0], p[0], bool(count_include_pad), bool(ceil_mode))
    return F.avg_pool2d(
        x, (kernel[0], kernel[1]), (s[0], s[1]), (p[0], p[1]), bool(count_include_pad), bool(ceil_mode)
    )


@op("GlobalAveragePool")
def global_average_pool(x: AnyTensor) -> AnyTensor:
    """GlobalAveragePool: the mean of each channel over all its spatial dims.

    ``x`` is ``[batch, channels, *spatial]`` (any number of spatial dims); the
    result is ``[batch, channels, 1, ..., 1]``, of ``x``'s rank.

    Example:
        >>> import numpy as np
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> x = Tensor.from_numpy(np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2), NdArray.device())
        >>> global_average_pool(x).to_numpy().tolist()
        [[[[1.5]], [[5.5]]]]
    """
    return x.mean_dims(list(range(2, x.rank())))


@op("GlobalMaxPool")
def global_max_pool(x: AnyTensor) -> AnyTensor:
    """GlobalMaxPool: the largest value of each channel over all its spatial dims.

    ``x`` is ``[batch, channels, *spatial]`` (any number of spatial dims); the
    result is ``[batch, channels, 1, ..., 1]``, of ``x``'s rank.
    """
    return x.max_dims(list(range(2, x.rank())))
