"""A recorded trace made into an engine plan: dead instructions dropped, patterns fused, last reads freed.

The recorder (``ferrum._ferrum._trace_end``) gives the instructions in the
order the forward ran them, over slots: the inputs fill slots ``0..n``,
constants (parameters, masks built from data) have their own slots. Here the
instructions no output depends on (a weight tensor the caller ignores, say)
are dropped, ``ferrum.jit.fusion`` replaces known chains by fused kernels,
and each instruction is told which slots it reads for the last time, so the
engine frees (or reuses in place) their buffers.
"""

from __future__ import annotations

from typing import Any

from ferrum._ferrum import Device, Plan, Tensor
from ferrum.jit.fusion import Instr, fuse

__all__ = ["Recording", "build_plan", "live_instructions"]

Recording = tuple[
    int,
    list[tuple[str, dict[str, Any], list[int | None], list[int], str, list[list[int]]]],
    list[tuple[int, Tensor[Any, Any, Any]]],
    list[int],
]
"""What the recorder returns: slot count, instructions ``(op, attrs, inputs, outputs, label)``,
constants ``(slot, tensor)`` and the result's slots; each instruction also gives its outputs' shapes."""


def live_instructions(instrs: list[Instr], outputs: list[int]) -> list[Instr]:
    """``instrs`` without those whose results no output depends on."""
    needed = set(outputs)
    kept: list[Instr] = []
    for ins in reversed(instrs):
        if any(o in needed for o in ins.outputs):
            kept.append(ins)
            needed.update(s for s in ins.inputs if s is not None)
    kept.reverse()
    return kept


def build_plan(recording: Recording, inputs: list[Tensor[Any, Any, Any]], device: Device[Any]) -> Plan:
    """The engine plan of ``recording``, whose inputs are ``inputs`` (slots ``0..len(inputs)``)."""
    slots, raw, constants, outputs = recording
    instrs = [
        Instr(op, attrs, list(ins), list(outs), label, [tuple(s) for s in shapes])
        for op, attrs, ins, outs, label, shapes in raw
    ]
    values = dict(constants)
    shapes = {i: tuple(t.dims()) for i, t in enumerate(inputs)}
    fused = fuse(live_instructions(instrs, outputs), values, set(outputs), shapes)
    instrs = live_instructions(fused, outputs)
    read = {s for ins in instrs for s in ins.inputs if s is not None} | set(outputs)
    keep = set(outputs) | set(range(len(inputs)))
    last: dict[int, int] = {}
    for j, ins in enumerate(instrs):
        for s in ins.inputs:
            if s is not None:
                last[s] = j
    plan_instrs = []
    for j, ins in enumerate(instrs):
        free = sorted({s for s in ins.inputs if s is not None and last[s] == j and s not in keep})
        plan_instrs.append((ins.op, ins.attrs, ins.inputs, ins.outputs, free, ins.label))
    used_constants = [(s, t) for s, t in values.items() if s in read]
    specs = [(i, list(t.dims()), str(t.dtype)) for i, t in enumerate(inputs)]
    count = 1 + max([slots - 1, len(inputs) - 1, *values, *(s for ins in instrs for s in ins.outputs)])
    return Plan(count, plan_instrs, used_constants, specs, outputs, device)
