"""Lowering translated steps to plan instructions (``ferrum.onnx.plan`` compiles them into a ``Plan``).

A plan serves one input signature, and the compiler has run the graph once on
it (the trace): every value's shape and dtype is known, so each instruction
carries its shapes literally (a Reshape's target, a Slice's bounds, a
broadcast's rank, a convolution's padding). ``lower`` returns the
instructions that compute one schedule action, or None when the action has
no plan form; the compiler then runs that action from Python between two
plan segments, as before.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from ferrum._ferrum import Bool, Float, Int, Tensor
from ferrum.module import Module
from ferrum.nn.conv import Conv1d, Conv2d
from ferrum.nn.linear import Linear
from ferrum.nn.norm import BatchNorm
from ferrum.onnx.fuse import Action, FusedConv
from ferrum.onnx.fuse_quant import FusedDynamicLinear
from ferrum.onnx.ops._util import axis as dim_of
from ferrum.onnx.ops.conv import _fits, _settings
from ferrum.onnx.ops.reduce import _axes
from ferrum.onnx.program import Program, Step
from ferrum.onnx.values import Value

__all__ = ["COMPUTE_DTYPES", "Instr", "Lowering", "lower"]

COMPUTE_DTYPES = frozenset({"f32", "f64", "i64", "bool"})
"""The dtypes a plan computes in: every kernel reads them (f16 and other storage dtypes take the steps)."""


@dataclasses.dataclass(frozen=True)
class Instr:
    """One plan instruction over value names (the compiler numbers them into slots)."""

    op: str
    attrs: dict[str, Any]
    inputs: tuple[str | None, ...]
    outputs: tuple[str, ...]
    label: str


@dataclasses.dataclass
class Lowering:
    """What lowering reads: the program, its module, the traced values and which of them are static."""

    program: Program
    module: Module[Any]
    trace: dict[str, Value]
    static: set[str]
    """Values known for every input of the signature (constants, shapes, values computed from them)."""
    shaped: set[str]
    """Values whose shape the signature fixes (not data-dependent): what an instruction may read."""
    made: dict[str, Tensor[Any, Any, Any]] = dataclasses.field(default_factory=dict)
    """Constants that lowering made (a Linear's weight reshaped, a BatchNorm's scale and shift)."""
    _fresh: int = 0

    def tensor(self, name: str) -> Tensor[Any, Any, Any]:
        """The tensor value ``name`` held in the traced run, or a constant lowering made."""
        value = self.trace.get(name)
        if value is None and name in self.made:
            value = self.made[name]
        assert isinstance(value, Tensor), name
        return value

    def ok(self, name: str | None) -> bool:
        """Whether ``name`` is a plain tensor of a compute dtype with a fixed shape."""
        if name is None or name not in self.shaped:
            return False
        value = self.trace.get(name)
        return isinstance(value, Tensor) and str(value.dtype) in COMPUTE_DTYPES

    def dims(self, name: str) -> tuple[int, ...]:
        """The shape of ``name`` for this signature."""
        return tuple(self.tensor(name).dims())

    def dtype(self, name: str) -> str:
        """The dtype of ``name`` as the engine spells it (``"f32"``, ``"i64"``, ...)."""
        return str(self.tensor(name).dtype)

    def constant(self, value: Tensor[Any, Any, Any], hint: str) -> str:
        """A name for the lowering-made constant ``value``."""
        self._fresh += 1
        name = f"{hint}#const{self._fresh}"
        self.made[name] = value
        return name

    def temp(self, hint: str) -> str:
        """A fresh name for an intermediate value that only the plan holds."""
        self._fresh += 1
        return f"{hint}#tmp{self._fresh}"


_UNARY = {
    "Sqrt": "sqrt",
    "Exp": "exp",
    "Log": "log",
    "Erf": "erf",
    "Reciprocal": "recip",
    "Tanh": "tanh",
    "Sigmoid": "sigmoid",
    "Sin": "sin",
    "Cos": "cos",
    "Floor": "floor",
    "Ceil": "ceil",
    "HardSwish": "hard_swish",
}
_NUMERIC_UNARY = {"Neg": "neg", "Abs": "abs"}
_BINARY = {"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Pow": "pow"}
_COMPARE = {"Equal": "eq", "Greater": "gt", "GreaterOrEqual": "ge", "Less": "lt", "LessOrEqual": "le"}
_LOGICAL = {"And": "and", "Or": "or", "Xor": "xor"}
_RESHAPES = frozenset({"Reshape", "Flatten", "Squeeze", "Unsqueeze"})


def lower(low: Lowering, action: Action) -> list[Instr] | None:
    """The instructions computing ``action`` (a step's index or a fused group), or None."""
    if isinstance(action, FusedDynamicLinear):
        return None  # int8 has no plan form yet: the group runs from Python between segments
    if isinstance(action, FusedConv):
        return _fused_conv(low, action)
    step = low.program.steps[action]
    if step.captures or any(low.trace.get(o) is None for o in step.outputs if o):
        return None
    if any(n not in low.static for n in step.tensor_kwargs.values()):
        return None  # an attribute computed from data: its value differs from run to run
    data = [n for n in step.inputs if n is not None]
    if not all(low.ok(n) for n in data) or not all(low.ok(o) for o in step.outputs if o):
        return None
    if step.layer is not None:
        return _layer(low, step)
    handler = _HANDLERS.get(step.op_type)
    return handler(low, step) if handler is not None else None


def _kwarg(low: Lowering, step: Step, key: str, default: Any = None) -> Any:
    """A keyword of ``step``: a literal, or a static tensor input's traced value (as ints)."""
    if key in step.kwargs:
        return step.kwargs[key]
    name = step.tensor_kwargs.get(key)
    if name is not None:
        return [int(v) for v in np.asarray(low.tensor(name).to_numpy()).reshape(-1)]
    return default


def _one(step: Step, op: str, attrs: dict[str, Any], inputs: tuple[str | None, ...]) -> list[Instr]:
    return [Instr(op, attrs, inputs, (step.outputs[0],), step.node or step.op_type)]


def _single_output(step: Step) -> bool:
    return len(step.outputs) >= 1 and bool(step.outputs[0]) and not any(step.outputs[1:])


def _unary(low: Lowering, step: Step) -> list[Instr] | None:
    x = step.inputs[0]
    if x is None or not _single_output(step):
        return None
    kind = low.tensor(x).kind
    if step.op_type in _UNARY and kind is Float:
        return _one(step, "unary", {"op": _UNARY[step.op_type]}, (x,))
    if step.op_type in _NUMERIC_UNARY and kind is not Bool:
        return _one(step, "unary", {"op": _NUMERIC_UNARY[step.op_type]}, (x,))
    if step.op_type == "Relu" and kind is Float:
        return _one(step, "unary", {"op": "relu"}, (x,))
    if step.op_type == "IsNaN" and kind is Float:
        return _one(step, "unary", {"op": "is_nan"}, (x,))
    if step.op_type == "Not" and kind is Bool:
        return _one(step, "unary", {"op": "not"}, (x,))
    if step.op_type == "Gelu" and kind is Float and step.kwargs.get("approximate", "none") == "none":
        return _one(step, "unary", {"op": "gelu"}, (x,))
    if step.op_type == "HardSigmoid" and kind is Float:
        attrs = {"op": "hard_sigmoid", "alpha": float(step.kwargs.get("alpha", 0.2))}
        attrs["beta"] = float(step.kwargs.get("beta", 0.5))
        return _one(step, "unary", attrs, (x,))
    return None


def _pair(low: Lowering, step: Step) -> tuple[str, str, int] | None:
    """The two inputs of a binary step when they share a dtype, and their common rank."""
    if len(step.inputs) != 2 or not _single_output(step):
        return None
    a, b = step.inputs
    if a is None or b is None or low.dtype(a) != low.dtype(b):
        return None
    return a, b, max(len(low.dims(a)), len(low.dims(b)))


def _binary(low: Lowering, step: Step) -> list[Instr] | None:
    found = _pair(low, step)
    if found is None:
        return None
    a, b, rank = found
    kind = low.tensor(a).kind
    if kind is Bool or (step.op_type == "Pow" and kind is not Float):
        return None
    exponent = _scalar(low, b) if step.op_type == "Pow" else None
    if exponent is not None and low.dims(a) == low.dims(step.outputs[0]):
        # a constant exponent (x ** 2 of RMSNorm, x ** 3 of tanh-GELU): products, not powf per element
        return _one(step, "pow_scalar", {"exponent": exponent}, (a,))
    return _one(step, "binary", {"op": _BINARY[step.op_type], "rank": rank}, (a, b))


def _scalar(low: Lowering, name: str | None) -> float | None:
    """The one value of the static tensor ``name`` (a size-1 constant), or None."""
    if name is None or name not in low.static:
        return None
    value = low.trace.get(name)
    if not isinstance(value, Tensor) or value.num_elements() != 1 or value.kind is not Float:
        return None
    return float(np.asarray(value.to_numpy()).reshape(-1)[0])


def _compare(low: Lowering, step: Step) -> list[Instr] | None:
    found = _pair(low, step)
    if found is None or low.tensor(found[0]).kind is Bool:
        return None
    a, b, rank = found
    return _one(step, "compare", {"op": _COMPARE[step.op_type], "rank": rank}, (a, b))


def _logical(low: Lowering, step: Step) -> list[Instr] | None:
    found = _pair(low, step)
    if found is None or low.tensor(found[0]).kind is not Bool:
        return None
    a, b, rank = found
    return _one(step, "logical", {"op": _LOGICAL[step.op_type], "rank": rank}, (a, b))


def _where(low: Lowering, step: Step) -> list[Instr] | None:
    if len(step.inputs) != 3 or not _single_output(step):
        return None
    c, a, b = step.inputs
    if c is None or a is None or b is None or low.dtype(a) != low.dtype(b) or low.dtype(c) != "bool":
        return None
    rank = max(len(low.dims(n)) for n in (c, a, b))
    return _one(step, "where", {"rank": rank}, (c, a, b))


# ONNX integer types whose float-to-int Cast truncates inside a signed range and gives the x86-64
# "integer indefinite" (the range's lowest value) outside it and for NaN, as ferrum.onnx.ops.shape's
# cast computes it: int64 in its own range, int32 and the narrower types through int32's.
_INT64_CAST = (-(2.0**63), 2.0**63, -(1 << 63))
_INT32_CAST = (-(2.0**31), 2.0**31, -(1 << 31))
_CAST_RANGES = {
    onnx_type: bounds
    for bounds, types in (
        (_INT64_CAST, (7,)),  # INT64
        (_INT32_CAST, (6, 5, 3, 4, 2)),  # INT32, INT16, INT8, UINT16, UINT8
    )
    for onnx_type in types
}


def _cast(low: Lowering, step: Step) -> list[Instr] | None:
    x = step.inputs[0]
    if x is None or not _single_output(step):
        return None
    source, target = low.tensor(x), low.tensor(step.outputs[0])
    if source.kind is Float and target.kind is Int:
        bounds = _CAST_RANGES.get(int(step.kwargs.get("to", 0)))
        if bounds is None or str(target.dtype) != "i64":
            return None  # uint32 and uint64 convert through two ranges: the op's own path
        lo, hi, fill = bounds
        return _one(step, "cast_int", {"low": lo, "high": hi, "fill": fill}, (x,))
    return _one(step, "cast", {"dtype": str(target.dtype)}, (x,))


def _identity(low: Lowering, step: Step) -> list[Instr] | None:
    del low
    if len(step.inputs) != 1 or not _single_output(step) or step.inputs[0] is None:
        return None  # Dropout with a ratio or a training mode input, or its mask asked for
    return _one(step, "identity", {}, (step.inputs[0],))


def _reshape(low: Lowering, step: Step) -> list[Instr] | None:
    x = step.inputs[0]
    if x is None or not _single_output(step):
        return None
    return _one(step, "reshape", {"shape": list(low.dims(step.outputs[0]))}, (x,))


def _transpose(low: Lowering, step: Step) -> list[Instr] | None:
    x = step.inputs[0]
    if x is None or not _single_output(step):
        return None
    rank = len(low.dims(x))
    perm = step.kwargs.get("perm")
    axes = [dim_of(p, rank) for p in perm] if perm is not None else list(range(rank))[::-1]
    return _one(step, "permute", {"axes": axes}, (x,))


def _expand(low: Lowering, step: Step) -> list[Instr] | None:
    x = step.inputs[0]
    if x is None or not _single_output(step):
        return None
    return _one(step, "expand", {"shape": list(low.dims(step.outputs[0]))}, (x,))


def _slice(low: Lowering, step: Step) -> list[Instr] | None:
    x = step.inputs[0]
    if x is None or not _single_output(step):
        return None
    dims = low.dims(x)
    starts, ends = _kwarg(low, step, "starts") or [], _kwarg(low, step, "ends") or []
    axes = _kwarg(low, step, "axes") or list(range(len(starts)))
    steps = _kwarg(low, step, "steps") or [1] * len(starts)
    index = [(0, d, 1) for d in dims]
    for s, e, a, st in zip(starts, ends, axes, steps, strict=False):
        d = dim_of(int(a), len(dims))
        if st <= 0:
            return None  # a backward slice is a flip too: the step path's
        index[d] = slice(int(s), int(e), int(st)).indices(dims[d])
    shape = tuple(len(range(*r)) for r in index)
    if shape != low.dims(step.outputs[0]) or 0 in shape:
        return None
    attrs = {"starts": [r[0] for r in index], "ends": [r[1] for r in index], "steps": [r[2] for r in index]}
    return _one(step, "slice", attrs, (x,))


def _concat(low: Lowering, step: Step) -> list[Instr] | None:
    names = [n for n in step.inputs if n is not None]
    if not names or not _single_output(step) or len({low.dtype(n) for n in names}) != 1:
        return None
    dim = dim_of(int(step.kwargs.get("axis", 0)), len(low.dims(names[0])))
    return _one(step, "concat", {"dim": dim}, tuple(names))


def _split(low: Lowering, step: Step) -> list[Instr] | None:
    x = step.inputs[0]
    if x is None or not all(step.outputs):
        return None
    dim = dim_of(int(step.kwargs.get("axis", 0)), len(low.dims(x)))
    sizes = [low.dims(o)[dim] for o in step.outputs]
    if sum(sizes) != low.dims(x)[dim]:
        return None
    return [Instr("split", {"dim": dim, "sizes": sizes}, (x,), step.outputs, step.node or step.op_type)]


def _gather(low: Lowering, step: Step) -> list[Instr] | None:
    if len(step.inputs) != 2 or not _single_output(step):
        return None
    x, idx = step.inputs
    if x is None or idx is None or low.tensor(idx).kind is not Int:
        return None
    dim = dim_of(int(step.kwargs.get("axis", 0)), len(low.dims(x)))
    wrap = 1
    if idx in low.static:
        # known indices: counted from the end here, once
        values = np.asarray(low.tensor(idx).to_numpy()).astype(np.int64)
        size = low.dims(x)[dim]
        values = np.where(values < 0, values + size, values)
        idx = low.constant(Tensor.from_numpy(values, low.tensor(x).device()), idx)
        wrap = 0
    attrs = {"dim": dim, "wrap": wrap, "shape": list(low.dims(step.outputs[0]))}
    return _one(step, "take", attrs, (x, idx))


def _gather_nd(low: Lowering, step: Step) -> list[Instr] | None:
    if len(step.inputs) != 2 or not _single_output(step):
        return None
    x, idx = step.inputs
    if x is None or idx is None or low.tensor(idx).kind is not Int:
        return None
    attrs = {"batch_dims": int(step.kwargs.get("batch_dims", 0)), "shape": list(low.dims(step.outputs[0]))}
    return _one(step, "gather_nd", attrs, (x, idx))


def _gather_elements(low: Lowering, step: Step) -> list[Instr] | None:
    if len(step.inputs) != 2 or not _single_output(step):
        return None
    x, idx = step.inputs
    if x is None or idx is None or low.tensor(idx).kind is not Int:
        return None
    dim = dim_of(int(step.kwargs.get("axis", 0)), len(low.dims(x)))
    return _one(step, "gather_elements", {"dim": dim}, (x, idx))


def _scatter_nd(low: Lowering, step: Step) -> list[Instr] | None:
    if len(step.inputs) != 3 or not _single_output(step) or step.kwargs.get("reduction", "none") != "none":
        return None  # the reductions (add, mul, max, min) take the op's path
    data, idx, updates = step.inputs
    if data is None or idx is None or updates is None or low.tensor(idx).kind is not Int:
        return None
    if low.dtype(data) != low.dtype(updates):
        return None
    return _one(step, "scatter_nd", {"reduction": "none"}, (data, idx, updates))


def _cumsum(low: Lowering, step: Step) -> list[Instr] | None:
    x = step.inputs[0]
    if x is None or not _single_output(step) or low.tensor(x).kind is Bool or not low.dims(x):
        return None
    axis = _kwarg(low, step, "axis", 0)
    if isinstance(axis, (list, tuple)):
        if len(axis) != 1:
            return None
        axis = axis[0]
    attrs = {"dim": dim_of(int(axis), len(low.dims(x)))}
    attrs["exclusive"] = int(step.kwargs.get("exclusive", 0))
    attrs["reverse"] = int(step.kwargs.get("reverse", 0))
    return _one(step, "cumsum", attrs, (x,))


def _pad(low: Lowering, step: Step) -> list[Instr] | None:
    x = step.inputs[0]
    if x is None or not _single_output(step) or str(step.kwargs.get("mode", "constant")) != "constant":
        return None
    dims = low.dims(x)
    rank = len(dims)
    amounts = [int(v) for v in (_kwarg(low, step, "pads") or [])]
    axes = [dim_of(int(a), rank) for a in (_kwarg(low, step, "axes") or range(rank))]
    if len(amounts) != 2 * len(axes) or any(v < 0 for v in amounts):
        return None  # negative pads crop: the op's path
    before, after = [0] * rank, [0] * rank
    for i, a in enumerate(axes):
        before[a], after[a] = amounts[i], amounts[i + len(axes)]
    value = step.kwargs.get("constant_value")
    name = step.tensor_kwargs.get("constant_value")
    if name is not None:
        found = np.asarray(low.tensor(name).to_numpy()).reshape(-1)
        value = float(found[0]) if found.size else None
    fill = float(step.kwargs.get("value", 0.0) if value is None else value)
    flat = [v for d in reversed(range(rank)) for v in (before[d], after[d])]
    return _one(step, "pad", {"pads": flat, "value": fill}, (x,))


def _rms_normalization(low: Lowering, step: Step) -> list[Instr] | None:
    if not _single_output(step) or len(step.inputs) < 2:
        return None
    x, scale = step.inputs[0], step.inputs[1]
    if x is None or scale is None or low.tensor(x).kind is not Float or low.dtype(scale) != low.dtype(x):
        return None
    start = dim_of(int(step.kwargs.get("axis", -1)), len(low.dims(x)))
    attrs = {"start": start, "epsilon": float(step.kwargs.get("epsilon", 1e-5))}
    return _one(step, "rms_norm", attrs, (x, scale))


def _matmul(low: Lowering, step: Step) -> list[Instr] | None:
    if len(step.inputs) != 2 or not _single_output(step):
        return None
    a, b = step.inputs
    if a is None or b is None or low.dtype(a) != low.dtype(b) or low.tensor(a).kind is not Float:
        return None
    da, db, out = low.dims(a), low.dims(b), low.dims(step.outputs[0])
    if len(da) < 2 or len(db) < 2:
        return None
    attrs: dict[str, Any] = {}
    batch = out[:-2]
    if da != batch + da[-2:]:
        attrs["a_shape"] = list(batch + da[-2:])
    if db != batch + db[-2:]:
        attrs["b_shape"] = list(batch + db[-2:])
    return _one(step, "matmul", attrs, (a, b))


def _softmax(low: Lowering, step: Step) -> list[Instr] | None:
    x = step.inputs[0]
    if x is None or not _single_output(step) or low.tensor(x).kind is not Float:
        return None
    rank = len(low.dims(x))
    opset = int(step.kwargs.get("opset", low.program.opset))
    given = step.kwargs.get("axis")
    dim = dim_of(int(given) if given is not None else (-1 if opset >= 13 else 1), rank)
    if opset < 13 and dim != rank - 1:
        return None
    return _one(step, "softmax", {"dim": dim}, (x,))


def _layer_norm(low: Lowering, step: Step) -> list[Instr] | None:
    if not _single_output(step) or len(step.inputs) < 2:
        return None
    x, scale = step.inputs[0], step.inputs[1]
    bias = step.inputs[2] if len(step.inputs) > 2 else None
    if x is None or scale is None or low.tensor(x).kind is not Float:
        return None
    if any(n is not None and low.dtype(n) != low.dtype(x) for n in (scale, bias)):
        return None
    start = dim_of(int(step.kwargs.get("axis", -1)), len(low.dims(x)))
    attrs = {"start": start, "epsilon": float(step.kwargs.get("epsilon", 1e-5))}
    return _one(step, "layer_norm", attrs, (x, scale, bias))


def _reduce_mean(low: Lowering, step: Step) -> list[Instr] | None:
    x = step.inputs[0]
    if x is None or not _single_output(step) or low.tensor(x).kind is not Float:
        return None
    axes = _kwarg(low, step, "axes")
    dims = _axes(low.tensor(x), axes, int(step.kwargs.get("noop_with_empty_axes", 0)))
    out = list(low.dims(step.outputs[0]))
    if dims is None or not dims or not low.dims(x):
        return _one(step, "reshape", {"shape": out}, (x,))
    return _one(step, "mean_dims", {"dims": dims, "shape": out}, (x,))


def _global_average_pool(low: Lowering, step: Step) -> list[Instr] | None:
    x = step.inputs[0]
    if x is None or not _single_output(step) or low.tensor(x).kind is not Float or len(low.dims(x)) < 3:
        return None
    dims = list(range(2, len(low.dims(x))))
    return _one(step, "mean_dims", {"dims": dims, "shape": list(low.dims(step.outputs[0]))}, (x,))


def _pool(low: Lowering, step: Step) -> list[Instr] | None:
    x = step.inputs[0]
    if x is None or not _single_output(step) or low.tensor(x).kind is not Float or len(low.dims(x)) != 4:
        return None
    kw = step.kwargs
    kernel = list(kw.get("kernel_shape", ()))
    if len(kernel) != 2:
        return None
    s, d, p = _settings(low.tensor(x), kernel, kw.get("strides"), kw.get("dilations"), kw.get("pads"),
                        str(kw.get("auto_pad", "NOTSET")))
    if not _fits(p, kernel, d):
        return None
    attrs: dict[str, Any] = {"kernel": kernel, "stride": s, "padding": [*p[0], *p[1]], "dilation": d}
    attrs["ceil"] = int(kw.get("ceil_mode", 0))
    if step.op_type == "MaxPool":
        if int(kw.get("storage_order", 0)) not in (0, 1):
            return None
        return _one(step, "max_pool2d", attrs, (x,))
    if any(v != 1 for v in d):
        return None
    attrs["include_pad"] = int(kw.get("count_include_pad", 0))
    return _one(step, "avg_pool2d", attrs, (x,))


_HANDLERS: dict[str, Callable[[Lowering, Step], list[Instr] | None]] = {
    **dict.fromkeys([*_UNARY, *_NUMERIC_UNARY, "Relu", "IsNaN", "Not", "Gelu", "HardSigmoid"], _unary),
    **dict.fromkeys(_BINARY, _binary),
    **dict.fromkeys(_COMPARE, _compare),
    **dict.fromkeys(_LOGICAL, _logical),
    **dict.fromkeys(_RESHAPES, _reshape),
    "Where": _where,
    "Cast": _cast,
    "Identity": _identity,
    "Dropout": _identity,
    "Transpose": _transpose,
    "Expand": _expand,
    "Slice": _slice,
    "Concat": _concat,
    "Split": _split,
    "Gather": _gather,
    "GatherND": _gather_nd,
    "GatherElements": _gather_elements,
    "ScatterND": _scatter_nd,
    "CumSum": _cumsum,
    "Pad": _pad,
    "RMSNormalization": _rms_normalization,
    "MatMul": _matmul,
    "Softmax": _softmax,
    "LayerNormalization": _layer_norm,
    "ReduceMean": _reduce_mean,
    "GlobalAveragePool": _global_average_pool,
    "MaxPool": _pool,
    "AveragePool": _pool,
}


def _layer(low: Lowering, step: Step) -> list[Instr] | None:
    layer = getattr(low.module, str(step.layer))
    x = step.inputs[0]
    if x is None or not _single_output(step) or low.tensor(x).kind is not Float:
        return None
    out, label = step.outputs[0], step.node or step.op_type
    if type(layer) is Linear:
        return _linear(low, layer, x, out, label)
    if type(layer) is Conv1d:
        return _conv1d(low, layer, x, out, label)
    if type(layer) is Conv2d:
        conv = _conv(low, layer, x)
        if conv is None:
            return None
        attrs, weight = conv
        bias = None if layer.bias is None else low.constant(layer.bias.val(), label)
        return [Instr("conv2d", attrs, (x, weight, bias), (out,), label)]
    if type(layer) is BatchNorm:
        scale, shift = _bn_scale_shift(layer)
        rank = len(low.dims(x))
        shape = (1, -1) + (1,) * (rank - 2)
        s = low.constant(scale.reshape(shape), label)
        b = low.constant(shift.reshape(shape), label)
        mid = low.temp(out)
        return [
            Instr("binary", {"op": "mul", "rank": rank}, (x, s), (mid,), label),
            Instr("binary", {"op": "add", "rank": rank}, (mid, b), (out,), label),
        ]
    return None


def _linear(low: Lowering, layer: Linear[Any], x: str, out: str, label: str) -> list[Instr] | None:
    if layer.weight.quantized() is not None:
        return None
    weight = layer.weight.val()
    rank = len(low.dims(x))
    d_input = weight.dims()[0]
    if rank < 2 or low.dims(x)[-1] != d_input or str(weight.dtype) != low.dtype(x):
        return None
    w = low.constant(weight, label)
    b = None if layer.bias is None else low.constant(layer.bias.val(), label)
    return [Instr("linear", {"shape": list(low.dims(out))}, (x, w, b), (out,), label)]


def _conv(low: Lowering, layer: Conv2d[Any], x: str) -> tuple[dict[str, Any], str] | None:
    """A ``Conv2d`` layer's convolution attributes for input ``x``, and its weight's constant."""
    dims = low.dims(x)
    if layer.weight.quantized() is not None or len(dims) != 4:
        return None
    ph, pw = layer.padding.calculate_padding_2d(dims[2], dims[3], layer.kernel_size, layer.stride)
    attrs = {
        "stride": list(layer.stride),
        "padding": [ph, ph, pw, pw],
        "dilation": list(layer.dilation),
        "groups": int(layer.groups),
    }
    return attrs, low.constant(layer.weight.val(), x)


def _conv1d(low: Lowering, layer: Conv1d[Any], x: str, out: str, label: str) -> list[Instr] | None:
    dims = low.dims(x)
    if layer.weight.quantized() is not None or len(dims) != 3:
        return None
    if str(layer.weight.val().dtype) != low.dtype(x):
        return None
    pad = layer.padding.calculate_padding_1d(dims[2], layer.kernel_size, layer.stride)
    attrs = {
        "stride": [int(layer.stride)],
        "padding": [pad, pad],
        "dilation": [int(layer.dilation)],
        "groups": int(layer.groups),
    }
    weight = low.constant(layer.weight.val(), label)
    bias = None if layer.bias is None else low.constant(layer.bias.val(), label)
    return [Instr("conv1d", attrs, (x, weight, bias), (out,), label)]


def _bn_scale_shift(bn: BatchNorm[Any]) -> tuple[Tensor[Any, Any, Any], Tensor[Any, Any, Any]]:
    """BatchNorm's inference as one scale and shift per channel (as the layer computes them)."""
    scale = bn.gamma.val() / (bn.running_var.value() + bn.epsilon).sqrt()
    return scale, bn.beta.val() - bn.running_mean.value() * scale


def _fused_conv(low: Lowering, group: FusedConv) -> list[Instr] | None:
    conv: Conv2d[Any] = getattr(low.module, group.conv)
    x, out = group.x, group.output
    if not low.ok(x) or not low.ok(out) or low.tensor(x).kind is not Float:
        return None
    if group.residual is not None and (
        not low.ok(group.residual) or low.dims(group.residual) != low.dims(out)
        or low.dtype(group.residual) != low.dtype(out)
    ):
        return None  # a residual that broadcasts: the steps' path
    found = _conv(low, conv, x)
    if found is None or type(conv) is not Conv2d:
        return None
    attrs, weight = found
    bias = conv.bias.val() if conv.bias is not None else None
    scale, shift = None, bias
    if group.bn is not None:
        scale, shift = _bn_scale_shift(getattr(low.module, group.bn))
        if bias is not None:
            shift = shift + bias * scale
    label = low.program.steps[group.steps[0]].node or "Conv"
    s = None if scale is None else low.constant(scale, label)
    b = None if shift is None else low.constant(shift, label)
    attrs["relu"] = int(group.relu)
    return [Instr("conv2d_fused", attrs, (x, weight, s, b, group.residual), (out,), label)]
