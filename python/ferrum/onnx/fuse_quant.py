"""Inference fusion of onnxruntime's dynamically quantized linear layer into one engine call.

``quantize_dynamic`` writes each MatMul as ``DynamicQuantizeLinear(x) -> MatMulInteger(q, w_int8) -> Cast
-> Mul(x_scale * w_scale) -> [Add(bias)] -> [Relu]``. Run node by node, the activations are quantized to
an Int tensor, the int32 sums widened, cast, scaled and biased, each a pass over the output from Python.
The fused group runs ``Int8Matrix.dynamic_linear``: the quantization, the exact u8 x s8 product and the
f32 steps in one call, each f32 step rounded as its node rounds it, so the result is the nodes' result.

As ``ferrum.onnx.fuse``, this is a schedule over the unchanged program: a group runs where its last step
stood, and falls back to its steps one by one when the fused call declines its input.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import onnx

from ferrum._ferrum import DType, Int, Tensor
from ferrum.onnx.execute import run_group_steps
from ferrum.onnx.ops.linear import _packed
from ferrum.onnx.values import Value

if TYPE_CHECKING:
    from ferrum._ferrum import Device
    from ferrum.module import Module
    from ferrum.onnx.program import Program, Step

__all__ = ["FusedDynamicLinear", "dynamic_linear_groups", "run_dynamic_linear"]


@dataclasses.dataclass(frozen=True)
class FusedDynamicLinear:
    """Steps run as one dynamically quantized linear: ``relu(f32(q(x) @ w) * (x_scale * w_scale) + bias)``."""

    steps: tuple[int, ...]
    """The fused steps' indices, in program order."""
    x: str
    matmul: int
    """The MatMulInteger step (its constant weight and zero point)."""
    w_scale: str
    bias: str | None = None
    relu: bool = False
    output: str = ""
    """The value the last fused step writes."""

    def reads(self) -> list[str]:
        """The values the group reads from outside it."""
        return [n for n in (self.x, self.w_scale, self.bias) if n is not None]


def dynamic_linear_groups(
    program: Program, only_reader: Callable[[str], Step | None], index: dict[int, int], taken: set[int]
) -> dict[int, FusedDynamicLinear]:
    """The fusable patterns of ``program``, by the index of their last step; ``only_reader(name)`` is the
    one step reading ``name`` (None when several do or it is a graph output), ``index`` maps a step's
    ``id`` to its index, and ``taken`` the steps other groups hold (updated)."""
    groups: dict[int, FusedDynamicLinear] = {}
    for i, dq in enumerate(program.steps):
        if dq.op_type != "DynamicQuantizeLinear" or i in taken or len(dq.outputs) != 3 or not dq.inputs:
            continue
        x = dq.inputs[0]
        q, xs, xz = dq.outputs
        mm = only_reader(q) if q else None
        if x is None or mm is None or mm.op_type != "MatMulInteger" or not xz:
            continue
        if only_reader(xz) is not mm:
            continue
        if list(mm.inputs[:2]) != [q, xz] or "b" not in mm.kwargs or mm.tensor_kwargs:
            continue
        cast = only_reader(mm.outputs[0])
        if cast is None or cast.op_type != "Cast" or cast.kwargs.get("to") != onnx.TensorProto.FLOAT:
            continue
        scale_mul = only_reader(xs) if xs else None
        if scale_mul is None or scale_mul.op_type != "Mul" or len(scale_mul.inputs) != 2:
            continue
        w_scale = [n for n in scale_mul.inputs if n != xs]
        mul = only_reader(cast.outputs[0])
        if len(w_scale) != 1 or w_scale[0] is None or mul is None or mul.op_type != "Mul":
            continue
        if sorted(n or "" for n in mul.inputs) != sorted([cast.outputs[0], scale_mul.outputs[0]]):
            continue
        if only_reader(scale_mul.outputs[0]) is not mul:
            continue
        members = [dq, mm, scale_mul, cast, mul]
        group = FusedDynamicLinear(
            steps=(), x=x, matmul=index[id(mm)], w_scale=w_scale[0], output=mul.outputs[0]
        )
        nxt = only_reader(group.output)
        if nxt is not None and nxt.op_type == "Add" and len(nxt.inputs) == 2 and nxt.layer is None:
            others = [n for n in nxt.inputs if n != group.output]
            if len(others) == 1 and others[0] is not None:
                members.append(nxt)
                group = dataclasses.replace(group, bias=others[0], output=nxt.outputs[0])
                nxt = only_reader(group.output)
        if nxt is not None and nxt.op_type == "Relu" and nxt.layer is None:
            members.append(nxt)
            group = dataclasses.replace(group, relu=True, output=nxt.outputs[0])
        steps = tuple(sorted(index[id(s)] for s in members))
        if any(s in taken for s in steps):
            continue
        taken.update(steps)
        groups[steps[-1]] = dataclasses.replace(group, steps=steps)
    return groups


def _scales(value: Value) -> list[float] | None:
    """A float32 scalar or 1-D weight scale as a list; None for other values."""
    if not isinstance(value, Tensor) or value.dtype != DType.F32 or value.rank() > 1:
        return None
    return [float(v) for v in np.asarray(value.to_numpy(), np.float32).reshape(-1)]


def _fused(
    group: FusedDynamicLinear, program: Program, env: dict[str, Value]
) -> Tensor[Any, Any, Any] | None:
    """The group's output from one fused call, or None when the call does not apply."""
    mm = program.steps[group.matmul]
    x, w_scale = env[group.x], _scales(env[group.w_scale])
    bias = env[group.bias] if group.bias is not None else None
    if not isinstance(x, Tensor) or x.dtype != DType.F32 or w_scale is None:
        return None
    zero_name = mm.inputs[2] if len(mm.inputs) > 2 else None
    zero = env[zero_name] if zero_name is not None else None
    if zero is not None and (not isinstance(zero, Tensor) or zero.kind is not Int):
        return None
    packed = _packed(mm.kwargs["b"], zero, x.device())
    if packed is None or x.rank() < 1 or x.dims()[-1] != packed.dims()[0]:
        return None
    n = packed.dims()[1]
    if len(w_scale) not in (1, n):
        return None
    if bias is not None:
        # the bias must be the Add's other operand as it is: an f32 vector over the outputs
        if not isinstance(bias, Tensor) or bias.dtype != DType.F32 or list(bias.dims()) != [n]:
            return None
    return packed.dynamic_linear(x, w_scale, bias, group.relu)


def run_dynamic_linear(
    program: Program,
    group: FusedDynamicLinear,
    env: dict[str, Value],
    device: Device[Any],
    module: Module[Any],
) -> None:
    """Run ``group`` as one fused call, or its steps one by one when the call does not apply."""
    out = _fused(group, program, env)
    if out is not None:
        env[group.output] = out
        return
    run_group_steps(program, group.steps, group.output, env, device, module)
