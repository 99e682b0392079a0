"""The ``ai.onnx.preview.training`` optimizer steps: Adagrad, Adam, Momentum.

Each updates one or more tensors ``X`` from their gradients ``G`` and
optimizer state, given the learning rate ``R`` and the step count ``T``
(scalars). With ``n`` tensors the inputs are ``R, T, X1..Xn, G1..Gn`` and
then each state in the same grouping (``H1..Hn``, ...); the outputs are the
new ``X1..Xn`` and then the new states in that order. ``R`` and ``T`` are
read as numbers; the updates are engine tensor ops, computed in each ``X``'s
type.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ferrum._ferrum import Float, KindError
from ferrum.onnx.ops._util import AnyTensor
from ferrum.onnx.ops.registry import op

__all__ = ["adagrad", "adam", "momentum"]

_DOMAIN = "ai.onnx.preview.training"


def _scalar(name: str, value: AnyTensor) -> float:
    array = np.asarray(value.to_numpy())
    if array.size != 1:
        raise ValueError(f"{name} must be a scalar, found shape {list(array.shape)}")
    return float(array.reshape(-1)[0])


def _groups(name: str, tensors: Sequence[AnyTensor], states: int) -> list[list[AnyTensor]]:
    """``X1..Xn, G1..Gn, S1..Sn, ...`` split into ``n`` rows ``[X, G, S, ...]`` (shapes and kinds checked)."""
    width = 2 + states
    if not tensors or len(tensors) % width:
        raise ValueError(
            f"{name}: expected R, T and {width} inputs per updated tensor (X, G and {states} state), "
            f"found {len(tensors) + 2} inputs"
        )
    n = len(tensors) // width
    rows = [[tensors[k * n + i] for k in range(width)] for i in range(n)]
    for row in rows:
        if any(t.kind is not Float for t in row):
            raise KindError(f"{name}: X, G and the states must be float tensors")
        shapes = {tuple(t.dims()) for t in row}
        if len(shapes) > 1:
            raise ValueError(f"{name}: X, G and their states must have one shape, found {sorted(shapes)}")
    return rows


def _regularized(x: AnyTensor, g: AnyTensor, norm_coefficient: float) -> AnyTensor:
    # The gradient of the L2 term norm_coefficient / 2 * ||X||^2 joins G.
    return g + x * norm_coefficient if norm_coefficient else g


@op("Adagrad", domain=_DOMAIN)
def adagrad(
    r: AnyTensor,
    t: AnyTensor,
    *tensors: AnyTensor,
    decay_factor: float = 0.0,
    epsilon: float = 1e-6,
    norm_coefficient: float = 0.0,
) -> tuple[AnyTensor, ...]:
    """Adagrad: ``H += G'^2``, ``X -= R / (1 + T decay_factor) * G' / (sqrt(H) + epsilon)``.

    ``G' = G + norm_coefficient X``; inputs ``R, T, X1..Xn, G1..Gn, H1..Hn``,
    outputs the new ``X1..Xn, H1..Hn``.
    """
    rate = _scalar("Adagrad: R", r) / (1 + _scalar("Adagrad: T", t) * decay_factor)
    xs, hs = [], []
    for x, g, h in _groups("Adagrad", tensors, 1):
        grad = _regularized(x, g, norm_coefficient)
        h_new = h + grad * grad
        xs.append(x - grad / (h_new.sqrt() + epsilon) * rate)
        hs.append(h_new)
    return (*xs, *hs)


@op("Adam", domain=_DOMAIN)
def adam(
    r: AnyTensor,
    t: AnyTensor,
    *tensors: AnyTensor,
    alpha: float = 0.9,
    beta: float = 0.999,
    epsilon: float = 1e-6,
    norm_coefficient: float = 0.0,
    norm_coefficient_post: float = 0.0,
) -> tuple[AnyTensor, ...]:
    """Adam: ``V = a V + (1 - a) G'``, ``H = b H + (1 - b) G'^2``, ``X -= R' V / (sqrt(H) + epsilon)``.

    ``a`` is ``alpha`` and ``b`` is ``beta``; ``G' = G + norm_coefficient X``; from ``T > 0`` the rate
    is bias-corrected,
    ``R' = R sqrt(1 - beta^T) / (1 - alpha^T)``; the new X is then scaled by
    ``1 - norm_coefficient_post``. Inputs ``R, T, X1..Xn, G1..Gn, V1..Vn,
    H1..Hn``, outputs the new ``X1..Xn, V1..Vn, H1..Hn``.
    """
    rate = _scalar("Adam: R", r)
    step = _scalar("Adam: T", t)
    if step > 0:
        rate = rate * math.sqrt(1 - beta**step) / (1 - alpha**step)
    xs, vs, hs = [], [], []
    for x, g, v, h in _groups("Adam", tensors, 2):
        grad = _regularized(x, g, norm_coefficient)
        v_new = v * alpha + grad * (1 - alpha)
        h_new = h * beta + grad * grad * (1 - beta)
        x_new = x - v_new / (h_new.sqrt() + epsilon) * rate
        xs.append(x_new * (1 - norm_coefficient_post) if norm_coefficient_post else x_new)
        vs.append(v_new)
        hs.append(h_new)
    return (*xs, *vs, *hs)


@op("Momentum", domain=_DOMAIN)
def momentum(
    r: AnyTensor,
    t: AnyTensor,
    *tensors: AnyTensor,
    alpha: float | None = None,
    beta: float | None = None,
    mode: str | None = None,
    norm_coefficient: float | None = None,
) -> tuple[AnyTensor, ...]:
    """Momentum: ``V = alpha V + beta G'`` (``beta`` is 1 at ``T = 0``), then ``X -= R V`` (``standard``)
    or ``X -= R (G' + alpha V)`` (``nesterov``).

    ``G' = G + norm_coefficient X``. All four attributes are required. Inputs
    ``R, T, X1..Xn, G1..Gn, V1..Vn``, outputs the new ``X1..Xn, V1..Vn``.
    """
    if alpha is None or beta is None or mode is None or norm_coefficient is None:
        raise ValueError("Momentum: the attributes alpha, beta, mode and norm_coefficient are required")
    if mode not in ("standard", "nesterov"):
        raise ValueError(f"Momentum: mode must be standard or nesterov, found {mode!r}")
    rate = _scalar("Momentum: R", r)
    scale = beta if _scalar("Momentum: T", t) > 0 else 1.0
    xs, vs = [], []
    for x, g, v in _groups("Momentum", tensors, 1):
        grad = _regularized(x, g, norm_coefficient)
        v_new = v * alpha + grad * scale
        step = v_new if mode == "standard" else grad + v_new * alpha
        xs.append(x - step * rate)
        vs.append(v_new)
    return (*xs, *vs)
