"""Einsum (since opset 12): Einstein summation as ferrum's permute, reshape, select, sum and matmul.

The equation is parsed into one list of labels per operand (an ellipsis becomes
anonymous labels, right-aligned and broadcast as NumPy does). Each operand
first takes its diagonals (a label repeated in one term) and sums the labels
no one else needs; the operands are then contracted pairwise from the left,
each pair as one batched matmul (``[batch, rows, k] @ [batch, k, cols]``), or
as a broadcast product when the pair shares no summed label; what is left is
summed and permuted into the output's order. Every step is a differentiable
ferrum op, so gradients flow through an imported Einsum.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from ferrum._ferrum import Tensor
from ferrum.onnx.ops._util import AnyTensor
from ferrum.onnx.ops.registry import op

__all__ = ["einsum", "parse_equation"]

MAX_RANK = 6
"""The highest rank a ferrum tensor has (an intermediate above it is refused)."""

_ELLIPSIS = "..."


def _term(term: str, rank: int | None, where: str) -> tuple[list[str], int]:
    """A term's letters with the ellipsis as ``"."`` (one entry) and the number of dims it stands for."""
    if term.count(_ELLIPSIS) > 1 or "." in term.replace(_ELLIPSIS, ""):
        raise ValueError(f"Einsum: {where} {term!r} has a stray '.' or more than one ellipsis")
    letters = term.replace(_ELLIPSIS, "")
    bad = sorted({c for c in letters if not ("a" <= c <= "z" or "A" <= c <= "Z")})
    if bad:
        raise ValueError(f"Einsum: {where} {term!r} has characters that are not letters: {bad}")
    parts: list[str] = []
    head, _, tail = term.partition(_ELLIPSIS)
    parts += list(head)
    if _ELLIPSIS in term:
        parts.append(".")
    parts += list(tail)
    extra = 0
    if rank is not None:
        if _ELLIPSIS in term:
            extra = rank - len(letters)
        if extra < 0 or (_ELLIPSIS not in term and len(letters) != rank):
            raise ValueError(f"Einsum: {where} {term!r} names {len(letters)} dims of a rank-{rank} operand")
    return parts, extra


def parse_equation(equation: str, ranks: Sequence[int]) -> tuple[list[list[str]], list[str]]:
    """Each operand's labels and the output's, ellipses expanded to anonymous labels ``"0"``, ``"1"``, ...

    The anonymous labels are right-aligned across operands (the ellipsis dims
    broadcast as NumPy's trailing dims do); in implicit mode (no ``->``) the
    output is the ellipsis dims, then the letters used exactly once in ASCII
    order. Raises ``ValueError`` naming what is wrong with the equation.
    """
    text = equation.replace(" ", "")
    lhs, arrow, rhs = text.partition("->")
    if "->" in rhs:
        raise ValueError(f"Einsum: equation {equation!r} has more than one '->'")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise ValueError(f"Einsum: equation {equation!r} has {len(terms)} terms for {len(ranks)} inputs")
    parsed = [_term(term, ranks[i], f"term {i} of {equation!r}") for i, term in enumerate(terms)]
    width = max((extra for _, extra in parsed), default=0)
    anonymous = [str(i) for i in range(width)]
    operands = []
    for parts, extra in parsed:
        labels: list[str] = []
        for part in parts:
            labels += anonymous[width - extra :] if part == "." else [part]
        operands.append(labels)
    if arrow:
        out_parts, _ = _term(rhs, None, f"the output of {equation!r}")
        output: list[str] = []
        for part in out_parts:
            output += anonymous if part == "." else [part]
        letters = [c for c in output if c not in anonymous]
        if len(set(letters)) != len(letters):
            raise ValueError(f"Einsum: the output of {equation!r} repeats a label")
        used = {label for labels in operands for label in labels}
        missing = sorted(set(letters) - used)
        if missing:
            raise ValueError(f"Einsum: output labels {missing} of {equation!r} are in no input")
    else:
        counts = Counter(label for labels in operands for label in labels if label not in anonymous)
        output = anonymous + sorted(label for label, n in counts.items() if n == 1)
    return operands, output


def _sizes(operands: Sequence[AnyTensor], labels: Sequence[Sequence[str]], equation: str) -> dict[str, int]:
    """Each label's size; a label of size 1 in one operand broadcasts to its size elsewhere."""
    sizes: dict[str, int] = {}
    for x, names in zip(operands, labels, strict=True):
        for label, size in zip(names, x.dims(), strict=True):
            known = sizes.get(label, 1)
            if size != 1 and known != 1 and size != known:
                shown = "the ellipsis dims" if label.isdigit() else f"label {label!r}"
                raise ValueError(f"Einsum: {shown} of {equation!r} has sizes {known} and {size}")
            sizes[label] = max(known, size) if label in sizes else size
    return sizes


def _check_rank(rank: int, equation: str) -> None:
    if rank > MAX_RANK:
        raise ValueError(
            f"Einsum: {equation!r} needs an intermediate of rank {rank}, above ferrum's {MAX_RANK}"
        )


def _diagonals(x: AnyTensor, labels: list[str]) -> tuple[AnyTensor, list[str]]:
    """``x`` with each label repeated in its term reduced to its diagonal (the label kept once, last)."""
    while True:
        counts = Counter(labels)
        repeated = next((label for label in labels if counts[label] > 1), None)
        if repeated is None:
            return x, labels
        where = [i for i, label in enumerate(labels) if label == repeated]
        dims = tuple(x.dims())
        sizes = {dims[i] for i in where}
        if len(sizes) != 1:
            raise ValueError(f"Einsum: the diagonal over {repeated!r} has dims of sizes {sorted(sizes)}")
        (n,) = sizes
        rest = [i for i in range(len(labels)) if i not in where]
        x = x.permute(rest + where) if rest + where != list(range(len(labels))) else x
        k = len(where)
        x = x.reshape((*(dims[i] for i in rest), n**k))
        # entry (i, i, ..., i) of the k merged dims sits at i * (1 + n + ... + n ** (k - 1))
        step = sum(n**j for j in range(k))
        x = x.select(len(rest), Tensor.arange(0, n, x.device()) * step) if n else x
        labels = [labels[i] for i in rest] + [repeated]


def _sum_out(x: AnyTensor, labels: list[str], keep: set[str]) -> tuple[AnyTensor, list[str]]:
    """``x`` summed over the labels not in ``keep`` (those dims removed)."""
    drop = [i for i, label in enumerate(labels) if label not in keep]
    if not drop:
        return x, labels
    kept = [label for label in labels if label in keep]
    dims = tuple(x.dims())
    summed = x.sum_dims(drop)
    return summed.reshape(tuple(dims[i] for i, label in enumerate(labels) if label in keep)), kept


def _arranged(x: AnyTensor, labels: list[str], order: list[str]) -> AnyTensor:
    """``x`` with its dims in ``order`` (every label of ``labels``, once)."""
    perm = [labels.index(label) for label in order]
    return x.permute(perm) if perm != list(range(len(perm))) else x


def _broadened(x: AnyTensor, labels: list[str], sizes: dict[str, int]) -> AnyTensor:
    """``x`` with its size-1 dims expanded to their labels' sizes."""
    want = tuple(sizes[label] for label in labels)
    return x.expand(want) if tuple(x.dims()) != want else x


def _contract(
    a: AnyTensor,
    la: list[str],
    b: AnyTensor,
    lb: list[str],
    needed: set[str],
    sizes: dict[str, int],
    equation: str,
) -> tuple[AnyTensor, list[str]]:
    """The product of ``a`` and ``b`` summed over their shared labels not ``needed`` later."""
    a, la = _sum_out(a, la, set(lb) | needed)
    b, lb = _sum_out(b, lb, set(la) | needed)
    shared = [label for label in la if label in lb]
    batch = [label for label in shared if label in needed]
    summed = [label for label in shared if label not in needed]
    a_only = [label for label in la if label not in lb]
    b_only = [label for label in lb if label not in la]
    out_labels = batch + a_only + b_only
    _check_rank(len(out_labels), equation)
    if not summed:
        # nothing to sum: a broadcast product, each side with size-1 dims for the other's labels
        a_view = _arranged(a, la, batch + a_only).reshape(
            tuple(a.dims()[la.index(label)] for label in batch + a_only) + (1,) * len(b_only)
        )
        b_view = _arranged(b, lb, batch + b_only)
        b_dims = tuple(b.dims()[lb.index(label)] for label in batch + b_only)
        b_view = b_view.reshape(b_dims[: len(batch)] + (1,) * len(a_only) + b_dims[len(batch) :])
        return a_view * b_view, out_labels  # ferrum broadcasts size-1 dims between equal ranks
    a = _broadened(_arranged(a, la, batch + a_only + summed), batch + a_only + summed, sizes)
    b = _broadened(_arranged(b, lb, batch + summed + b_only), batch + summed + b_only, sizes)

    def size(labels: list[str]) -> int:
        return math.prod(sizes[label] for label in labels)

    product = a.reshape((size(batch), size(a_only), size(summed))).matmul(
        b.reshape((size(batch), size(summed), size(b_only)))
    )
    return product.reshape(tuple(sizes[label] for label in out_labels)), out_labels


@op("Einsum")
def einsum(*inputs: AnyTensor, equation: str = "") -> AnyTensor:
    """Einsum: the Einstein summation ``equation`` of ``inputs``, as ``numpy.einsum`` computes it.

    ``equation`` is ``"term,term,...->output"`` with one term per input, a
    letter per dim (``a``-``z`` and ``A``-``Z`` are distinct), spaces ignored.
    A label repeated in one term takes the diagonal, a label absent from the
    output is summed, ``...`` stands for the dims no letter names (broadcast
    across the inputs from the right) and without ``->`` the output is the
    ellipsis dims and then the letters used once, in ASCII order. Transformer
    exports' ``bhqd,bhkd->bhqk``, ``bij,bjk->bik``, ``...ij,...jk->...ik``,
    ``i,j->ij``, ``ii->i`` or ``ij->`` all run. The inputs are of one kind,
    Float or Int; the result is of that kind, rank 0 when the output has no
    label. An equation that does not fit the inputs (term count, ranks, sizes
    that differ and are not 1, characters that are not letters, an output
    label no input has or that repeats) raises ``ValueError``, and so does one
    whose contraction would need a tensor above rank 6.

    Example:
        >>> import numpy as np
        >>> from ferrum import Tensor
        >>> from ferrum.backend import NdArray
        >>> a = Tensor.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3), NdArray.device())
        >>> b = Tensor.from_numpy(np.ones((3, 2), np.float32), NdArray.device())
        >>> einsum(a, b, equation="ij,jk->ik").to_numpy().tolist()
        [[3.0, 3.0], [12.0, 12.0]]
        >>> einsum(a, equation="ij->j").to_numpy().tolist()
        [3.0, 5.0, 7.0]
    """
    if not inputs:
        raise ValueError("Einsum: no inputs")
    operands, output = parse_equation(equation, [x.rank() for x in inputs])
    sizes = _sizes(inputs, operands, equation)
    current: list[tuple[AnyTensor, list[str]]] = []
    for i, (x, labels) in enumerate(zip(inputs, operands, strict=True)):
        x, labels = _diagonals(x, list(labels))
        others = {label for j, names in enumerate(operands) if j != i for label in names}
        current.append(_sum_out(x, labels, others | set(output)))
    x, labels = current[0]
    for j in range(1, len(current)):
        needed = set(output) | {label for _, names in current[j + 1 :] for label in names}
        x, labels = _contract(x, labels, current[j][0], current[j][1], needed, sizes, equation)
    x, labels = _sum_out(x, labels, set(output))
    if not output:
        return x.reshape(())
    return _arranged(x, labels, output)
