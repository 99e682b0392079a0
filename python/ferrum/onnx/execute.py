"""Running translated steps: the interpreter behind ``OnnxModel.forward`` and control-flow bodies."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ferrum._ferrum import Device
from ferrum.onnx.errors import OnnxError
from ferrum.onnx.program import Program, Step, Subgraph
from ferrum.onnx.values import Value, constant_value

if TYPE_CHECKING:
    from ferrum.module import Module

__all__ = ["Subgraph", "run_step", "run_steps", "run_subgraph"]


def run_steps(
    program: Program, env: dict[str, Value], device: Device[Any], module: Module[Any] | None
) -> None:
    """Run ``program``'s steps on ``env`` (value name -> tensor, string tensor, sequence or optional), adding
    every output to it."""
    for step in program.steps:
        run_step(program, step, env, device, module)
        for name in step.free:
            env.pop(name, None)


def run_group_steps(
    program: Program,
    indices: Sequence[int],
    output: str,
    env: dict[str, Value],
    device: Device[Any],
    module: Module[Any] | None,
) -> None:
    """Run a fused group's steps one by one (its fallback when the fused call does not apply), keeping only
    the group's ``output``: the intermediates the fused call would not have written are dropped."""
    steps = [program.steps[i] for i in indices]
    for step in steps:
        run_step(program, step, env, device, module)
    for step in steps:
        for name in step.outputs:
            if name and name != output:
                env.pop(name, None)


def run_step(
    program: Program,
    step: Step,
    env: dict[str, Value],
    device: Device[Any],
    module: Module[Any] | None,
) -> None:
    """Run one step on ``env``, adding its outputs to it (frees are the caller's)."""
    args = [env[n] if n is not None else None for n in step.inputs]
    try:
        if step.layer is not None:
            assert module is not None, "a layer step outside a module"
            result = getattr(module, step.layer).forward(*args)
        else:
            kwargs = dict(step.kwargs)
            for key, name in step.tensor_kwargs.items():
                kwargs[key] = env[name]
            if step.device:
                kwargs["device"] = device
            if step.captures:
                kwargs["captured"] = {name: env[name] for name in step.captures}
            result = step.fn(*args, **kwargs)
    except (ValueError, TypeError, IndexError) as exc:
        raise OnnxError(f"{program.source}: node {step.node!r} ({step.op_type}): {exc}") from exc
    results = result if isinstance(result, tuple) else (result,)
    for name, value in zip(step.outputs, results, strict=False):
        if name:
            env[name] = value


def run_subgraph(
    body: Subgraph,
    inputs: Sequence[Value],
    captured: Mapping[str, Value],
    device: Device[Any],
) -> list[Any]:
    """The outputs of ``body`` run on ``inputs`` (its declared inputs, in order) and the outer values.

    Each output is a ``Value`` (a tensor, a string tensor, a sequence or None); typed ``Any`` so that a
    caller whose body computes tensors only (a FlexAttention modifier) reads them as tensors.
    """
    program = body.program
    env: dict[str, Value] = dict(captured)
    for info, value in zip(program.inputs, inputs, strict=True):
        env[info.name] = value
    for name, array in (*program.constants.items(), *program.output_constants.items()):
        env[name] = constant_value(array, device)
    run_steps(program, env, device, None)
    return [env[o.name] for o in program.outputs]
