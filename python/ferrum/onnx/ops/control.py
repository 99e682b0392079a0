"""Control flow: If, Loop and Scan, whose bodies are subgraphs run by ferrum.onnx's interpreter.

A body reads the values it declares as inputs and, by name, values of the
enclosing graph (its captures, passed in ``captured``). Sequences and
optionals (``ferrum.onnx.values``) pass through If's branches and Loop's
carried values as they are; Loop's and Scan's scanned values are tensors.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ferrum._ferrum import Device, Tensor
from ferrum.backend import NdArray
from ferrum.onnx.execute import run_subgraph
from ferrum.onnx.ops._util import AnyTensor
from ferrum.onnx.ops._util import axis as dim_of
from ferrum.onnx.ops.registry import op
from ferrum.onnx.program import Subgraph
from ferrum.onnx.values import Value, as_tensor

__all__ = ["if_", "loop", "scan"]

_MAX_TRIPS = 1 << 24
"""A Loop with neither a trip count nor a condition that ever turns false stops with an error here."""


def _on(device: Device[Any] | None) -> Device[Any]:
    return device if device is not None else NdArray.device()


def _truth(t: Value, what: str = "a condition") -> bool:
    return bool(as_tensor(t, what).to_numpy().reshape(-1)[0])


@op("If", deterministic=False)
def if_(
    cond: AnyTensor,
    then_branch: Subgraph | None = None,
    else_branch: Subgraph | None = None,
    captured: dict[str, Value] | None = None,
    device: Device[Any] | None = None,
) -> tuple[Value, ...]:
    """The outputs of ``then_branch`` when ``cond`` holds, else those of ``else_branch``."""
    branch = then_branch if _truth(cond) else else_branch
    assert branch is not None, "If without its branches"
    return tuple(run_subgraph(branch, [], captured or {}, _on(device)))


@op("Loop", deterministic=False)
def loop(
    trip_count: AnyTensor | None,
    cond: AnyTensor | None,
    *carried: Value,
    body: Subgraph | None = None,
    captured: dict[str, Value] | None = None,
    device: Device[Any] | None = None,
) -> tuple[Value, ...]:
    """Run ``body`` while ``cond`` holds and fewer than ``trip_count`` times; final carried values, then the
    per-iteration scan outputs stacked along a new first dim."""
    assert body is not None, "Loop without its body"
    on = _on(device)
    limit = int(trip_count.to_numpy().reshape(-1)[0]) if trip_count is not None else None
    keep_going = _truth(cond) if cond is not None else True
    state = list(carried)
    n_state = len(state)
    scans: list[list[AnyTensor]] = []
    i = 0
    while keep_going and (limit is None or i < limit):
        if limit is None and cond is None and i >= _MAX_TRIPS:
            raise ValueError(f"Loop ran {_MAX_TRIPS} iterations with no trip count and no condition")
        iteration = Tensor.from_numpy(np.array(i, dtype=np.int64), on)
        flag = cond if cond is not None else Tensor.from_numpy(np.array(True), on)
        outs = run_subgraph(body, [iteration, flag, *state], captured or {}, on)
        cond_out, state, scan_out = outs[0], outs[1 : 1 + n_state], outs[1 + n_state :]
        if not scans:
            scans = [[] for _ in scan_out]
        for acc, value in zip(scans, scan_out, strict=True):
            acc.append(as_tensor(value, "a Loop scan output").unsqueeze_dims([0]))
        keep_going = _truth(cond_out, "Loop's condition output")
        i += 1
    stacked = [Tensor.cat(acc, 0) for acc in scans]
    if not scans and len(body.program.outputs) > 1 + n_state:
        raise ValueError("Loop ran no iteration: the shapes of its scan outputs are unknown")
    return (*state, *stacked)


@op("Scan", since=9, deterministic=False)
def scan(
    *inputs: Value,
    body: Subgraph | None = None,
    num_scan_inputs: int = 1,
    scan_input_axes: tuple[int, ...] | None = None,
    scan_input_directions: tuple[int, ...] | None = None,
    scan_output_axes: tuple[int, ...] | None = None,
    scan_output_directions: tuple[int, ...] | None = None,
    captured: dict[str, Value] | None = None,
    device: Device[Any] | None = None,
) -> tuple[Value, ...]:
    """Run ``body`` over slices of the scan inputs, carrying states; final states, then stacked outputs."""
    assert body is not None, "Scan without its body"
    on = _on(device)
    n_state = len(inputs) - num_scan_inputs
    state = list(inputs[:n_state])
    xs = [as_tensor(x, "a Scan input") for x in inputs[n_state:]]
    in_axes = [
        a if a >= 0 else a + x.rank() for a, x in zip(scan_input_axes or [0] * len(xs), xs, strict=True)
    ]
    in_dirs = list(scan_input_directions or [0] * len(xs))
    length = xs[0].dims()[in_axes[0]] if xs else 0
    per_step: list[list[AnyTensor]] = []
    for t in range(length):
        slices = []
        for x, a, d in zip(xs, in_axes, in_dirs, strict=True):
            index = length - 1 - t if d else t
            slices.append(x.narrow(a, index, 1).squeeze_dims([a]))
        outs = run_subgraph(body, [*state, *slices], captured or {}, on)
        state, ys = outs[:n_state], outs[n_state:]
        if not per_step:
            per_step = [[] for _ in ys]
        for acc, y in zip(per_step, ys, strict=True):
            acc.append(as_tensor(y, "a Scan output"))
    out_axes = list(scan_output_axes or [0] * len(per_step))
    out_dirs = list(scan_output_directions or [0] * len(per_step))
    stacked = []
    for acc, a, d in zip(per_step, out_axes, out_dirs, strict=True):
        items = acc[::-1] if d else acc
        axis = dim_of(a, items[0].rank() + 1)  # a new dim of the stacked output
        stacked.append(Tensor.cat([y.unsqueeze_dims([axis]) for y in items], axis))
    return (*state, *stacked)
