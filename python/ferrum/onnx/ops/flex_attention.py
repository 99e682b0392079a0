"""FlexAttention (domain ai.onnx.preview, version 1): scaled dot-product attention on 4-d inputs whose
scores and probabilities two optional subgraphs may rewrite (``score_mod``, ``prob_mod``), after PyTorch's
``flex_attention``. Masks, soft caps and position biases are written in ``score_mod``.
"""

from __future__ import annotations

import math
from typing import Any

from ferrum import activation
from ferrum._ferrum import Device, DType, Float, KindError
from ferrum.backend import NdArray
from ferrum.onnx.execute import run_subgraph
from ferrum.onnx.ops._util import AnyTensor
from ferrum.onnx.ops.registry import op
from ferrum.onnx.program import Subgraph

__all__ = ["flex_attention"]

_SOFTMAX_DTYPES = {1: DType.F32, 10: DType.F32, 11: DType.F64, 16: DType.F32}
"""softmax_precision values as the dtype ferrum computes them in (float16/bfloat16 run in f32)."""


def _check(q: AnyTensor, k: AnyTensor, v: AnyTensor) -> None:
    for name, x in (("Q", q), ("K", k), ("V", v)):
        if x.kind is not Float:
            raise KindError(f"FlexAttention: {name} must be float, found {x.dtype}")
        if x.rank() != 4:
            raise ValueError(
                f"FlexAttention: {name} must be 4-d (batch, heads, seq, size), found {list(x.dims())}"
            )
    _, h_q, _, e = q.dims()
    _, h_k, s_k, e_k = k.dims()
    _, h_v, s_v, _ = v.dims()
    if h_k != h_v or s_k != s_v:
        raise ValueError(
            f"FlexAttention: K and V must share heads and length, found {list(k.dims())}, {list(v.dims())}"
        )
    if e_k != e:
        raise ValueError(f"FlexAttention: Q and K must share the head size, found {e} and {e_k}")
    if h_q % h_k:
        raise ValueError(f"FlexAttention: {h_q} query heads are not a multiple of {h_k} key/value heads")


def _repeat_heads(x: AnyTensor, groups: int) -> AnyTensor:
    """Each head of ``[b, h, s, d]`` repeated ``groups`` times in place: ``h0, h0, h1, h1, ...``."""
    if groups == 1:
        return x
    b, h, s, d = x.dims()
    return x.unsqueeze_dims([2]).expand((b, h, groups, s, d)).reshape((b, h * groups, s, d))


def _modify(
    graph: Subgraph | None, x: AnyTensor, captured: dict[str, AnyTensor] | None, device: Device[Any] | None
) -> AnyTensor:
    """``x`` through a modifier subgraph (one tensor in, one of its shape out), in ``x``'s dtype."""
    if graph is None:
        return x
    outs = run_subgraph(graph, [x], captured or {}, device if device is not None else NdArray.device())
    if len(outs) != 1 or tuple(outs[0].dims()) != tuple(x.dims()):
        found = [list(o.dims()) for o in outs]
        raise ValueError(f"FlexAttention: a modifier must return one {list(x.dims())} tensor, found {found}")
    out: AnyTensor = outs[0]
    if out.kind is not Float:
        out = out.float()
    return out.cast(x.dtype) if out.dtype != x.dtype else out


@op("FlexAttention", deterministic=False, domain="ai.onnx.preview")
def flex_attention(
    q: AnyTensor,
    k: AnyTensor,
    v: AnyTensor,
    scale: float | None = None,
    score_mod: Subgraph | None = None,
    prob_mod: Subgraph | None = None,
    softmax_precision: int | None = None,
    captured: dict[str, AnyTensor] | None = None,
    device: Device[Any] | None = None,
) -> AnyTensor:
    """Y ``(batch, q_heads, q_seq, v_size)`` from Q ``(batch, q_heads, q_seq, size)``, K and V
    ``(batch, kv_heads, kv_seq, size / v_size)``: ``softmax(score_mod(Q K^T * scale))``, through
    ``prob_mod``, times V. Query head ``h`` reads K/V head ``h // (q_heads / kv_heads)``.

    ``scale`` defaults to ``1 / sqrt(size)``; Q and K are each scaled by its square root. The softmax
    (and the modifiers) run in f64 for f64 inputs or ``softmax_precision`` 11, else in f32.
    """
    _check(q, k, v)
    groups = q.dims()[1] // k.dims()[1]
    k, v_all = _repeat_heads(k, groups), _repeat_heads(v, groups)
    factor = scale if scale is not None else 1.0 / math.sqrt(q.dims()[-1])
    root = math.sqrt(factor)
    scores = (q * root) @ (k * root).swap_dims(2, 3)
    if softmax_precision is not None and softmax_precision not in _SOFTMAX_DTYPES:
        raise ValueError(
            f"FlexAttention: softmax_precision must be 1, 10, 11 or 16, found {softmax_precision}"
        )
    compute = _SOFTMAX_DTYPES[softmax_precision] if softmax_precision is not None else q.dtype
    scores = scores.cast(compute) if scores.dtype != compute else scores
    scores = _modify(score_mod, scores, captured, device)
    probs = _modify(prob_mod, activation.softmax(scores, 3), captured, device)
    v_all = v_all.cast(compute) if v_all.dtype != compute else v_all
    y = probs @ v_all
    return y.cast(v.dtype) if y.dtype != v.dtype else y
