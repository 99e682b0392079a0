"""Chains of traced instructions that run as one fused engine kernel.

ferrum's modules compute a Linear layer, a LayerNorm and attention with
several tensor methods each; traced, each method is an instruction. The
patterns here find those chains in a trace and put the plan's fused
instruction in place of the chain's last one (the rest is then dead):

- Linear: ``x @ W`` (a constant weight, its leading dims of size 1) and an
  optional ``+ b`` (a constant bias) become one ``linear``.
- LayerNorm: ``var_mean_bias`` over the last dim, ``(x - mean) / sqrt(var + eps) * gamma
  [+ beta]`` with constant ``gamma`` and ``beta``, becomes one ``layer_norm``.
- Attention: ``masked_softmax(q @ kᵀ, mask) @ v`` with no mask or a constant
  one that leaves every row some key becomes one ``attention`` (scaling,
  additive mask, softmax and both products in one pass over each row).

A chain fuses only when each intermediate value has the next link as its only
reader and is not a result. The fused kernels sum in another order than the
op-by-op path: results agree to float rounding (about 1e-6 relative), not bit
for bit.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from ferrum._ferrum import Tensor

__all__ = ["Instr", "fuse"]


@dataclasses.dataclass
class Instr:
    """One instruction of a trace: the plan op, its attributes, the slots it reads and writes."""

    op: str
    attrs: dict[str, Any]
    inputs: list[int | None]
    outputs: list[int]
    label: str
    shapes: list[tuple[int, ...]] = dataclasses.field(default_factory=list)


class _Graph:
    def __init__(
        self,
        instrs: list[Instr],
        constants: dict[int, Tensor[Any, Any, Any]],
        results: set[int],
        input_shapes: dict[int, tuple[int, ...]],
    ) -> None:
        self.instrs = instrs
        self.input_shapes = input_shapes
        self.constants = constants
        self.results = results
        self.producer: dict[int, int] = {}
        self.readers: dict[int, list[int]] = {}
        for i, ins in enumerate(instrs):
            for s in ins.outputs:
                self.producer[s] = i
            for s in ins.inputs:
                if s is not None:
                    self.readers.setdefault(s, []).append(i)
        used = [s for ins in instrs for s in (*ins.outputs, *(x for x in ins.inputs if x is not None))]
        self.next_slot = max([*used, *constants, *results, 0]) + 1

    def made_by(self, slot: int | None, name: str, /, **attrs: Any) -> Instr | None:
        """The instruction writing ``slot`` when it is ``name`` with ``attrs``, read once and not a result."""
        if slot is None or slot in self.results or slot not in self.producer:
            return None
        if len(self.readers.get(slot, [])) != 1:
            return None
        ins = self.instrs[self.producer[slot]]
        if ins.op != name or any(ins.attrs.get(k) != v for k, v in attrs.items()):
            return None
        return ins

    def constant(self, tensor: Tensor[Any, Any, Any]) -> int:
        slot = self.next_slot
        self.next_slot += 1
        self.constants[slot] = tensor
        return slot

    def shape(self, slot: int) -> tuple[int, ...] | None:
        if slot in self.input_shapes:
            return self.input_shapes[slot]
        if slot in self.constants:
            return tuple(self.constants[slot].dims())
        if slot in self.producer:
            ins = self.instrs[self.producer[slot]]
            if ins.shapes:
                return tuple(ins.shapes[ins.outputs.index(slot)])
        return None


def _vector(g: _Graph, slot: int | None, size: int) -> Tensor[Any, Any, Any] | None:
    """The constant in ``slot`` as a ``[size]`` tensor, when it holds ``size`` values over its last dim."""
    if slot is None or slot not in g.constants:
        return None
    t = g.constants[slot]
    dims = tuple(t.dims())
    if not dims or dims[-1] != size or math.prod(dims) != size:
        return None
    return t.reshape((size,))


def _linear(g: _Graph, i: int, ins: Instr) -> Instr | None:
    """``x @ W [+ b]`` ending at ``ins`` (the add, or a matmul no add follows)."""
    bias_slot: int | None = None
    matmul = ins
    if ins.op == "t_binary" and ins.attrs.get("op") == "add":
        found = g.made_by(ins.inputs[0], "t_matmul")
        if found is None:
            return None
        matmul, bias_slot = found, ins.inputs[1]
    elif ins.op != "t_matmul":
        return None
    x, w = matmul.inputs
    if x is None or w is None or w not in g.constants:
        return None
    w_dims = tuple(g.constants[w].dims())
    x_dims = g.shape(x)
    if x_dims is None or len(w_dims) < 2 or len(w_dims) != len(x_dims) or any(d != 1 for d in w_dims[:-2]):
        return None
    d_in, d_out = w_dims[-2:]
    attrs_shape = list(ins.shapes[0]) if ins.shapes else None
    if attrs_shape is None:
        return None
    inputs: list[int | None] = [x, g.constant(g.constants[w].reshape((d_in, d_out)))]
    if bias_slot is not None:
        bias = _vector(g, bias_slot, d_out)
        if bias is None or tuple(g.shape(bias_slot) or ()) != (1,) * (len(x_dims) - 1) + (d_out,):
            return None
        inputs.append(g.constant(bias))
    label = f"linear({ins.label})"
    return Instr("linear", {"shape": attrs_shape}, inputs, list(ins.outputs), label, ins.shapes)


def _layer_norm(g: _Graph, i: int, ins: Instr) -> Instr | None:
    """``(x - mean) / sqrt(var + eps) * gamma [+ beta]`` ending at ``ins``."""
    beta_slot: int | None = None
    scaled = ins
    if ins.op == "t_binary" and ins.attrs.get("op") == "add":
        found = g.made_by(ins.inputs[0], "t_binary", op="mul")
        if found is None:
            return None
        scaled, beta_slot = found, ins.inputs[1]
    if scaled.op != "t_binary" or scaled.attrs.get("op") != "mul":
        return None
    div = g.made_by(scaled.inputs[0], "t_binary", op="div")
    if div is None:
        return None
    centred = g.made_by(div.inputs[0], "t_binary", op="sub")
    root = g.made_by(div.inputs[1], "t_float_unary", op="sqrt")
    if centred is None or root is None:
        return None
    shifted = g.made_by(root.inputs[0], "t_scalar", op="add", reflected=0, int=0)
    if shifted is None:
        return None
    x, mean = centred.inputs
    stats_at = g.producer.get(mean) if mean is not None else None
    if x is None or stats_at is None:
        return None
    stats = g.instrs[stats_at]
    x_dims = g.shape(x)
    if stats.op != "t_var_mean" or stats.inputs[0] != x or x_dims is None or not x_dims:
        return None
    var_slot, mean_slot = stats.outputs
    if shifted.inputs[0] != var_slot or len(g.readers.get(var_slot, [])) != 1 or mean_slot in g.results:
        return None
    if len(g.readers.get(mean_slot, [])) != 1 or var_slot in g.results:
        return None
    rank = len(x_dims)
    if stats.attrs["dim"] not in (rank - 1, -1):
        return None
    d = x_dims[-1]
    gamma = _vector(g, scaled.inputs[1], d)
    if gamma is None:
        return None
    inputs: list[int | None] = [x, g.constant(gamma)]
    if beta_slot is not None:
        beta = _vector(g, beta_slot, d)
        if beta is None:
            return None
        inputs.append(g.constant(beta))
    attrs = {"start": rank - 1, "epsilon": float(shifted.attrs["value"])}
    return Instr("layer_norm", attrs, inputs, list(ins.outputs), f"layer_norm({ins.label})", ins.shapes)


def _attention(g: _Graph, i: int, ins: Instr) -> Instr | None:
    """``masked_softmax(q @ kᵀ, mask) @ v`` ending at ``ins`` (the second product)."""
    if ins.op != "t_matmul":
        return None
    weights, v = ins.inputs
    soft = g.made_by(weights, "t_masked_softmax")
    if soft is None or v is None:
        return None
    scores = g.made_by(soft.inputs[0], "t_matmul")
    if scores is None:
        return None
    q, kt = scores.inputs
    if q is None or kt is None:
        return None
    inputs: list[int | None] = [q, kt, v]
    mask = soft.inputs[1] if len(soft.inputs) > 1 else None
    if mask is not None:
        if mask not in g.constants:
            return None
        hidden = g.constants[mask].to_numpy().astype(bool)
        score_dims = g.shape(soft.outputs[0])
        if score_dims is None or hidden.ndim != len(score_dims):
            return None
        # a row with every key hidden: masked_softmax spreads it evenly, an additive bias would not
        if np.broadcast_to(hidden, score_dims).all(axis=-1).any():
            return None
        fill = float(soft.attrs["fill"])
        bias = np.where(hidden, np.float32(fill), np.float32(0.0)).astype(np.float32)
        inputs.append(g.constant(Tensor.from_numpy(bias, g.constants[mask].device())))
    attrs = {"scale": float(soft.attrs["scale"]), "nan_to_zero": 0}
    return Instr("attention", attrs, inputs, list(ins.outputs), f"attention({ins.label})", ins.shapes)


def fuse(
    instrs: list[Instr],
    constants: dict[int, Tensor[Any, Any, Any]],
    results: set[int],
    input_shapes: dict[int, tuple[int, ...]],
) -> list[Instr]:
    """``instrs`` with each fusable chain's last instruction replaced by the fused one (the chain's other
    instructions stay, dead, for the caller to drop); new constants are added to ``constants``.
    ``input_shapes``: the shape of each input slot."""
    g = _Graph(instrs, constants, results, input_shapes)
    out = list(instrs)
    for i, ins in enumerate(instrs):
        for pattern in (_attention, _layer_norm, _linear):
            fused = pattern(g, i, ins)
            if fused is not None:
                out[i] = fused
                break
    return out
