"""LinearAttention (opset 27): recurrent linear attention with a carried state, in its four update rules
(linear, gated, delta, gated_delta: linear attention, GLA/RetNet, DeltaNet, Gated DeltaNet).

The recurrence runs token by token, as ONNX's reference does; ``chunk_size`` is a tuning hint for
chunk-parallel kernels and does not change the result, so it is ignored.
"""

from __future__ import annotations

import math

from ferrum._ferrum import Float, KindError, Tensor
from ferrum.onnx.ops._util import AnyTensor
from ferrum.onnx.ops.registry import op

__all__ = ["linear_attention"]

_RULES = ("linear", "gated", "delta", "gated_delta")


def _unpack(x: AnyTensor, heads: int, name: str) -> AnyTensor:
    """``(B, T, heads * D)`` as ``(B, heads, T, D)``."""
    if x.rank() != 3:
        raise ValueError(f"LinearAttention: {name} must be 3-d (B, T, H*D), found shape {list(x.dims())}")
    b, t, width = x.dims()
    if width % heads:
        raise ValueError(f"LinearAttention: {name}'s last dim {width} is not a multiple of {heads} heads")
    return x.reshape((b, t, heads, width // heads)).swap_dims(1, 2)


def _per_step(x: AnyTensor, b: int, t: int, heads: int, size: int, name: str) -> AnyTensor:
    """decay or beta ``(B, T, heads * size)`` as ``(B, heads, T, size)``, checked against ``(B, T)``."""
    if x.rank() != 3 or tuple(x.dims()[:2]) != (b, t):
        raise ValueError(f"LinearAttention: {name} must be ({b}, {t}, ...), found {list(x.dims())}")
    return x.reshape((b, t, heads, size)).swap_dims(1, 2)


def _decay(decay: AnyTensor, b: int, t: int, kv_heads: int, d_k: int) -> AnyTensor:
    """The log-space decay as ``(B, H_kv, T, 1)`` (one per head) or ``(B, H_kv, T, d_k)`` (per key dim)."""
    last = decay.dims()[-1]
    if last not in (kv_heads, kv_heads * d_k):
        raise ValueError(
            f"LinearAttention: decay's last dim must be kv_num_heads ({kv_heads}) or kv_num_heads * d_k "
            f"({kv_heads * d_k}), found {last}"
        )
    return _per_step(decay, b, t, kv_heads, last // kv_heads, "decay")


def _beta(beta: AnyTensor, b: int, t: int, kv_heads: int) -> AnyTensor:
    """The update rate as ``(B, H_kv or 1, T, 1)``."""
    last = beta.dims()[-1]
    if last not in (kv_heads, 1):
        raise ValueError(
            f"LinearAttention: beta's last dim must be kv_num_heads ({kv_heads}) or 1, found {last}"
        )
    return _per_step(beta, b, t, last, 1, "beta")


def _check_rule(update_rule: str, decay: AnyTensor | None, beta: AnyTensor | None) -> tuple[bool, bool]:
    """Whether the rule gates (needs decay) and corrects by delta (needs beta); the inputs must match."""
    if update_rule not in _RULES:
        raise ValueError(f"LinearAttention: update_rule must be one of {_RULES}, found {update_rule!r}")
    gating = update_rule in ("gated", "gated_delta")
    delta = update_rule in ("delta", "gated_delta")
    for needed, given, name in ((gating, decay, "decay"), (delta, beta, "beta")):
        if needed and given is None:
            raise ValueError(f"LinearAttention: update_rule {update_rule!r} needs the {name} input")
        if not needed and given is not None:
            raise ValueError(f"LinearAttention: update_rule {update_rule!r} takes no {name} input")
    return gating, delta


def _check_heads(q_num_heads: int | None, kv_num_heads: int | None) -> tuple[int, int]:
    if q_num_heads is None or kv_num_heads is None:
        raise ValueError("LinearAttention: the q_num_heads and kv_num_heads attributes are required")
    if q_num_heads <= 0 or kv_num_heads <= 0 or q_num_heads % kv_num_heads:
        raise ValueError(
            f"LinearAttention: q_num_heads ({q_num_heads}) must be a positive multiple of "
            f"kv_num_heads ({kv_num_heads})"
        )
    return q_num_heads, kv_num_heads


@op("LinearAttention", since=27)
def linear_attention(
    query: AnyTensor,
    key: AnyTensor,
    value: AnyTensor,
    past_state: AnyTensor | None = None,
    decay: AnyTensor | None = None,
    beta: AnyTensor | None = None,
    chunk_size: int = 64,
    kv_num_heads: int | None = None,
    q_num_heads: int | None = None,
    scale: float = 0.0,
    update_rule: str = "gated_delta",
) -> tuple[AnyTensor, AnyTensor]:
    """The output ``(B, T, H_q * d_v)`` and the new state ``(B, H_kv, d_k, d_v)``.

    query is ``(B, T, H_q * d_k)``, key ``(B, T, H_kv * d_k)``, value ``(B, T, H_kv * d_v)``. Per token,
    with ``S`` the state (zeros when ``past_state`` is absent)::

        S = exp(g) * S                                  (gated rules; g from decay)
        v = beta * (v - S^T k)                          (delta rules)
        S = S + k v^T
        o = scale * q^T S                               (each KV head's S shared by H_q / H_kv query heads)

    ``scale`` 0 means ``1 / sqrt(d_k)``.
    """
    del chunk_size
    h_q, h_kv = _check_heads(q_num_heads, kv_num_heads)
    gating, delta = _check_rule(update_rule, decay, beta)
    for name, x in (("query", query), ("key", key), ("value", value)):
        if x.kind is not Float:
            raise KindError(f"LinearAttention: {name} must be float, found {x.dtype}")
    q4, k4, v4 = _unpack(query, h_q, "query"), _unpack(key, h_kv, "key"), _unpack(value, h_kv, "value")
    b, _, t, d_k = q4.dims()
    d_v = v4.dims()[-1]
    if tuple(k4.dims()) != (b, h_kv, t, d_k) or tuple(v4.dims()[:3]) != (b, h_kv, t):
        raise ValueError(
            f"LinearAttention: key and value must be ({b}, {t}, {h_kv} * ...) with key's head size {d_k}, "
            f"found {list(key.dims())} and {list(value.dims())}"
        )
    g4 = _decay(decay, b, t, h_kv, d_k) if decay is not None and gating else None
    beta4 = _beta(beta, b, t, h_kv) if beta is not None and delta else None
    if past_state is None:
        state = Tensor.zeros((b, h_kv, d_k, d_v), query.device(), dtype=query.dtype)
    elif tuple(past_state.dims()) != (b, h_kv, d_k, d_v):
        raise ValueError(
            f"LinearAttention: past_state must be ({b}, {h_kv}, {d_k}, {d_v}), "
            f"found {list(past_state.dims())}"
        )
    else:
        state = past_state.cast(query.dtype) if past_state.dtype != query.dtype else past_state
    factor = scale if scale != 0.0 else 1.0 / math.sqrt(d_k)
    groups = h_q // h_kv
    outputs = []
    for i in range(t):
        k_t, v_t = k4.narrow(2, i, 1), v4.narrow(2, i, 1)  # (B, H_kv, 1, d)
        if g4 is not None:
            # (B, H_kv, 1, 1 or d_k) -> (B, H_kv, 1 or d_k, 1): scales the state's rows (its key dims)
            state = state * g4.narrow(2, i, 1).swap_dims(2, 3).exp()
        if beta4 is not None:
            v_t = beta4.narrow(2, i, 1) * (v_t - k_t @ state)
        state = state + k_t.swap_dims(2, 3) @ v_t
        read = state
        if groups > 1:
            read = state.unsqueeze_dims([2]).expand((b, h_kv, groups, d_k, d_v)).reshape((b, h_q, d_k, d_v))
        outputs.append((q4.narrow(2, i, 1) @ read) * factor)
    out = (
        Tensor.cat(outputs, 2) if t > 0 else Tensor.zeros((b, h_q, 0, d_v), query.device(), dtype=query.dtype)
    )
    return out.swap_dims(1, 2).reshape((b, t, h_q * d_v)), state
