"""Node patterns a compiled plan runs as one fused kernel (used by ``ferrum.onnx.plan``).

Each matcher finds a chain of steps as exporters write it and replaces the
chain's last step by one instruction; the chain's other steps no longer run.
Matching is exact: every intermediate value has the chain's next step as its
only reader and is not a graph output, constants have the values the pattern
needs, and shapes fit the kernel, or the steps stay as they are.

- GELU, ``x * 0.5 * (1 + erf(x / sqrt(2)))`` (either order of the products), becomes one ``gelu``.
- Attention, ``MatMul(q, k) [-> Div or Mul by a constant] [-> Add mask] -> Softmax(last dim)
  [-> Where(IsNaN(p), 0, p)] -> MatMul(., v)``, becomes one ``attention``: the two products with the
  scaling, mask and softmax in one pass over the scores.
- RMSNorm, ``Pow(x, 2) -> ReduceMean(trailing dims) -> Add eps -> Sqrt -> Reciprocal or Div(1, .)
  -> Mul x`` (or ``Div(x, .)``), then an optional no-op Cast and an optional Mul by a constant weight,
  becomes one ``rms_norm``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ferrum._ferrum import Float
from ferrum.onnx.lower import Instr, Lowering, _kwarg, _scalar
from ferrum.onnx.ops._util import axis as dim_of
from ferrum.onnx.program import Step

__all__ = ["patterns"]


class _Graph:
    """Who reads and who writes each value, and claims of steps by the patterns found so far."""

    def __init__(self, low: Lowering) -> None:
        self.low = low
        self.steps = low.program.steps
        self.readers: dict[str, list[int]] = {}
        self.producer: dict[str, int] = {}
        for i, step in enumerate(self.steps):
            read = {*(n for n in step.inputs if n is not None), *step.tensor_kwargs.values(), *step.captures}
            for n in read:
                self.readers.setdefault(n, []).append(i)
            for o in step.outputs:
                if o:
                    self.producer[o] = i
        self.kept = {o.name for o in low.program.outputs}
        self.index = {id(s): i for i, s in enumerate(self.steps)}
        self.replaced: dict[int, list[Instr]] = {}
        self.skipped: set[int] = set()

    def readers_of(self, name: str) -> list[Step]:
        """The steps reading ``name``, or none when it is a graph output (it must stay computed)."""
        return [] if name in self.kept else [self.steps[i] for i in self.readers.get(name, [])]

    def only_reader(self, name: str) -> Step | None:
        found = self.readers.get(name, [])
        return self.steps[found[0]] if len(found) == 1 and name not in self.kept else None

    def made_by(self, name: str | None) -> Step | None:
        return self.steps[self.producer[name]] if name is not None and name in self.producer else None

    @staticmethod
    def other(step: Step | None, name: str, op: str) -> str | None:
        """The operand of the two-input ``op`` step ``step`` that is not ``name``."""
        if step is None or step.op_type != op or step.layer is not None or len(step.inputs) != 2:
            return None
        if name not in step.inputs:
            return None
        a, b = step.inputs
        return b if a == name else a

    def near(self, name: str | None, value: float) -> bool:
        found = _scalar(self.low, name)
        return found is not None and abs(found - value) <= 1e-6 * max(1.0, abs(value))

    def claim(self, chain: list[Step], last: Step, instrs: list[Instr]) -> bool:
        """Replace ``chain`` (``last`` among it) by ``instrs``, unless a step is claimed already or
        computed once at compile time."""
        ids = [self.index[id(s)] for s in chain]
        if any(i in self.skipped or i in self.replaced for i in ids):
            return False
        if any(o in self.low.static for s in chain for o in s.outputs if o):
            return False
        self.replaced[self.index[id(last)]] = instrs
        self.skipped.update(i for i in ids if i != self.index[id(last)])
        return True


def patterns(low: Lowering) -> tuple[dict[int, list[Instr]], set[int]]:
    """Node patterns that one fused kernel computes: the instructions that replace each pattern's last
    step (by its index), and the pattern's other steps, which no longer run."""
    graph = _Graph(low)
    for step in graph.steps:
        if step.layer is not None:
            continue
        if step.op_type == "Erf":
            _gelu(graph, step)
        elif step.op_type == "Softmax":
            _attention(graph, step)
        elif step.op_type == "Pow":
            _rms_norm(graph, step)
    return graph.replaced, graph.skipped


def _gelu(g: _Graph, erf: Step) -> None:
    """``x * 0.5 * (1 + erf(x / sqrt(2)))`` as one ``gelu`` (``erf`` alone is a libm call per element)."""
    low = g.low
    scaled = g.made_by(erf.inputs[0])
    if scaled is None or len(scaled.inputs) != 2 or scaled.inputs[0] is None:
        return
    if erf.inputs[0] is None or g.only_reader(erf.inputs[0]) is not erf:
        return
    x = scaled.inputs[0]
    if not (
        (scaled.op_type == "Div" and g.near(scaled.inputs[1], math.sqrt(2.0)))
        or (scaled.op_type == "Mul" and g.near(scaled.inputs[1], math.sqrt(0.5)))
    ):
        return
    add = g.only_reader(erf.outputs[0])
    if add is None or not g.near(g.other(add, erf.outputs[0], "Add"), 1.0):
        return
    product = g.only_reader(add.outputs[0])
    factor = g.other(product, add.outputs[0], "Mul")
    if product is None or factor is None:
        return
    chain = [scaled, erf, add, product]
    last = product
    if factor == x:  # (x * (1 + erf)) * 0.5
        half = g.only_reader(product.outputs[0])
        if half is None or not g.near(g.other(half, product.outputs[0], "Mul"), 0.5):
            return
        chain.append(half)
        last = half
    else:  # (x * 0.5) * (1 + erf)
        halved = g.made_by(factor)
        if halved is None or not g.near(g.other(halved, x, "Mul"), 0.5):
            return
        if g.only_reader(factor) is product:
            chain.append(halved)
    if not low.ok(x) or low.tensor(x).kind is not Float or low.dims(x) != low.dims(last.outputs[0]):
        return
    g.claim(chain, last, [Instr("unary", {"op": "gelu"}, (x,), (last.outputs[0],), last.node or "Gelu")])


def _float_of(low: Lowering, names: tuple[str | None, ...]) -> str | None:
    """The dtype the named values (None: an absent operand) share when all are plan-readable Float
    tensors, else None."""
    present = [n for n in names if n is not None]
    if not all(low.ok(n) for n in present):
        return None
    dtypes = {low.dtype(n) for n in present}
    if len(dtypes) != 1 or any(low.tensor(n).kind is not Float for n in present):
        return None
    return dtypes.pop()


def _attention(g: _Graph, softmax: Step) -> None:
    """``softmax(scale * (q @ k) + mask) @ v`` as one ``attention`` instruction."""
    low = g.low
    chain = [softmax]
    p = softmax.inputs[0]
    if p is None or not softmax.outputs or not low.ok(p) or g.only_reader(p) is not softmax:
        return
    scores_dims = low.dims(p)
    rank = len(scores_dims)
    opset = int(softmax.kwargs.get("opset", low.program.opset))
    given = softmax.kwargs.get("axis")
    if rank < 2 or dim_of(int(given) if given is not None else (-1 if opset >= 13 else 1), rank) != rank - 1:
        return
    # the additive mask: either operand of an Add whose other operand comes from the scores' chain
    bias: str | None = None
    scores = p
    add = g.made_by(p)
    if add is not None and add.op_type == "Add" and add.layer is None and len(add.inputs) == 2:
        for mine, theirs in (add.inputs, add.inputs[::-1]):
            found = g.made_by(mine)
            if mine is not None and found is not None and found.op_type in ("MatMul", "Div", "Mul"):
                if g.only_reader(mine) is add and theirs is not None:
                    bias, scores = theirs, mine
                    chain.append(add)
                    break
        else:
            return
    scale = 1.0
    made = g.made_by(scores)
    if made is not None and made.op_type in ("Div", "Mul") and made.layer is None and len(made.inputs) == 2:
        a, b = made.inputs
        for inner, constant in ((a, b), (b, a)) if made.op_type == "Mul" else ((a, b),):
            value = _scalar(low, constant)
            producer = g.made_by(inner)
            if inner is None or value is None or producer is None or producer.op_type != "MatMul":
                continue
            if made.op_type == "Div" and value == 0.0:
                return
            scale = value if made.op_type == "Mul" else 1.0 / value
            if g.only_reader(inner) is not made or not math.isfinite(scale):
                return
            chain.append(made)
            scores = inner
            break
        else:
            return
    first = g.made_by(scores)
    if first is None or first.op_type != "MatMul" or first.layer is not None or len(first.inputs) != 2:
        return
    if g.only_reader(scores) is not (chain[-1] if len(chain) > 1 else softmax):
        return
    chain.append(first)
    q, k = first.inputs
    # after the softmax: the product by v, or first the exports' NaN guard Where(IsNaN(p), 0, p)
    weights = softmax.outputs[0]
    guard = False
    readers = g.readers_of(weights)
    if len(readers) == 2:
        isnan = next((r for r in readers if r.op_type == "IsNaN"), None)
        where = next((r for r in readers if r.op_type == "Where"), None)
        if isnan is None or where is None or isnan.layer is not None or where.layer is not None:
            return
        if g.only_reader(isnan.outputs[0]) is not where or len(where.inputs) != 3:
            return
        cond, zero, kept = where.inputs
        if cond != isnan.outputs[0] or kept != weights or not g.near(zero, 0.0):
            return
        chain += [isnan, where]
        weights = where.outputs[0]
        guard = True
        readers = g.readers_of(weights)
    if len(readers) != 1:
        return
    second = readers[0]
    if second.op_type != "MatMul" or second.layer is not None or len(second.inputs) != 2:
        return
    if second.inputs[0] != weights:
        return
    chain.append(second)
    v = second.inputs[1]
    out = second.outputs[0]
    if q is None or k is None or v is None or _float_of(low, (q, k, v, bias, out)) is None:
        return
    dq, dk, dv = low.dims(q), low.dims(k), low.dims(v)
    # batch dims equal (no broadcasting product), inner dims chaining
    if not (len(dq) == len(dk) == len(dv) == rank and dq[:-2] == dk[:-2] == dv[:-2]):
        return
    if dq[-1] != dk[-2] or dk[-1] != dv[-2]:
        return
    if scores_dims != dq[:-1] + dk[-1:] or low.dims(out) != dq[:-1] + dv[-1:]:
        return
    if bias is not None:
        db = low.dims(bias)
        if len(db) > rank or any(b not in (1, s) for b, s in zip(db[::-1], scores_dims[::-1], strict=False)):
            return
    attrs: dict[str, Any] = {"scale": float(scale), "nan_to_zero": int(guard)}
    g.claim(chain, second, [Instr("attention", attrs, (q, k, v, bias), (out,), second.node or "Attention")])


def _rms_norm(g: _Graph, pow_: Step) -> None:
    """``x / sqrt(mean(x ** 2) + eps) [* w]`` as one ``rms_norm`` instruction."""
    low = g.low
    x = pow_.inputs[0] if len(pow_.inputs) == 2 else None
    if x is None or not g.near(pow_.inputs[1], 2.0) or _float_of(low, (x,)) is None:
        return
    dims = low.dims(x)
    rank = len(dims)
    mean = g.only_reader(pow_.outputs[0])
    if mean is None or mean.op_type != "ReduceMean" or mean.layer is not None:
        return
    if mean.inputs[0] != pow_.outputs[0]:
        return
    if int(mean.kwargs.get("keepdims", 1)) != 1 or rank == 0:
        return
    axes = _kwarg(low, mean, "axes")
    if not axes or any(n not in low.static for n in mean.tensor_kwargs.values()):
        return
    reduced = sorted({dim_of(int(a), rank) for a in axes})
    start = reduced[0]
    if reduced != list(range(start, rank)):
        return
    add = g.only_reader(mean.outputs[0])
    eps_name = g.other(add, mean.outputs[0], "Add")
    epsilon = _scalar(low, eps_name)
    if add is None or epsilon is None or not (math.isfinite(epsilon) and epsilon >= 0.0):
        return
    sqrt = g.only_reader(add.outputs[0])
    if sqrt is None or sqrt.op_type != "Sqrt" or sqrt.layer is not None:
        return
    chain = [pow_, mean, add, sqrt]
    after = g.only_reader(sqrt.outputs[0])
    if after is None or after.layer is not None:
        return
    if after.op_type == "Div" and after.inputs == (x, sqrt.outputs[0]):
        normed = after
    else:
        if after.op_type == "Reciprocal":
            pass
        elif after.op_type != "Div" or after.inputs[1] != sqrt.outputs[0] or not g.near(after.inputs[0], 1.0):
            return
        chain.append(after)
        normed_step = g.only_reader(after.outputs[0])
        if g.other(normed_step, after.outputs[0], "Mul") != x or normed_step is None:
            return
        normed = normed_step
    chain.append(normed)
    last = normed
    cast = g.only_reader(last.outputs[0])
    if cast is not None and cast.op_type == "Cast" and cast.layer is None and low.ok(cast.outputs[0]):
        if low.dtype(cast.outputs[0]) == low.dtype(x):
            chain.append(cast)
            last = cast
    weight: str | None = None
    mul = g.only_reader(last.outputs[0])
    w = g.other(mul, last.outputs[0], "Mul")
    n = math.prod(dims[start:])
    if mul is not None and w is not None and w in low.static and _float_of(low, (w, x)) is not None:
        wd = low.dims(w)
        if math.prod(wd) == n and all(a == b for a, b in zip(wd[::-1], dims[::-1], strict=False)):
            if np.asarray(low.tensor(w).to_numpy()).size == n and low.dims(mul.outputs[0]) == dims:
                chain.append(mul)
                last, weight = mul, w
    if low.dims(last.outputs[0]) != dims or not low.ok(last.outputs[0]):
        return
    attrs = {"start": start, "epsilon": float(epsilon)}
    g.claim(chain, last, [Instr("rms_norm", attrs, (x, weight), (last.outputs[0],), last.node or "RMSNorm")])
