"""Shape and layout ops: Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Concat, Split, Slice,
Expand, Tile, Pad, Shape, Size, DepthToSpace, SpaceToDepth, Identity, Dropout, Cast."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ferrum._ferrum import Distribution, DType, Float, PadMode, Tensor
from ferrum.onnx.dtypes import compute_kind, is_narrow_float, narrow_float_values, numpy_dtype
from ferrum.onnx.ops._util import AnyTensor, IntArg, axis, check_size, ints, same_kind, to_rank
from ferrum.onnx.ops._util import axis as dim_of
from ferrum.onnx.ops.registry import op

__all__ = [
    "cast",
    "cast_like",
    "concat",
    "depth_to_space",
    "dropout",
    "expand",
    "flatten",
    "identity",
    "pad",
    "reshape",
    "shape",
    "size",
    "slice_",
    "space_to_depth",
    "split",
    "squeeze",
    "tile",
    "transpose",
    "unsqueeze",
]


@op("Reshape", static=(None, "shape"))
def reshape(x: AnyTensor, shape: IntArg = None, allowzero: int = 0) -> AnyTensor:
    """``x`` in ``shape``: a 0 copies the input dim (unless ``allowzero``), a -1 is inferred."""
    target = ints(shape) or []
    dims = tuple(x.dims())
    if not allowzero:
        target = [dims[i] if d == 0 and i < len(dims) else d for i, d in enumerate(target)]
    if -1 in target:
        known = math.prod(d for d in target if d != -1)
        total = math.prod(dims)
        target[target.index(-1)] = total // known if known else 0
    if math.prod(target) != math.prod(dims):
        raise ValueError(f"Reshape: cannot reshape {list(dims)} to {target}")
    if not math.prod(dims) and 0 in target:
        # The engine reads a 0 in a reshape target as "keep this dim"; an empty result is made afresh.
        return Tensor.zeros(tuple(target), x.device(), x.kind, dtype=x.dtype)
    return x.reshape(tuple(target))


@op("Flatten")
def flatten(x: AnyTensor, axis: int = 1) -> AnyTensor:
    """Flatten: ``x`` as a matrix ``[prod(dims[:axis]), prod(dims[axis:])]``.

    ``axis`` (1 by default, negative counts from the end; 0 gives ``[1,
    size]``) is the first dim of the second factor. Any kind; the elements keep
    their row-major order.

    Example:
        >>> import numpy as np
        >>> from ferrum.backend import NdArray
        >>> x = Tensor.from_numpy(np.zeros((2, 3, 4), np.float32), NdArray.device())
        >>> flatten(x).dims(), flatten(x, axis=-1).dims(), flatten(x, axis=0).dims()
        ((2, 12), (6, 4), (1, 24))
    """
    dims = tuple(x.dims())
    split = axis + len(dims) if axis < 0 else axis
    return x.reshape((math.prod(dims[:split]), math.prod(dims[split:])))


@op("Squeeze", static=(None, "axes"))
def squeeze(x: AnyTensor, axes: IntArg = None) -> AnyTensor:
    """Squeeze: ``x`` without the size-1 dims listed in ``axes`` (every size-1 dim when absent).

    ``axes`` is the attribute before opset 13 and the second input from it (a
    literal when constant, an Int tensor otherwise); negative axes count from
    the end. A listed dim that is not 1 raises ``ValueError``, an axis outside
    ``[-rank, rank)`` too.
    """
    found = ints(axes)
    dims = tuple(x.dims())
    if found is None:
        drop = [i for i, d in enumerate(dims) if d == 1]
    else:
        drop = sorted({axis(a, len(dims)) for a in found})
        for d in drop:
            if dims[d] != 1:
                raise ValueError(f"Squeeze: dim {d} of {list(dims)} is not 1")
    keep = tuple(d for i, d in enumerate(dims) if i not in drop)
    return x.reshape(keep)


@op("Unsqueeze", static=(None, "axes"))
def unsqueeze(x: AnyTensor, axes: IntArg = None) -> AnyTensor:
    """Unsqueeze: ``x`` with a size-1 dim inserted at each of ``axes``.

    ``axes`` (the attribute before opset 13, the second input from it) index
    the output, whose rank is ``x``'s plus ``len(axes)``; negative axes count
    from the output's end. An axis outside ``[-out_rank, out_rank)`` raises
    ``ValueError``.

    Example:
        >>> import numpy as np
        >>> from ferrum.backend import NdArray
        >>> x = Tensor.from_numpy(np.zeros((3, 4), np.float32), NdArray.device())
        >>> unsqueeze(x, [0, -1]).dims()
        (1, 3, 4, 1)
    """
    found = ints(axes) or []
    rank = x.rank() + len(found)
    inserted = sorted(axis(a, rank) for a in found)
    dims = list(x.dims())
    for a in inserted:
        dims.insert(a, 1)
    return x.reshape(tuple(dims))


@op("Transpose")
def transpose(x: AnyTensor, perm: tuple[int, ...] | None = None) -> AnyTensor:
    """Transpose: ``x``'s dims permuted by ``perm`` (reversed when absent).

    Output dim ``i`` is input dim ``perm[i]``, as NumPy's ``transpose``. A rank-0
    or rank-1 ``x`` is returned unchanged. A ``perm`` that is not a permutation
    of ``range(rank)`` raises ``ArgumentError``.

    Example:
        >>> import numpy as np
        >>> from ferrum.backend import NdArray
        >>> x = Tensor.from_numpy(np.zeros((2, 3, 4), np.float32), NdArray.device())
        >>> transpose(x).dims(), transpose(x, (0, 2, 1)).dims()
        ((4, 3, 2), (2, 4, 3))
    """
    order = list(perm) if perm is not None else list(range(x.rank()))[::-1]
    return x.permute(order) if x.rank() > 1 else x


@op("Concat")
def concat(*tensors: AnyTensor, axis: int = 0) -> AnyTensor:
    """Concat: the inputs joined along ``axis`` (negative counts from the end).

    Every input is converted to the first one's kind; all must have one rank
    and equal dims except along ``axis``, else ``ShapeError``. Empty inputs
    (zero elements) are skipped, as ONNX allows them in any shape. The result's
    ``axis`` dim is the sum of the inputs'.
    """
    first = tensors[0]
    parts = [same_kind(t, first) for t in tensors if t.num_elements() > 0 or len(tensors) == 1]
    if not parts:
        parts = [first]
    dim = dim_of(axis, first.rank())
    return Tensor.cat(parts, dim) if len(parts) > 1 else parts[0]


@op("Split", static=(None, "split"))
def split(
    x: AnyTensor, split: IntArg = None, axis: int = 0, num_outputs: int | None = None, outputs: int = 1
) -> tuple[AnyTensor, ...]:
    """``x`` cut along ``axis`` into the sizes ``split`` or into equal parts (the last may be smaller)."""
    dim = dim_of(axis, x.rank())
    size = x.dims()[dim]
    sizes = ints(split)
    if not sizes:
        parts = num_outputs or outputs
        chunk = -(-size // parts)
        sizes = [chunk] * (size // chunk) + ([size % chunk] if size % chunk else [])
    if sum(sizes) != size:
        raise ValueError(f"Split: sizes {sizes} do not add up to dim {dim} of length {size}")
    out, start = [], 0
    for s in sizes:
        if s == 0:
            shape = list(x.dims())
            shape[dim] = 0
            out.append(_empty(x, tuple(shape)))
        else:
            out.append(x.narrow(dim, start, s))
        start += s
    return tuple(out)


@op("Slice", static=(None, "starts", "ends", "axes", "steps"))
def slice_(
    x: AnyTensor, starts: IntArg = None, ends: IntArg = None, axes: IntArg = None, steps: IntArg = None
) -> AnyTensor:
    """NumPy slicing along ``axes`` (all dims when absent), steps of any sign."""
    start_l, end_l = ints(starts) or [], ints(ends) or []
    axes_l = ints(axes) or list(range(len(start_l)))
    steps_l = ints(steps) or [1] * len(start_l)
    dims = tuple(x.dims())
    index: list[slice] = [slice(None)] * len(dims)
    for s, e, a, st in zip(start_l, end_l, axes_l, steps_l, strict=False):
        d = axis(a, len(dims))
        if st == 0:
            raise ValueError("Slice: a step of 0")
        index[d] = slice(*slice(s, e, st).indices(dims[d]))
    flips = [d for d, sl in enumerate(index) if (sl.step or 1) < 0]
    if flips:
        # ferrum views step forwards: slice the mirrored range, then flip it.
        for d in flips:
            sl = index[d]
            # range(start, stop, step), not range(dims)[sl]: the normalised stop of a backward slice
            # through index 0 is -1, which slicing again would read as "the last element".
            n = len(range(sl.start, sl.stop, sl.step))
            first = sl.start - (n - 1) * (-sl.step) if n else 0
            index[d] = slice(first, first + (n - 1) * (-sl.step) + 1 if n else 0, -sl.step)
    ranges: list[Any] = []
    for d, sl in enumerate(index):
        start, stop, step = sl.indices(dims[d])
        stop = max(stop, start)
        ranges.append((start, stop, step) if step != 1 else (start, stop))
    if any(r[1] <= r[0] for r in ranges):
        shape = tuple(len(range(*sl.indices(dims[d]))) for d, sl in enumerate(index))
        return _empty(x, shape)
    out = x.slice(ranges)
    return out.flip(flips) if flips else out


def _empty(like: AnyTensor, shape: tuple[int, ...]) -> AnyTensor:
    dtype = like.to_numpy().dtype if like.num_elements() else np.float32
    return Tensor.from_numpy(np.zeros(shape, dtype=dtype), like.device())


@op("Expand", static=(None, "shape"))
def expand(x: AnyTensor, shape: IntArg = None) -> AnyTensor:
    """Expand (since opset 8): ``x`` broadcast to ``shape`` by NumPy's rule, both ways.

    The output shape is ``np.broadcast_shapes(x.dims(), shape)``, so a 1 in
    ``shape`` keeps ``x``'s dim and ``shape`` may have a lower rank than ``x``.
    ``shape`` is the second input (a literal when constant, an Int tensor
    otherwise). Shapes that do not broadcast raise NumPy's ``ValueError``, an
    output of more than ``2**31`` elements ``ValueError``.
    """
    target = tuple(ints(shape) or [])
    out_shape = check_size(np.broadcast_shapes(tuple(x.dims()), target), "Expand")
    return to_rank(x, len(out_shape)).expand(out_shape)


@op("Tile", static=(None, "repeats"))
def tile(x: AnyTensor, repeats: IntArg = None) -> AnyTensor:
    """Tile: ``x`` repeated ``repeats[d]`` times along each dim ``d``, as NumPy's ``tile``.

    ``repeats`` is the second input (a literal when constant, an Int tensor
    otherwise), one entry per dim of ``x``; output dim ``d`` is ``dims[d] *
    repeats[d]``. An output of more than ``2**31`` elements raises
    ``ValueError``.

    Example:
        >>> import numpy as np
        >>> from ferrum.backend import NdArray
        >>> x = Tensor.from_numpy(np.array([[1, 2]]), NdArray.device())
        >>> tile(x, [2, 2]).to_numpy().tolist()
        [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    times = ints(repeats) or []
    check_size([d * r for d, r in zip(x.dims(), times, strict=False)], "Tile")
    return x.repeat(times)


@op("Shape")
def shape(x: AnyTensor, start: int = 0, end: int | None = None) -> AnyTensor:
    """Shape: ``x``'s dims as a rank-1 Int (i64) tensor.

    From opset 15 the attributes ``start`` and ``end`` select ``dims[start:end]``
    (Python slice semantics: negative values count from the end, out-of-range
    values are clamped). ``x`` may be of any kind.
    """
    dims = list(x.dims())[slice(start, end)]
    return Tensor.from_numpy(np.array(dims, dtype=np.int64), x.device())


@op("Size")
def size(x: AnyTensor) -> AnyTensor:
    """Size: the number of elements of ``x`` as a rank-0 Int (i64) tensor.

    ``x`` may be of any kind and shape.
    """
    return Tensor.from_numpy(np.array(x.num_elements(), dtype=np.int64), x.device())


@op("Identity")
def identity(x: AnyTensor) -> AnyTensor:
    """Identity: ``x`` itself, unchanged.

    ``x`` may be of any kind and shape; the same tensor object is returned (no
    copy is made, which is safe because ferrum tensors are immutable values).
    """
    return x


@op("Dropout", static=(None, "ratio", "training_mode"), deterministic=False)
def dropout(
    x: AnyTensor,
    ratio: float | AnyTensor | None = None,
    training_mode: bool | AnyTensor | None = None,
    seed: int | None = None,
    is_test: int = 1,
) -> tuple[AnyTensor, AnyTensor]:
    """``x`` and an all-true mask; in training mode, elements zeroed with probability ``ratio`` (the
    rest scaled by ``1 / (1 - ratio)``) and the mask of those kept.

    Without ``seed`` the draws come from ferrum's generator. With one, they are NumPy's
    ``RandomState(seed).uniform`` (ONNX's reference draws so), so a seeded node gives the same mask on
    every run, and the mask ONNX's reference and node tests give.
    """
    del is_test
    if training_mode is not None and not isinstance(training_mode, bool):
        training_mode = bool(training_mode.to_numpy().reshape(-1)[0])
    if isinstance(ratio, Tensor):
        ratio = float(ratio.to_numpy().reshape(-1)[0])
    p = 0.5 if ratio is None else float(ratio)
    if not training_mode or p == 0.0:
        return x, Tensor.from_numpy(np.ones(tuple(x.dims()), dtype=np.bool_), x.device())
    if not 0.0 <= p < 1.0:
        raise ValueError(f"Dropout ratio must be in [0, 1), found {p}")
    if seed is None:
        draws = Tensor.random(tuple(x.dims()), Distribution.Uniform(0.0, 1.0), x.device())
        keep = draws.greater_equal_elem(p)
    else:
        uniform = np.random.RandomState(seed % 2**32).uniform(0.0, 1.0, tuple(x.dims()))
        keep = Tensor.from_numpy(uniform >= p, x.device())
    return x.mask_fill(keep.bool_not(), 0.0) * (1.0 / (1.0 - p)), keep


@op("Cast")
def cast(x: AnyTensor, to: int = 1, saturate: int = 1, round_mode: str = "up") -> AnyTensor:
    """``x`` in the type ferrum computes ONNX type ``to`` in (f32, f64, i64 or bool).

    Floats become integers by truncation toward zero. A value the target
    cannot hold (NaN, an infinity, out of range) does not raise, as it does
    in ``Tensor.int()``: it converts as onnxruntime's Cast on x86-64 does
    (and ONNX's NumPy reference evaluator there): to INT64_MIN for int64
    (T5's relative-position bias casts ``-inf``), to INT32_MIN for int32 and
    for the narrower types (int16, int8, uint16, uint8: the low bits of
    INT32_MIN, 0, when the result leaves the graph); uint32 and uint64 follow
    the compilers' unsigned conversion (``-inf`` and NaN give 2**31 and 2**63,
    ``+inf`` and values at or above 2**32 (2**64) give 0).

    The float8/float4 types (FLOAT8E4M3FN, ..., FLOAT8E8M0, FLOAT4E2M1) give
    an f32 tensor holding exactly the values the type represents: rounded to
    nearest even (FLOAT8E8M0 as ``round_mode`` says), values out of range
    clamped to the largest finite one when ``saturate`` (the default), else
    NaN or infinity. ferrum has no such dtypes: this rounding runs in NumPy
    (``ml_dtypes``).

    Example: ``cast(x, to=TensorProto.FLOAT8E4M3FN)`` maps ``[0.3, 1e6]`` to ``[0.3125, 448.0]``.
    """
    if is_narrow_float(to):
        values = x if x.kind is Float else x.float()
        rounded = narrow_float_values(np.asarray(values.to_numpy()), to, bool(saturate), round_mode)
        return Tensor.from_numpy(rounded, x.device())
    target = numpy_dtype(to, "Cast: ")
    return _to_numpy_kind(x, target)


@op("CastLike")
def cast_like(
    x: AnyTensor,
    like: AnyTensor,
    saturate: int = 1,
    round_mode: str = "up",
    input_types: tuple[int, ...] = (),
) -> AnyTensor:
    """CastLike (since opset 15): ``x`` cast (as ``cast`` does) to the ONNX type of ``like``.

    Only ``like``'s type is read; the shape is ``x``'s. The runner passes the
    inputs' declared ONNX types as ``input_types``: with ``like``'s known this
    is ``cast(x, to=input_types[1], saturate=..., round_mode=...)`` (float8
    rounding, narrow integer conversion included). Unknown (0 or absent), a
    Float ``like`` gives ``x`` as Float in ``like``'s dtype (f32 or f64), an
    Int one as Int (i64), a Bool one as Bool.
    """
    if len(input_types) > 1 and input_types[1]:
        return cast(x, to=input_types[1], saturate=saturate, round_mode=round_mode)
    return same_kind(x, like)


def _to_numpy_kind(x: AnyTensor, target: np.dtype[Any]) -> AnyTensor:
    kind = compute_kind(target)
    if kind == "b":
        return x if x.dtype == DType.Bool else x.bool()
    if kind == "i":
        if x.dtype == DType.I64:
            return x
        return _float_to_int(x, target) if x.kind is Float else x.int()
    if kind == "f":
        want = DType.F64 if target == np.float64 else DType.F32
        if x.dtype == want:
            return x
        return (x if x.dtype in (DType.F32, DType.F64) else x.float()).cast(want)
    raise ValueError(f"Cast: cannot compute in {target}")


def _truncated(x: AnyTensor, low: float, high: float, fill: int) -> AnyTensor:
    """``x`` truncated to Int where ``low <= x < high``, ``fill`` elsewhere (NaN included).

    The bounds are powers of two, exact in f32 and f64; a value just below
    ``low`` that would truncate to it is filled instead, which is the same
    value wherever ``fill`` is ``low``.
    """
    outside = x.greater_equal_elem(low).bool_and(x.lower_elem(high)).bool_not()
    return x.mask_fill(outside, 0.0).int().mask_fill(outside, fill)


def _float_to_int(x: AnyTensor, target: np.dtype[Any]) -> AnyTensor:
    """A Float ``x`` as ONNX integer type ``target``, converted as onnxruntime does on x86-64.

    C++'s ``static_cast`` from a float leaves the out-of-range values undefined;
    x86-64 compilers emit ``cvttsd2si``, whose answer to NaN, an infinity or a
    value out of range is the "integer indefinite" 0x80...0: INT64_MIN for a
    64-bit target, INT32_MIN for int32 and (through the 32-bit instruction and
    the low bits) the narrower types. Unsigned 32 and 64 bit targets go through
    the signed conversion below 2**31 (2**63) and through ``x - 2**31`` (``2**63``)
    with the top bit set again above, so ``+inf`` gives 0 there. ferrum computes
    the narrow types in i64: the value kept is the one whose two's complement
    bits the graph's output converts back to the declared type.
    """
    name = target.name
    if name == "int64":
        return _truncated(x, -(2.0**63), 2.0**63, -(1 << 63))
    if name == "uint64":
        below = _truncated(x, -(2.0**63), 2.0**63, -(1 << 63))
        # [2**63, 2**64): kept as value - 2**64, whose bits read as uint64 are the value; above: 0
        above = _truncated(x - 2.0**64, -(2.0**63), 0.0, 0)
        return below.mask_where(x.greater_equal_elem(2.0**63), above)
    signed32 = _truncated(x, -(2.0**31), 2.0**31, -(1 << 31))
    if name == "uint32":
        above = _truncated(x, 2.0**31, 2.0**32, 0)
        return signed32.mask_where(x.greater_equal_elem(2.0**31), above)
    return signed32


@op("Pad", static=(None, "pads", "constant_value", "axes"))
def pad(
    x: AnyTensor,
    pads: IntArg = None,
    constant_value: float | AnyTensor | None = None,
    axes: IntArg = None,
    mode: str = "constant",
    value: float = 0.0,
) -> AnyTensor:
    """Pad (negative pads crop) with a constant, or by ``reflect``ing or repeating the ``edge``."""
    amounts = ints(pads) or []
    rank = x.rank()
    axes_l = [axis(a, rank) for a in (ints(axes) or range(rank))]
    n = len(axes_l)
    before = dict.fromkeys(range(rank), 0)
    after = dict.fromkeys(range(rank), 0)
    for i, a in enumerate(axes_l):
        before[a], after[a] = amounts[i], amounts[i + n]
    if isinstance(constant_value, Tensor):
        constant_value = (
            float(constant_value.to_numpy().reshape(-1)[0]) if constant_value.num_elements() else 0.0
        )
    fill = value if constant_value is None else float(constant_value)
    # crop first (negative pads), then pad.
    ranges = [(max(0, -before[d]), x.dims()[d] - max(0, -after[d])) for d in range(rank)]
    x = x.slice(ranges)
    flat = []
    for d in reversed(range(rank)):
        flat += [max(0, before[d]), max(0, after[d])]
    if not any(flat):
        return x
    if mode == "wrap":
        return _wrap(x, [(max(0, before[d]), max(0, after[d])) for d in range(rank)])
    modes = {"constant": PadMode.Constant(fill), "reflect": PadMode.Reflect, "edge": PadMode.Edge}
    if mode not in modes:
        raise ValueError(f"Pad mode must be constant, reflect, edge or wrap, found {mode!r}")
    # ferrum takes (before, after) pairs from the last dim backwards.
    return x.pad(flat, modes[mode])


def _wrap(x: AnyTensor, pads: list[tuple[int, int]]) -> AnyTensor:
    """Circular padding: each dim continues with its own values from the other end."""
    for d, (before, after) in enumerate(pads):
        size = x.dims()[d]
        if before > size or after > size:
            raise ValueError(f"Pad wrap: pads ({before}, {after}) exceed dim {d} of length {size}")
        parts = [x.narrow(d, size - before, before)] if before else []
        parts.append(x)
        if after:
            parts.append(x.narrow(d, 0, after))
        x = Tensor.cat(parts, d) if len(parts) > 1 else x
    return x


@op("DepthToSpace")
def depth_to_space(x: AnyTensor, blocksize: int = 1, mode: str = "DCR") -> AnyTensor:
    """DepthToSpace: channels moved into ``blocksize`` x ``blocksize`` spatial blocks.

    ``x`` is ``[batch, channels, height, width]`` with ``channels`` divisible by
    ``blocksize**2``; the result is ``[batch, channels / blocksize**2, height *
    blocksize, width * blocksize]``. ``mode`` (from opset 11) is ``"DCR"`` (depth,
    column, row: the default) or ``"CRD"``, the order in which a channel index is
    split into the block offset and the output channel. A ``x`` of another
    rank raises ``ValueError``.
    """
    b, c, h, w = x.dims()
    s = blocksize
    if mode == "DCR":
        y = x.reshape((b, s, s, c // (s * s), h, w)).permute([0, 3, 4, 1, 5, 2])
    else:
        y = x.reshape((b, c // (s * s), s, s, h, w)).permute([0, 1, 4, 2, 5, 3])
    return y.reshape((b, c // (s * s), h * s, w * s))


@op("SpaceToDepth")
def space_to_depth(x: AnyTensor, blocksize: int = 1, mode: str = "DCR") -> AnyTensor:
    """Blocks of ``blocksize``² pixels moved into channels; the inverse of DepthToSpace in the same mode."""
    b, c, h, w = x.dims()
    s = blocksize
    order = [0, 3, 5, 1, 2, 4] if mode == "DCR" else [0, 1, 3, 5, 2, 4]
    y = x.reshape((b, c, h // s, s, w // s, s)).permute(order)
    return y.reshape((b, c * s * s, h // s, w // s))
