"""Compiled plans: ``OnnxModel.forward`` run by the engine without returning to Python per node.

Run node by node, a small graph spends most of its time in Python: each node
is a function call, keyword handling and a trip through the binding (5 to 7
µs), against a microsecond or two of arithmetic. On a device without
autodiff, ``OnnxModel`` compiles the graph at the first call with a given
input signature (each input's shape and dtype) into a ``ferrum._ferrum.Plan``
and later calls with that signature run it in one engine call, the GIL
released.

Compiling runs the graph once node by node (the trace, whose outputs that
first call returns), then:

- values that depend only on the signature (constants, ``Shape`` of a value
  whose shape the signature fixes, and everything computed from those alone:
  the Shape→Gather→Concat→Reshape chains of exported graphs, Range and
  ConstantOfShape of static sizes) are taken from the trace as constants;
- each remaining step (and fused convolution group of ``ferrum.onnx.fuse``)
  is lowered to instructions with literal shapes (``ferrum.onnx.lower``);
- a step with no plan form splits the plan: engine segment, Python step,
  engine segment, so every graph still runs.

Plans are kept per module instance and signature (the last ``CACHE_SIZE``
signatures). A new signature compiles a new plan; autodiff devices, string
tensors, sequences and optionals take the step path.
"""

from __future__ import annotations

import dataclasses
import time
import warnings
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from ferrum._ferrum import Device, FerrumError, Plan, Tensor
from ferrum.onnx.errors import OnnxError
from ferrum.onnx.fuse import Action, FusedConv, run_action
from ferrum.onnx.fuse_quant import FusedDynamicLinear
from ferrum.onnx.lower import Instr, Lowering, lower
from ferrum.onnx.ops import lookup
from ferrum.onnx.plan_fusion import patterns
from ferrum.onnx.values import Value

if TYPE_CHECKING:
    from ferrum.module import Module
    from ferrum.onnx.fuse import Schedule
    from ferrum.onnx.program import Program, Step

__all__ = ["CACHE_SIZE", "CompiledPlan", "Signature", "compile_plan", "plan_cache", "profile", "signature"]

CACHE_SIZE = 8
"""Compiled plans kept per model instance (one per input signature, the oldest dropped first)."""

Signature = tuple[tuple[tuple[int, ...], str], ...]
"""Each input's shape and dtype name."""

# Ops whose outputs' shapes follow from their inputs' shapes and static inputs alone (not from data):
# a value they compute from fixed-shape values has a fixed shape, so Shape of it folds.
_SHAPE_FUNCTIONAL = frozenset(
    {
        "Abs", "Add", "And", "ArgMax", "ArgMin", "AveragePool", "BatchNormalization", "Cast",
        "CastLike", "Ceil", "Clip", "Concat", "ConstantOfShape", "Conv", "ConvTranspose", "Cos",
        "CumSum", "DepthToSpace", "Div", "Dropout", "Einsum", "Elu", "Equal", "Erf", "Exp", "Expand",
        "EyeLike", "Flatten", "Floor", "Gather", "GatherElements", "GatherND", "Gelu", "Gemm",
        "GlobalAveragePool", "GlobalMaxPool", "Greater", "GreaterOrEqual", "GroupNormalization",
        "HardSigmoid", "HardSwish", "Identity", "InstanceNormalization", "IsInf", "IsNaN",
        "LayerNormalization", "LeakyRelu", "Less", "LessOrEqual", "Log", "LogSoftmax", "MatMul", "Max",
        "MaxPool", "Mean", "Min", "Mish", "Mod", "Mul", "Neg", "Not", "OneHot", "Or", "Pad", "Pow",
        "PRelu", "Range", "Reciprocal", "ReduceL2", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
        "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare", "Relu", "Reshape", "Resize",
        "RMSNormalization", "Round",
        "ScatterElements", "ScatterND", "Selu", "Shape", "Sigmoid", "Sign", "Sin", "Size", "Slice",
        "Softmax", "Softplus", "Softsign", "SpaceToDepth", "Split", "Sqrt", "Squeeze", "Sub", "Sum",
        "Tanh", "Tile", "Transpose", "Trilu", "Unsqueeze", "Where", "Xor",
    }
)  # fmt: skip


@dataclasses.dataclass(frozen=True)
class _Segment:
    """An engine plan (``plan``) or one schedule action run from Python (``action``)."""

    plan: Plan | None
    action: Action | None
    inputs: tuple[str, ...]
    """The plan's inputs, read from the run's values."""
    outputs: tuple[str, ...]
    """The plan's outputs that later segments or the graph's outputs read."""
    free: tuple[str, ...]
    """Values no later segment reads, dropped after this one."""
    ops: tuple[str, ...] = ()
    """The engine plan's instructions' op names, in order."""


@dataclasses.dataclass(frozen=True)
class CompiledPlan:
    """A graph compiled for one input signature: engine segments and the steps between them."""

    segments: tuple[_Segment, ...]
    known: dict[str, Value]
    """Values the Python steps or the outputs read that the signature fixes (constants, parameters)."""
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    direct: bool
    """One engine segment reading the graph's inputs and giving its outputs, in order."""
    python_ops: tuple[str, ...]
    """The op types of the actions left to Python, in order (a fused group shows as ``FusedConv``)."""

    @property
    def instructions(self) -> tuple[str, ...]:
        """The op names of the engine segments' instructions, in order (``"matmul"``, ``"attention"``, ...).

        Example:
            >>> compiled.instructions.count("attention")  # doctest: +SKIP
            2
        """
        return tuple(op for s in self.segments for op in s.ops)

    @property
    def engine_segments(self) -> int:
        """How many segments run in the engine."""
        return sum(1 for s in self.segments if s.plan is not None)

    def run(
        self, model: Module[Any], inputs: Sequence[Tensor[Any, Any, Any]], device: Device[Any]
    ) -> tuple[Value, ...]:
        """The graph's outputs for ``inputs`` (of this plan's signature)."""
        program = graph_of(model)[0]
        if self.direct:
            plan = self.segments[0].plan
            assert plan is not None
            return tuple(_engine(program, plan, list(inputs)))
        env: dict[str, Value] = dict(self.known)
        env.update(zip(self.inputs, inputs, strict=True))
        for segment in self.segments:
            if segment.plan is not None:
                args = [env[n] for n in segment.inputs]
                env.update(zip(segment.outputs, _engine(program, segment.plan, args), strict=True))
            else:
                assert segment.action is not None
                run_action(program, segment.action, env, device, model)
            for name in segment.free:
                env.pop(name, None)
        return tuple(env[n] for n in self.outputs)


def profile(model: Module[Any], *inputs: Tensor[Any, Any, Any]) -> list[tuple[str, str, float]]:
    """Where a plan's time goes: each engine instruction's op, source node and seconds for one run
    on ``inputs`` (the plan compiled for their signature, compiled first if need be).

    Python steps between engine segments show as ``("python", op type, seconds)``.

    Example:
        >>> rows = profile(model, x)  # doctest: +SKIP
        >>> sorted(rows, key=lambda r: -r[2])[:3]  # doctest: +SKIP
        [('matmul', '/attn/MatMul', 8.1e-06), ...]
    """
    program = graph_of(model)[0]
    key = signature(inputs)
    if key is None:
        raise OnnxError(f"{program.source}: profile needs tensors on a device without autodiff")
    if key not in plan_cache(model):
        cast(Any, model).forward(*inputs)  # an OnnxModel's (graph_of checked): compiles the plan
    compiled = plan_cache(model).get(key)
    if compiled is None:
        raise OnnxError(f"{program.source}: the graph runs step by step (no plan to profile)")
    device = inputs[0].device()
    env: dict[str, Value] = dict(compiled.known)
    env.update(zip(compiled.inputs, inputs, strict=True))
    rows: list[tuple[str, str, float]] = []
    for segment in compiled.segments:
        if segment.plan is not None:
            args: list[Any] = [env[n] for n in segment.inputs]
            outs, timed = segment.plan.profile(args)
            env.update(zip(segment.outputs, outs, strict=True))
            rows.extend(timed)
        else:
            assert segment.action is not None
            started = time.perf_counter()
            run_action(program, segment.action, env, device, model)
            rows.append(("python", _op_type(program, segment.action), time.perf_counter() - started))
    return rows


def _op_type(program: Program, action: Action) -> str:
    if isinstance(action, FusedDynamicLinear):
        return "FusedDynamicLinear"
    return "FusedConv" if isinstance(action, FusedConv) else program.steps[action].op_type


def _engine(program: Program, plan: Plan, args: list[Any]) -> list[Tensor[Any, Any, Any]]:
    try:
        return plan.run(args)
    except FerrumError as exc:
        raise OnnxError(f"{program.source}: {exc}") from exc


def signature(inputs: Sequence[object]) -> Signature | None:
    """``inputs``' signature, or None when one is not a tensor or lives on an autodiff device."""
    found = []
    for x in inputs:
        if not isinstance(x, Tensor):
            return None
        found.append((tuple(x.dims()), str(x.dtype)))
    if not inputs or inputs[0].device().is_autodiff:  # type: ignore[attr-defined]
        return None
    return tuple(found)


@dataclasses.dataclass
class _Cache:
    owner: weakref.ref[Any]
    plans: dict[Signature, CompiledPlan | None]


_CACHES: dict[int, _Cache] = {}


def graph_of(model: Module[Any]) -> tuple[Program, Schedule]:
    """The graph ``model`` runs and its schedule: an ``OnnxModel``'s class attributes.

    Read by name so that plans need not import ``ferrum.onnx.model``, which stands on them.
    """
    program, schedule = getattr(type(model), "program", None), getattr(type(model), "schedule", None)
    if program is None or schedule is None:
        raise OnnxError(f"expected a model made by ferrum.onnx.load, found {type(model).__name__}")
    return program, schedule


def plan_cache(model: Module[Any]) -> dict[Signature, CompiledPlan | None]:
    """``model``'s compiled plans by signature (None: the signature compiled to no plan).

    Kept outside the instance: a module's copies (``load_record``, ``map``) share its ``__dict__`` but
    not its parameters, so each instance compiles its own.
    """
    key = id(model)
    cache = _CACHES.get(key)
    if cache is None or cache.owner() is not model:
        cache = _Cache(weakref.ref(model, lambda _: _CACHES.pop(key, None)), {})
        _CACHES[key] = cache
    return cache.plans


def _reads(step: Step) -> list[str]:
    return [*(n for n in step.inputs if n is not None), *step.tensor_kwargs.values(), *step.captures]


def _action_reads(program: Program, action: Action) -> list[str]:
    if not isinstance(action, (FusedConv, FusedDynamicLinear)):
        return _reads(program.steps[action])
    inner = {o for i in action.steps for o in program.steps[i].outputs}
    return [n for i in action.steps for n in _reads(program.steps[i]) if n not in inner]


def _action_writes(program: Program, action: Action) -> list[str]:
    if isinstance(action, (FusedConv, FusedDynamicLinear)):
        return [action.output]
    return [o for o in program.steps[action].outputs if o]


def _classify(model: Module[Any], trace: dict[str, Value]) -> tuple[set[str], set[str]]:
    """The values the signature fixes (static), and those whose shape it fixes (shaped)."""
    program, schedule = graph_of(model)
    static = {*program.constants, *program.output_constants, *program.fields}
    shaped = static | {v.name for v in program.inputs}
    for action in schedule.actions:
        writes = _action_writes(program, action)
        if isinstance(action, FusedDynamicLinear):
            if action.x in shaped:
                shaped.update(writes)
            continue
        if isinstance(action, FusedConv):
            if action.x in shaped and (action.residual is None or action.residual in shaped):
                shaped.update(writes)
            continue
        step = program.steps[action]
        data = [n for n in step.inputs if n is not None]
        spec = lookup(step.op_type, program.opset)
        deterministic = spec is not None and spec.deterministic
        if step.op_type in ("Shape", "Size") and data and data[0] in shaped and not step.tensor_kwargs:
            static.update(writes)
        elif (
            step.layer is None
            and not step.captures
            and deterministic
            and all(n in static for n in _reads(step))
            and all(isinstance(trace.get(o), Tensor) for o in writes)
        ):
            static.update(writes)
        elif (step.layer is not None or step.op_type in _SHAPE_FUNCTIONAL) and not step.captures:
            if all(n in shaped for n in data) and all(n in static for n in step.tensor_kwargs.values()):
                shaped.update(writes)
            continue
        else:
            continue
        shaped.update(writes)
    return static, shaped


def compile_plan(
    model: Module[Any], env: dict[str, Value], device: Device[Any]
) -> tuple[CompiledPlan | None, tuple[Value, ...]]:
    """Run ``model``'s graph on ``env`` (its inputs, parameters and constants, as ``forward`` fills it)
    step by step, and compile a plan for this input signature from what the run saw.

    Returns the plan (None when no step has a plan form) and the run's outputs.
    """
    program, schedule = graph_of(model)
    for action in schedule.actions:
        run_action(program, action, env, device, model)
    outputs = tuple(env[o.name] for o in program.outputs)
    try:
        compiled = _build(model, env, device)
    except (FerrumError, ValueError, TypeError, AssertionError) as exc:
        warnings.warn(
            f"{program.source}: the graph could not be compiled into a plan ({exc}); it runs step by step",
            RuntimeWarning,
            stacklevel=3,
        )
        compiled = None
    return compiled, outputs


def _build(model: Module[Any], trace: dict[str, Value], device: Device[Any]) -> CompiledPlan | None:
    program, schedule = graph_of(model)
    static, shaped = _classify(model, trace)
    low = Lowering(program, model, trace, static, shaped)
    fused, skipped = patterns(low)
    items: list[tuple[list[Instr] | None, Action]] = []
    for action in schedule.actions:
        writes = _action_writes(program, action)
        if writes and all(w in static for w in writes):
            continue  # computed once, in the trace
        if isinstance(action, int) and action in skipped:
            continue  # part of a pattern computed by its last step's instructions
        found = fused.get(action) if isinstance(action, int) else None
        items.append((found if found is not None else lower(low, action), action))
    if not any(instrs for instrs, _ in items):
        return None
    # consecutive lowered actions form one engine segment
    groups: list[tuple[list[Instr] | None, Action | None]] = []
    for instrs, action in items:
        if instrs is not None and groups and groups[-1][0] is not None:
            groups[-1][0].extend(instrs)
        elif instrs is not None:
            groups.append((list(instrs), None))
        else:
            groups.append((None, action))
    graph_outputs = tuple(o.name for o in program.outputs)
    reads: list[list[str]] = []
    for instrs, action in groups:
        if instrs is not None:
            reads.append([n for ins in instrs for n in ins.inputs if n is not None])
        else:
            assert action is not None
            reads.append(_action_reads(program, action))
    last_read: dict[str, int] = {}
    for k, names in enumerate(reads):
        for n in names:
            last_read[n] = k
    needed_after = [set[str]() for _ in groups]
    later: set[str] = set(graph_outputs)
    for k in range(len(groups) - 1, -1, -1):
        needed_after[k] = set(later)
        later.update(reads[k])
    constant_names = static | set(low.made)
    segments = []
    for k, (instrs, action) in enumerate(groups):
        free = tuple(sorted(n for n, at in last_read.items() if at == k and n not in graph_outputs))
        if instrs is None:
            segments.append(_Segment(None, action, (), (), free))
            continue
        plan, inputs, outs = _segment_plan(low, instrs, needed_after[k], constant_names, device)
        segments.append(_Segment(plan, None, inputs, outs, free, tuple(ins.op for ins in instrs)))
    engine_made = {o for s in segments for o in s.outputs}
    python_reads = {
        n for (instrs, _), names in zip(groups, reads, strict=True) if instrs is None for n in names
    }
    known: dict[str, Value] = {
        n: trace[n] for n in (python_reads | set(graph_outputs)) if n in static and n not in engine_made
    }
    input_names = tuple(v.name for v in program.inputs)
    direct = (
        len(segments) == 1
        and segments[0].plan is not None
        and segments[0].inputs == input_names
        and segments[0].outputs == graph_outputs
        and not known
    )
    python_ops = tuple(_op_type(program, s.action) for s in segments if s.action is not None)
    return CompiledPlan(tuple(segments), known, input_names, graph_outputs, direct, python_ops)


def _segment_plan(
    low: Lowering, instrs: list[Instr], needed: set[str], constant_names: set[str], device: Device[Any]
) -> tuple[Plan, tuple[str, ...], tuple[str, ...]]:
    """The engine plan of ``instrs``, its inputs (values it reads from outside) and its outputs (the values
    it makes that ``needed`` holds)."""
    slots: dict[str, int] = {}
    produced: set[str] = set()
    inputs: list[str] = []
    constants: list[tuple[int, Tensor[Any, Any, Any]]] = []

    def slot(name: str) -> int:
        if name not in slots:
            slots[name] = len(slots)
        return slots[name]

    for ins in instrs:
        for n in ins.inputs:
            if n is None or n in produced or n in slots:
                continue
            if n in constant_names:
                constants.append((slot(n), low.tensor(n)))
            else:
                inputs.append(n)
                slot(n)
        produced.update(ins.outputs)
        for o in ins.outputs:
            slot(o)
    # the graph's outputs first, in its order (so a plan computing the whole graph returns them as is)
    first = [o.name for o in low.program.outputs if o.name in produced and o.name in needed]
    outputs = list(dict.fromkeys([*first, *(n for n in slots if n in produced and n in needed)]))
    # the program inputs given in the graph's order when the segment reads them all (the direct case)
    order = {v.name: i for i, v in enumerate(low.program.inputs)}
    inputs.sort(key=lambda n: order.get(n, len(order)))
    keep = set(outputs) | set(inputs)
    last: dict[str, int] = {}
    for j, ins in enumerate(instrs):
        for n in ins.inputs:
            if n is not None:
                last[n] = j
    raw = []
    for j, ins in enumerate(instrs):
        free = sorted({slots[n] for n in ins.inputs if n is not None and last[n] == j and n not in keep})
        raw.append(
            (
                ins.op,
                ins.attrs,
                [None if n is None else slots[n] for n in ins.inputs],
                [slots[o] for o in ins.outputs],
                free,
                ins.label,
            )
        )
    specs = [(slots[n], list(low.dims(n)), low.dtype(n)) for n in inputs]
    plan = Plan(len(slots), raw, constants, specs, [slots[n] for n in outputs], device)
    return plan, tuple(inputs), tuple(outputs)
