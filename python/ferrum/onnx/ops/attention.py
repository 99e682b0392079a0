"""Attention (opset 23, windows since 25): scaled dot-product attention with masks, causal and
sliding-window masking, GQA, a KV cache (internal: past/present; external: ``nonpad_kv_seqlen``).

It follows ONNX's reference implementation step for step: Q and K are each
scaled by ``sqrt(scale)``, the soft cap applies to the raw scores before the
mask is added (so ``-inf`` stays ``-inf``), and a query row whose mask allows
no key gives zeros, not NaN.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ferrum import activation
from ferrum._ferrum import Bool, DType, Float, Tensor
from ferrum.onnx.ops._util import AnyTensor, broadcast, to_rank
from ferrum.onnx.ops.registry import op

__all__ = ["attention"]

_NEG_INF = float("-inf")
_SOFTMAX_DTYPES = {1: DType.F32, 10: DType.F32, 11: DType.F64, 16: DType.F32}
"""ONNX's softmax_precision values as the dtype ferrum computes them in (float16/bfloat16 run in f32)."""


def _heads(x: AnyTensor, heads: int | None, name: str) -> AnyTensor:
    """``[batch, seq, heads * size]`` as ``[batch, heads, seq, size]`` (4-d inputs pass through)."""
    if x.rank() == 4:
        return x
    if x.rank() != 3:
        raise ValueError(f"Attention: {name} must be 3-d or 4-d, found shape {list(x.dims())}")
    if heads is None:
        raise ValueError(f"Attention: a 3-d {name} needs the q_num_heads and kv_num_heads attributes")
    b, s, width = x.dims()
    if heads <= 0 or width % heads:
        raise ValueError(f"Attention: {name}'s last dim {width} is not a multiple of {heads} heads")
    return x.reshape((b, s, heads, width // heads)).swap_dims(1, 2)


def _repeat_heads(x: AnyTensor, groups: int) -> AnyTensor:
    """Each head of ``[b, h, s, d]`` repeated ``groups`` times in place: ``h0, h0, h1, h1, ...``."""
    b, h, s, d = x.dims()
    return x.unsqueeze_dims([2]).expand((b, h, groups, s, d)).reshape((b, h * groups, s, d))


def _mask_bias(mask: AnyTensor, s_k: int, like: AnyTensor) -> AnyTensor:
    """``attn_mask`` as an additive bias in ``like``'s dtype; keys past its end are masked."""
    short = s_k - mask.dims()[-1]
    if short > 0:
        # a mask shorter than the keys (a KV cache grew past it) leaves the new keys masked
        fill: float | bool = False if mask.kind is Bool else _NEG_INF
        mask = mask.pad([0, short] + [0, 0] * (mask.rank() - 1), fill)
    if mask.kind is Bool:
        zeros = Tensor.zeros(tuple(mask.dims()), like.device(), dtype=like.dtype)
        return zeros.mask_fill(mask.bool_not(), _NEG_INF)
    if mask.kind is not Float:
        raise ValueError(f"Attention: attn_mask must be bool or float, found {mask.dtype}")
    return mask.cast(like.dtype) if mask.dtype != like.dtype else mask


def _allowed(
    s_q: int,
    s_k: int,
    offset: int | np.ndarray[Any, Any],
    is_causal: bool,
    left: int,
    right: int,
) -> np.ndarray[Any, Any] | None:
    """Which keys each query may see under the causal and window rules, or None when none apply.

    A query at in-block index ``i`` has absolute position ``i + offset``; ``offset`` is a scalar
    (the cached keys' count, or 0) or one per batch (``nonpad_kv_seqlen - s_q``), which gives a
    ``[batch, 1, s_q, s_k]`` result instead of ``[s_q, s_k]``.
    """
    if not is_causal and left < 0 and right < 0:
        return None
    per_batch = np.ndim(offset) > 0
    i = np.arange(s_q).reshape(s_q, 1)
    j = np.arange(s_k).reshape(1, s_k)
    pos = i + (np.reshape(offset, (-1, 1, 1)) if per_batch else int(offset))
    diff = pos - j
    allowed = np.ones(diff.shape, dtype=bool)
    if is_causal:
        allowed &= diff >= 0
    if left >= 0:
        allowed &= diff <= left
    if right >= 0:
        allowed &= -diff <= right
    return allowed[:, None] if per_batch else allowed


def _structural_bias(
    s_q: int,
    s_k: int,
    batch: int,
    past: int,
    nonpad: AnyTensor | None,
    is_causal: bool,
    left: int,
    right: int,
    like: AnyTensor,
) -> AnyTensor | None:
    """The causal, window and key-padding masks as one additive bias (0 or -inf), or None.

    These depend on shapes and on ``nonpad_kv_seqlen``'s values only, so they are built in NumPy
    (no gradient flows through them).
    """
    lengths = None
    if nonpad is not None:
        lengths = np.asarray(nonpad.to_numpy()).reshape(-1).astype(np.int64)
        if lengths.shape[0] != batch:
            raise ValueError(
                f"Attention: nonpad_kv_seqlen must have {batch} entries, found {lengths.shape[0]}"
            )
    offset: int | np.ndarray[Any, Any] = lengths - s_q if lengths is not None else past
    allowed = _allowed(s_q, s_k, offset, is_causal, left, right)
    if lengths is not None:
        keep = (np.arange(s_k) < lengths[:, None]).reshape(batch, 1, 1, s_k)
        allowed = keep if allowed is None else allowed & keep
    if allowed is None:
        return None
    dtype = np.float64 if like.dtype == DType.F64 else np.float32
    bias = np.where(allowed, 0.0, -np.inf).astype(dtype)
    return Tensor.from_numpy(bias, like.device(), dtype=like.dtype)


def _add(a: AnyTensor | None, b: AnyTensor | None) -> AnyTensor | None:
    if a is None or b is None:
        return a if b is None else b
    x, y = broadcast(a, b)
    return x + y


def _zero_masked_rows(weights: AnyTensor, rows: list[AnyTensor]) -> AnyTensor:
    """``weights`` with zeros in each row whose ``rows`` entry has its max at -inf (no key to attend)."""
    for scores in rows:
        empty = to_rank(scores.max_dim(scores.rank() - 1) == _NEG_INF, weights.rank())
        if empty.any().item():
            shape = tuple(np.broadcast_shapes(tuple(weights.dims()), tuple(empty.dims())))
            weights = weights.expand(shape).mask_fill(empty.expand(shape), 0.0)
    return weights


def _check(
    q: AnyTensor,
    past_key: AnyTensor | None,
    past_value: AnyTensor | None,
    nonpad: AnyTensor | None,
    heads_given: bool,
    left: int,
    right: int,
    qk_mode: int,
    opset: int,
) -> None:
    if left < -1 or right < -1:
        raise ValueError(
            f"Attention: window sizes must be -1 or non-negative, found left {left}, right {right}"
        )
    if (past_key is None) != (past_value is None):
        raise ValueError("Attention: past_key and past_value must be given together")
    if nonpad is not None and past_key is not None:
        raise ValueError("Attention: nonpad_kv_seqlen cannot be combined with past_key/past_value")
    if qk_mode not in (0, 1, 2, 3):
        raise ValueError(f"Attention: qk_matmul_output_mode must be 0 to 3, found {qk_mode}")
    if opset >= 25 and q.rank() == 4 and heads_given:
        raise ValueError("Attention: q_num_heads and kv_num_heads must not be given for 4-d inputs")


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
    left_window_size: int = -1,
    right_window_size: int = -1,
    opset: int = 25,
) -> tuple[AnyTensor, AnyTensor, AnyTensor, AnyTensor]:
    """Y, present_key, present_value and the scores at stage ``qk_matmul_output_mode``.

    Q is ``[batch, q_heads, q_seq, size]`` and K/V ``[batch, kv_heads, kv_seq, size]`` (or 3-d
    ``[batch, seq, heads * size]`` with ``q_num_heads``/``kv_num_heads``); Y has Q's layout with V's
    head size. The stages: 0 and 1 the scaled QK product after the soft cap, 2 with the masks added,
    3 the softmax. ``nonpad_kv_seqlen`` (an external cache's valid lengths) is read on the host.
    """
    heads_given = q_num_heads is not None or kv_num_heads is not None
    _check(
        q,
        past_key,
        past_value,
        nonpad_kv_seqlen,
        heads_given,
        left_window_size,
        right_window_size,
        qk_matmul_output_mode,
        opset,
    )
    if not q.rank() == k.rank() == v.rank():
        raise ValueError(
            f"Attention: Q, K and V must have one rank, found {q.rank()}, {k.rank()}, {v.rank()}"
        )
    three_d = q.rank() == 3
    qh, kh, vh = _heads(q, q_num_heads, "Q"), _heads(k, kv_num_heads, "K"), _heads(v, kv_num_heads, "V")
    past = 0
    if past_key is not None and past_value is not None:
        past = past_key.dims()[2]
        kh, vh = Tensor.cat([past_key, kh], 2), Tensor.cat([past_value, vh], 2)
    present_k, present_v = kh, vh
    h_q, h_kv = qh.dims()[1], kh.dims()[1]
    if h_q != h_kv:
        if h_q % h_kv:
            raise ValueError(f"Attention: {h_q} query heads are not a multiple of {h_kv} key/value heads")
        kh, vh = _repeat_heads(kh, h_q // h_kv), _repeat_heads(vh, h_q // h_kv)
    factor = scale if scale is not None else 1.0 / math.sqrt(qh.dims()[-1])
    # Q and K each scaled by sqrt(scale), as ONNX specifies, to keep the product in range
    root = math.sqrt(factor)
    qk = (qh * root) @ (kh * root).swap_dims(2, 3)
    s_q, s_k = qk.dims()[-2:]
    if softcap > 0.0:
        # before the masks, so that -inf entries stay -inf
        qk = activation.tanh(qk / softcap) * softcap
    bias = _add(
        _mask_bias(attn_mask, s_k, qk) if attn_mask is not None else None,
        _structural_bias(
            s_q,
            s_k,
            qh.dims()[0],
            past,
            nonpad_kv_seqlen,
            bool(is_causal),
            left_window_size,
            right_window_size,
            qk,
        ),
    )
    scores = qk if bias is None else _add(qk, bias)
    assert scores is not None
    masked = scores
    if softmax_precision is not None:
        if softmax_precision not in _SOFTMAX_DTYPES:
            raise ValueError(
                f"Attention: softmax_precision must be 1, 10, 11 or 16, found {softmax_precision}"
            )
        scores = scores.cast(_SOFTMAX_DTYPES[softmax_precision])
    weights = activation.softmax(scores, 3)
    # a row with no key to attend (all -inf) softmaxes to NaN: zero it as ONNX's reference does
    weights = _zero_masked_rows(weights, [scores] + ([bias] if bias is not None else []))
    weights = weights.cast(qk.dtype) if weights.dtype != qk.dtype else weights
    stages = [qk, qk, masked, weights]
    y = weights @ vh
    if three_d:
        b, h, s, d = y.dims()
        y = y.swap_dims(1, 2).reshape((b, s, h * d))
    return y, present_k, present_v, stages[qk_matmul_output_mode]
