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
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ferrum._ferrum import Bool, Float, Int, Tensor
from ferrum.module import Module
from ferrum.nn.conv import Conv2d
from ferrum.nn.linear import Linear
from ferrum.nn.norm import BatchNorm
from ferrum.onnx.fuse import FusedConv
from ferrum.onnx.ops._util import axis as dim_of
from ferrum.onnx.ops.conv import _fits, _settings
from ferrum.onnx.ops.reduce import _axes
from ferrum.onnx.program import Program, Step
from ferrum.onnx.values import Value

__all__ = ["COMPUTE_DTYPES", "Instr", "Lowering", "lower", "patterns"]

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


def lower(low: Lowering, action: int | FusedConv) -> list[Instr] | None:
    """The instructions computing ``action`` (a step's index or a fused group), or None."""
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


def _cast(low: Lowering, step: Step) -> list[Instr] | None:
    x = step.inputs[0]
    if x is None or not _single_output(step):
        return None
    source, target = low.tensor(x), low.tensor(step.outputs[0])
    if source.kind is Float and target.kind is Int:
        return None  # ONNX's float-to-int cast of NaN and infinities is the op's own (see ops.dtypes)
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



def patterns(low: Lowering) -> tuple[dict[int, list[Instr]], set[int]]:
    """Node patterns that one fused kernel computes: the instructions that replace each pattern's last
    step (by its index), and the pattern's other steps, which no longer run.

    GELU as exporters spell it, ``x * 0.5 * (1 + erf(x / sqrt(2)))`` (five nodes, in either order of
    the products), becomes one ``gelu``: ``erf`` alone is a scalar libm call per element.
    """
    steps = low.program.steps
    readers: dict[str, list[int]] = {}
    producer: dict[str, int] = {}
    for i, step in enumerate(steps):
        for n in {*(n for n in step.inputs if n is not None), *step.tensor_kwargs.values(), *step.captures}:
            readers.setdefault(n, []).append(i)
        for o in step.outputs:
            if o:
                producer[o] = i
    kept = {o.name for o in low.program.outputs}

    def only_reader(name: str) -> Step | None:
        found = readers.get(name, [])
        return steps[found[0]] if len(found) == 1 and name not in kept else None

    def other(step: Step, name: str, op: str) -> str | None:
        """The operand of the two-input ``op`` step ``step`` that is not ``name``."""
        if step.op_type != op or step.layer is not None or len(step.inputs) != 2 or name not in step.inputs:
            return None
        a, b = step.inputs
        return b if a == name else a

    def near(name: str | None, value: float) -> bool:
        found = _scalar(low, name)
        return found is not None and abs(found - value) <= 1e-6 * max(1.0, abs(value))

    index = {id(s): i for i, s in enumerate(steps)}
    replaced: dict[int, list[Instr]] = {}
    skipped: set[int] = set()
    for erf in steps:
        if erf.op_type != "Erf" or erf.inputs[0] is None or erf.inputs[0] not in producer:
            continue
        scaled = steps[producer[erf.inputs[0]]]
        if len(scaled.inputs) != 2 or scaled.inputs[0] is None or only_reader(erf.inputs[0]) is not erf:
            continue
        x = scaled.inputs[0]
        if not (
            (scaled.op_type == "Div" and near(scaled.inputs[1], math.sqrt(2.0)))
            or (scaled.op_type == "Mul" and near(scaled.inputs[1], math.sqrt(0.5)))
        ):
            continue
        add = only_reader(erf.outputs[0])
        if add is None or not near(other(add, erf.outputs[0], "Add"), 1.0):
            continue
        product = only_reader(add.outputs[0])
        factor = other(product, add.outputs[0], "Mul") if product is not None else None
        if product is None or factor is None:
            continue
        chain = [scaled, erf, add, product]
        last = product
        if factor == x:  # (x * (1 + erf)) * 0.5
            half = only_reader(product.outputs[0])
            if half is None or not near(other(half, product.outputs[0], "Mul"), 0.5):
                continue
            chain.append(half)
            last = half
        else:  # (x * 0.5) * (1 + erf)
            halved = steps[producer[factor]] if factor in producer else None
            if halved is None or other(halved, x, "Mul") is None or not near(other(halved, x, "Mul"), 0.5):
                continue
            if only_reader(factor) is product:
                chain.append(halved)
        if not low.ok(x) or low.tensor(x).kind is not Float or low.dims(x) != low.dims(last.outputs[0]):
            continue
        ids = [index[id(s)] for s in chain]
        if any(i in skipped or i in replaced for i in ids):
            continue
        gelu = Instr("unary", {"op": "gelu"}, (x,), (last.outputs[0],), last.node or "Gelu")
        replaced[index[id(last)]] = [gelu]
        skipped.update(i for i in ids if i != index[id(last)])
    return replaced, skipped
