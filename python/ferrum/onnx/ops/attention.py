"""Attention (opset 23): scaled dot-product attention with masks, causal masking, GQA and a KV cache."""

from __future__ import annotations

import math

import numpy as np

from ferrum import activation
from ferrum._ferrum import Bool, Tensor
from ferrum.onnx.ops._util import AnyTensor, broadcast
from ferrum.onnx.ops.registry import op

__all__ = ["attention"]


def _heads(x: AnyTensor, heads: int | None, name: str) -> AnyTensor:
    """``[batch, seq, heads * size]`` as ``[batch, heads, seq, size]`` (4-d inputs pass through)."""
    if x.rank() == 4:
        return x
    if heads is None:
        raise ValueError(f"Attention: a 3-d {name} needs the q_num_heads/kv_num_heads attribute")
    b, s, width = x.dims()
    return x.reshape((b, s, heads, width // heads)).swap_dims(1, 2)


@op("Attention", since=23)
def attention(
    q: AnyTensor,
    k: AnyTensor,
    v: AnyTensor,
    attn_mask: AnyTensor | None = None,
    past_key: AnyTensor | None = None,
    past_value: AnyTensor | None = None,
    nonpad_kv_seqlen: AnyTensor | None = None,
    is_causal: int = 0,
    kv_num_heads: int | None = None,
    q_num_heads: int | None = None,
    qk_matmul_output_mode: int = 0,
    scale: float | None = None,
    softcap: float = 0.0,
    softmax_precision: int | None = None,
) -> tuple[AnyTensor, AnyTensor, AnyTensor, AnyTensor]:
    """Y, present_key, present_value and the scores after stage ``qk_matmul_output_mode``.

    The stages: 0 the scaled QK product, 1 with the mask added, 2 soft-capped, 3 the softmax.
    """
    del softmax_precision
    if nonpad_kv_seqlen is not None:
        raise ValueError("Attention with nonpad_kv_seqlen is not supported")
    if qk_matmul_output_mode not in (0, 1, 2, 3):
        raise ValueError(f"Attention qk_matmul_output_mode must be 0 to 3, found {qk_matmul_output_mode}")
    three_d = q.rank() == 3
    qh, kh, vh = _heads(q, q_num_heads, "Q"), _heads(k, kv_num_heads, "K"), _heads(v, kv_num_heads, "V")
    past = 0
    if past_key is not None and past_value is not None:
        past = past_key.dims()[2]
        kh, vh = Tensor.cat([past_key, kh], 2), Tensor.cat([past_value, vh], 2)
    present_k, present_v = kh, vh
    groups = qh.dims()[1] // kh.dims()[1]
    if groups > 1:
        b, h, s, d = kh.dims()
        kh = kh.unsqueeze_dims([2]).expand((b, h, groups, s, d)).reshape((b, h * groups, s, d))
        vb, vhh, vs, vd = vh.dims()
        vh = vh.unsqueeze_dims([2]).expand((vb, vhh, groups, vs, vd)).reshape((vb, vhh * groups, vs, vd))
    size = qh.dims()[-1]
    factor = scale if scale is not None else 1.0 / math.sqrt(size)
    qk = (qh * factor) @ kh.swap_dims(2, 3)
    s_q, s_k = qk.dims()[-2:]
    stages = [qk]
    scores = qk
    if attn_mask is not None:
        short = s_k - attn_mask.dims()[-1]
        if short > 0:
            # a mask shorter than the keys (a KV cache grew past it) leaves the new keys masked
            fill: float | bool = False if attn_mask.kind is Bool else float("-inf")
            attn_mask = attn_mask.pad([0, short] + [0, 0] * (attn_mask.rank() - 1), fill)
        if attn_mask.kind is Bool:
            scores, keep = broadcast(scores, attn_mask)
            scores = scores.mask_fill(keep.bool_not().expand(tuple(scores.dims())), float("-inf"))
        else:
            scores, bias = broadcast(scores, attn_mask)
            scores = scores + bias
    if is_causal:
        # bottom-right aligned: query i sees key j when j <= i + the cached keys' count
        allowed = np.tril(np.ones((s_q, s_k), dtype=bool), k=past)
        blocked = Tensor.from_numpy(~allowed.reshape(1, 1, s_q, s_k), q.device())
        scores = scores.mask_fill(blocked.expand(tuple(scores.dims())), float("-inf"))
    stages.append(scores)
    if softcap > 0.0:
        scores = activation.tanh(scores / softcap) * softcap
    stages.append(scores)
    weights = activation.softmax(scores, 3)
    # rows with every key masked are all -inf: zero them as ONNX's reference does, instead of NaN
    weights = weights.mask_fill(weights.is_nan(), 0.0)
    stages.append(weights)
    y = weights @ vh
    if three_d:
        b, h, s, d = y.dims()
        y = y.swap_dims(1, 2).reshape((b, s, h * d))
    return y, present_k, present_v, stages[qk_matmul_output_mode]
