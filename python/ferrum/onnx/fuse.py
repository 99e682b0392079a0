"""Inference fusion: a ``Conv2d`` layer with the ``BatchNorm`` layer, residual add and relu after it, run as
one ``F.conv2d_fused`` call.

An exported CNN spells each of these as its own node, and run one by one each reads and writes the whole
activation again: in ResNet-50 at batch 1 the BatchNorms, adds and relus took a fifth of a forward pass.
On a device without autodiff, where ``BatchNorm`` normalizes with its running statistics, the layer's
statistics and affine part fold into a scale and a shift per channel that the convolution applies to each
output tile as it computes it, with the residual add and the relu.

The fusion is a schedule over the same program: the modules, their parameters and the steps are unchanged,
so records, ``valid()`` and fine-tuning (where the steps run one by one, on Autodiff) see the same model.
A fused group runs where its last step stood (a residual branch may be computed after the main branch's
convolution), and the values are freed after their last use in that order.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from ferrum import functional as F
from ferrum._ferrum import Device, Tensor
from ferrum.nn.conv import Conv2d
from ferrum.nn.norm import BatchNorm
from ferrum.onnx.execute import run_group_steps, run_step
from ferrum.onnx.fuse_quant import FusedDynamicLinear, dynamic_linear_groups, run_dynamic_linear
from ferrum.onnx.values import Value

if TYPE_CHECKING:
    from ferrum.module import Module
    from ferrum.onnx.program import Program, Step

__all__ = ["Action", "FusedConv", "Schedule", "run_action", "run_scheduled", "schedule"]


@dataclasses.dataclass(frozen=True)
class FusedConv:
    """Steps run as one fused convolution: ``relu(bn(conv(x)) + residual)``, the last three optional."""

    steps: tuple[int, ...]
    """The fused steps' indices, in program order."""
    conv: str
    """The ``Conv2d`` layer's field."""
    x: str
    bn: str | None = None
    """The ``BatchNorm`` layer's field."""
    residual: str | None = None
    """The value added to the normalized output."""
    relu: bool = False
    output: str = ""
    """The value the last fused step writes."""


Action = int | FusedConv | FusedDynamicLinear
"""A schedule's action: a step's index, or a fused group."""


@dataclasses.dataclass(frozen=True)
class Schedule:
    """The order to run a program in on a device without autodiff, and what to free after each action."""

    actions: tuple[Action, ...]
    """A step's index, or a fused group."""
    free: tuple[tuple[str, ...], ...]


def _reads(step: Step) -> list[str]:
    return [*(n for n in step.inputs if n is not None), *step.tensor_kwargs.values(), *step.captures]


def schedule(program: Program) -> Schedule:
    """The fused groups of ``program`` and the order to run them in.

    A group starts at a ``Conv2d`` layer step whose output only its ``BatchNorm`` layer reads; an ``Add``
    or two-input ``Sum`` of the result and one other value, and a ``Relu``, join it when they alone read
    the value before them. A graph output is never fused away.
    """
    steps = program.steps
    readers: dict[str, list[int]] = {}
    for i, step in enumerate(steps):
        for name in _reads(step):
            readers.setdefault(name, []).append(i)
    kept = {o.name for o in program.outputs}

    def only_reader(name: str) -> Step | None:
        found = readers.get(name, [])
        if name in kept or len(found) != 1:
            return None
        return steps[found[0]]

    def layer(step: Step, kind: type[Any]) -> bool:
        return step.layer is not None and type(program.layers.get(step.layer)) is kind

    index = {id(s): i for i, s in enumerate(steps)}
    groups: dict[int, FusedConv] = {}
    taken: set[int] = set()
    for i, step in enumerate(steps):
        if (
            step.op_type != "Conv"
            or not layer(step, Conv2d)
            or len(step.outputs) != 1
            or step.inputs[0] is None
        ):
            continue
        group = FusedConv(steps=(i,), conv=str(step.layer), x=step.inputs[0], output=step.outputs[0])
        nxt = only_reader(group.output)
        if nxt is not None and nxt.op_type == "BatchNormalization" and layer(nxt, BatchNorm):
            if nxt.inputs[0] == group.output and len([o for o in nxt.outputs if o]) == 1:
                group = dataclasses.replace(
                    group, steps=(*group.steps, index[id(nxt)]), bn=nxt.layer, output=nxt.outputs[0]
                )
                nxt = only_reader(group.output)
        if nxt is not None and nxt.op_type in ("Add", "Sum") and len(nxt.inputs) == 2:
            others = [n for n in nxt.inputs if n != group.output]
            if len(others) == 1 and others[0] is not None:
                group = dataclasses.replace(
                    group, steps=(*group.steps, index[id(nxt)]), residual=others[0], output=nxt.outputs[0]
                )
                nxt = only_reader(group.output)
        if nxt is not None and nxt.op_type == "Relu" and nxt.layer is None:
            group = dataclasses.replace(
                group, steps=(*group.steps, index[id(nxt)]), relu=True, output=nxt.outputs[0]
            )
        group = _before(group, taken, steps)
        if group is not None:
            taken.update(group.steps)
            groups[group.steps[-1]] = group
    quant = dynamic_linear_groups(program, only_reader, index, taken)
    actions: list[Action] = []
    for i in range(len(steps)):
        if i in quant:
            actions.append(quant[i])
            continue
        if i in groups:
            actions.append(groups[i])
        elif i not in taken:
            actions.append(i)
    return Schedule(tuple(actions), _frees(program, actions))


def _before(group: FusedConv, taken: set[int], steps: list[Step]) -> FusedConv | None:
    """``group`` cut short before its first step that an earlier group took (two residual branches meet
    in one add); None when less than the convolution and its BatchNorm is left."""
    kept = 0
    while kept < len(group.steps) and group.steps[kept] not in taken:
        kept += 1
    if kept < 2:
        return None
    if kept == len(group.steps):
        return group
    ops = [steps[i].op_type for i in group.steps[:kept]]
    last = steps[group.steps[kept - 1]]
    return dataclasses.replace(
        group,
        steps=group.steps[:kept],
        bn=group.bn if "BatchNormalization" in ops else None,
        residual=group.residual if any(op in ("Add", "Sum") for op in ops) else None,
        relu="Relu" in ops,
        output=last.outputs[0],
    )


def _frees(program: Program, actions: list[Action]) -> tuple[tuple[str, ...], ...]:
    """What to drop after each action: the values the program frees, each after its last reader in this
    order (or after the action that made it, if nothing reads it)."""
    freeable = {name for step in program.steps for name in step.free}
    last: dict[str, int] = {}
    for a, action in enumerate(actions):
        if isinstance(action, (FusedConv, FusedDynamicLinear)):
            inner = {o for i in action.steps for o in program.steps[i].outputs}
            reads = [n for i in action.steps for n in _reads(program.steps[i]) if n not in inner]
            made = [action.output]
        else:
            reads = _reads(program.steps[action])
            made = list(program.steps[action].outputs)
        for name in made:
            last.setdefault(name, a)
        for name in reads:
            last[name] = a
    free: list[list[str]] = [[] for _ in actions]
    for name, a in last.items():
        if name in freeable:
            free[a].append(name)
    return tuple(tuple(f) for f in free)


def run_scheduled(
    program: Program,
    plan: Schedule,
    env: dict[str, Value],
    device: Device[Any],
    module: Module[Any],
) -> None:
    """Run ``program`` on ``env`` in the order of ``plan``, fused groups as one call each."""
    for action, free in zip(plan.actions, plan.free, strict=True):
        run_action(program, action, env, device, module)
        for name in free:
            env.pop(name, None)


def run_action(
    program: Program,
    action: Action,
    env: dict[str, Value],
    device: Device[Any],
    module: Module[Any],
) -> None:
    """Run one action of a schedule (a step's index or a fused group) on ``env``."""
    if isinstance(action, FusedDynamicLinear):
        run_dynamic_linear(program, action, env, device, module)
    elif not isinstance(action, FusedConv):
        run_step(program, program.steps[action], env, device, module)
    elif not _run_fused(action, env, module):
        # The group's steps one by one, which report bad input or handle what the fused kernel cannot.
        run_group_steps(program, action.steps, action.output, env, device, module)


def _run_fused(group: FusedConv, env: dict[str, Value], module: Module[Any]) -> bool:
    """Run ``group`` as one fused convolution call; False (``env`` untouched) when it cannot."""
    conv: Conv2d[Any] = getattr(module, group.conv)
    x = env[group.x]
    residual = env[group.residual] if group.residual is not None else None
    if not isinstance(x, Tensor) or not isinstance(residual, (Tensor, type(None))) or x.rank() != 4:
        return False  # bad input (a sequence, a wrong rank), for the steps to report
    height, width = x.dims()[-2:]
    pad = conv.padding.calculate_padding_2d(height, width, conv.kernel_size, conv.stride)
    bias = conv.bias.val() if conv.bias is not None else None
    scale, shift = None, bias
    if group.bn is not None:
        bn: BatchNorm[Any] = getattr(module, group.bn)
        # As BatchNorm's inference: one scale and shift per channel, the conv's bias folded in.
        scale = bn.gamma.val() / (bn.running_var.value() + bn.epsilon).sqrt()
        shift = bn.beta.val() - bn.running_mean.value() * scale
        if bias is not None:
            shift = shift + bias * scale
    try:
        env[group.output] = F.conv2d_fused(
            x,
            conv.weight.val(),
            conv.stride,
            pad,
            conv.dilation,
            conv.groups,
            scale=scale,
            shift=shift,
            residual=residual,
            relu=group.relu,
        )
    except (ValueError, TypeError):
        # A residual that broadcasts (conv2d_fused takes only the output's shape), or input the
        # convolution refuses: the steps one by one, which add with broadcasting or report the error.
        return False
    return True
