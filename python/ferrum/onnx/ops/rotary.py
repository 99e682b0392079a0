"""RotaryEmbedding (opset 23): rotary position embeddings from given cos/sin caches."""

from __future__ import annotations

from ferrum._ferrum import Int, Tensor
from ferrum.onnx.ops._util import AnyTensor, same_kind
from ferrum.onnx.ops.registry import op

__all__ = ["rotary_embedding"]


@op("RotaryEmbedding", since=23)
def rotary_embedding(
    x: AnyTensor,
    cos_cache: AnyTensor,
    sin_cache: AnyTensor,
    position_ids: AnyTensor | None = None,
    interleaved: int = 0,
    num_heads: int = 0,
    rotary_embedding_dim: int = 0,
) -> AnyTensor:
    """Rotate the first ``rotary_embedding_dim`` features of each head (all by default) by the
    position's angles; the rest pass through.

    ``x`` is ``[batch, heads, seq, head_size]``, or ``[batch, seq, heads * head_size]`` with
    ``num_heads``. The caches are ``[max_position, rotary_dim / 2]`` read at ``position_ids [batch,
    seq]``, or without ``position_ids`` already ``[batch, seq, rotary_dim / 2]``. Pairs are the two
    halves of the rotated features, or with ``interleaved`` adjacent features ``(2i, 2i + 1)``.
    """
    three_d = x.rank() == 3
    if three_d:
        if num_heads <= 0:
            raise ValueError("RotaryEmbedding: a 3-d input needs the num_heads attribute")
        batch, seq, width = x.dims()
        if width % num_heads:
            raise ValueError(
                f"RotaryEmbedding: hidden size {width} is not a multiple of num_heads {num_heads}"
            )
        xh = x.reshape((batch, seq, num_heads, width // num_heads)).swap_dims(1, 2)
    elif x.rank() == 4:
        xh = x
    else:
        raise ValueError(f"RotaryEmbedding: the input must be 3-d or 4-d, found rank {x.rank()}")
    batch, heads, seq, head_size = xh.dims()
    rot = rotary_embedding_dim or head_size
    if rot > head_size or rot % 2:
        raise ValueError(f"RotaryEmbedding: rotary_embedding_dim {rot} must be even and at most {head_size}")
    half = rot // 2
    if position_ids is not None:
        ids = position_ids if position_ids.kind is Int else position_ids.int()
        cos, sin = cos_cache.take(0, ids), sin_cache.take(0, ids)
    else:
        cos, sin = cos_cache, sin_cache
    for name, cache in (("cos", cos), ("sin", sin)):
        if tuple(cache.dims()) != (batch, seq, half):
            raise ValueError(
                f"RotaryEmbedding: the {name} cache gives {list(cache.dims())} per position, "
                f"[{batch}, {seq}, {half}] expected"
            )
    cos = same_kind(cos, xh).reshape((batch, 1, seq, half))
    sin = same_kind(sin, xh).reshape((batch, 1, seq, half))
    rotated = xh.narrow(3, 0, rot) if rot < head_size else xh
    if interleaved:
        pairs = rotated.reshape((batch, heads, seq, half, 2))
        x1 = pairs.narrow(4, 0, 1).reshape((batch, heads, seq, half))
        x2 = pairs.narrow(4, 1, 1).reshape((batch, heads, seq, half))
    else:
        x1, x2 = rotated.narrow(3, 0, half), rotated.narrow(3, half, half)
    real = cos * x1 - sin * x2
    imag = sin * x1 + cos * x2
    if interleaved:
        turned = Tensor.stack([real, imag], 4).reshape((batch, heads, seq, rot))
    else:
        turned = Tensor.cat([real, imag], 3)
    out = Tensor.cat([turned, xh.narrow(3, rot, head_size - rot)], 3) if rot < head_size else turned
    if three_d:
        return out.swap_dims(1, 2).reshape(tuple(x.dims()))
    return out
