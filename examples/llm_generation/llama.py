"""Llama as ferrum modules: RMSNorm, rotary positions as Hugging Face applies them, SwiGLU MLP,
grouped-query attention, untied LM head.

The field names are those of Hugging Face's ``LlamaForCausalLM`` state dict without its
``model.`` prefix (``weights.llama_store`` transposes the Linear weights and renames the norms').

Hugging Face rotates the two *halves* of each head (``rotate_half``: ``(x1, x2) -> (-x2, x1)``),
where Burn's ``RotaryEncoding`` rotates interleaved pairs ``(x[2i], x[2i + 1])``; with weights
trained the Hugging Face way, the halves are what must turn, so ``HalfRotary`` does that.
"""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np
from ferrum import D2, D3, D4, Device, Int, Tensor, activation, config
from ferrum.backend import Backend
from ferrum.module import Module
from ferrum.nn import Embedding, EmbeddingConfig, Linear, LinearConfig, RmsNorm, RmsNormConfig

from .kv_cache import KvCache, causal_attention, step_end, step_start

B = TypeVar("B", bound=Backend)


@config
class LlamaConfig:
    """Sizes of a Llama model, named as Hugging Face's ``LlamaConfig`` (``from_hf`` reads its
    ``config.json``).

    Example:
        >>> from ferrum.backend import NdArray
        >>> LlamaConfig(256, 16, 32, 1, 4, 2, 32).init(NdArray.device()).max_positions
        32
    """

    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    max_position_embeddings: int
    rms_norm_eps: float = 1e-6
    rope_theta: float = 10000.0

    @staticmethod
    def from_hf(fields: dict[str, Any]) -> LlamaConfig:
        """The sizes from a ``transformers`` Llama config (``config.json`` as a dict)."""
        rope = fields.get("rope_parameters") or fields.get("rope_scaling") or {}
        if rope.get("rope_type", "default") != "default":
            raise ValueError(f"Llama: only the default rotary frequencies are supported, found {rope!r}")
        theta = rope.get("rope_theta", fields.get("rope_theta", 10000.0))
        if fields.get("attention_bias") or fields.get("mlp_bias"):
            raise ValueError("Llama: projections with a bias are not supported")
        if fields.get("tie_word_embeddings"):
            raise ValueError("Llama: a tied LM head is not supported")
        heads = int(fields["num_attention_heads"])
        head_dim = fields.get("head_dim") or int(fields["hidden_size"]) // heads
        if head_dim * heads != int(fields["hidden_size"]):
            raise ValueError(f"Llama: head_dim {head_dim} x {heads} heads differs from hidden_size")
        return LlamaConfig(
            vocab_size=int(fields["vocab_size"]),
            hidden_size=int(fields["hidden_size"]),
            intermediate_size=int(fields["intermediate_size"]),
            num_hidden_layers=int(fields["num_hidden_layers"]),
            num_attention_heads=heads,
            num_key_value_heads=int(fields.get("num_key_value_heads") or heads),
            max_position_embeddings=int(fields["max_position_embeddings"]),
            rms_norm_eps=float(fields.get("rms_norm_eps", 1e-6)),
            rope_theta=float(theta),
        )

    def init(self, device: Device[B]) -> Llama[B]:
        """A model with fresh weights on ``device`` (``weights.load_llama`` replaces them)."""
        width, heads, kv_heads = self.hidden_size, self.num_attention_heads, self.num_key_value_heads
        if width % heads or heads % kv_heads:
            raise ValueError(
                f"LlamaConfig: hidden_size {width}, {heads} heads and {kv_heads} key/value heads"
                " do not divide"
            )
        head_dim = width // heads
        if head_dim % 2:
            raise ValueError(f"LlamaConfig: the head size {head_dim} must be even for the rotary encoding")

        def linear(d_in: int, d_out: int) -> Linear[B]:
            return LinearConfig(d_in, d_out, bias=False).init(device)

        norm = RmsNormConfig(width, epsilon=self.rms_norm_eps)
        return Llama(
            embed_tokens=EmbeddingConfig(self.vocab_size, width).init(device),
            layers=[
                LlamaBlock(
                    input_layernorm=norm.init(device),
                    self_attn=LlamaAttention(
                        q_proj=linear(width, width),
                        k_proj=linear(width, kv_heads * head_dim),
                        v_proj=linear(width, kv_heads * head_dim),
                        o_proj=linear(width, width),
                        n_heads=heads,
                        n_kv_heads=kv_heads,
                    ),
                    post_attention_layernorm=norm.init(device),
                    mlp=LlamaMlp(
                        gate_proj=linear(width, self.intermediate_size),
                        up_proj=linear(width, self.intermediate_size),
                        down_proj=linear(self.intermediate_size, width),
                    ),
                )
                for _ in range(self.num_hidden_layers)
            ],
            norm=norm.init(device),
            lm_head=linear(width, self.vocab_size),
            rotary=HalfRotary.new(self.max_position_embeddings, head_dim, self.rope_theta, device),
        )


class HalfRotary(Module[B]):
    """Rotary positions as Hugging Face's Llama applies them: ``x cos + rotate_half(x) sin``.

    ``cos`` and ``sin`` are ``[positions, head_dim]`` with the angle ``p * theta^(-2i / head_dim)``
    in column ``i`` and ``i + head_dim / 2``; ``rotate_half`` is the signed permutation
    ``(x1, x2) -> (-x2, x1)`` of the two halves, kept as a ``[1, 1, head_dim, head_dim]`` matrix so it
    costs one product (exact: each output is one input times +-1).
    """

    cos: Tensor[B, D2]
    sin: Tensor[B, D2]
    rotate_half: Tensor[B, D4]

    @staticmethod
    def new(positions: int, head_dim: int, theta: float, device: Device[B]) -> HalfRotary[B]:
        """The tables for ``positions`` positions of heads of size ``head_dim``."""
        half = head_dim // 2
        inv_freq = 1.0 / theta ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
        angles = np.arange(positions, dtype=np.float64)[:, None] * inv_freq[None, :]
        angles = np.concatenate([angles, angles], axis=1)
        rotate = np.zeros((head_dim, head_dim), dtype=np.float32)
        rotate[half:, :half] = -np.eye(half, dtype=np.float32)  # out[:half] = -x2
        rotate[:half, half:] = np.eye(half, dtype=np.float32)  # out[half:] = x1
        return HalfRotary(
            cos=Tensor.from_numpy(np.cos(angles).astype(np.float32), device),
            sin=Tensor.from_numpy(np.sin(angles).astype(np.float32), device),
            rotate_half=Tensor.from_numpy(rotate.reshape(1, 1, head_dim, head_dim), device),
        )

    def forward(self, x: Tensor[B, D4], start: int) -> Tensor[B, D4]:
        """``x`` ``[batch, heads, seq, head_dim]`` rotated as positions ``start..start + seq``."""
        seq, head_dim = x.dims()[2], x.dims()[3]
        cos = self.cos.narrow(0, start, seq).reshape((1, 1, seq, head_dim))
        sin = self.sin.narrow(0, start, seq).reshape((1, 1, seq, head_dim))
        out: Tensor[B, D4] = x * cos + (x @ self.rotate_half) * sin
        return out


class LlamaAttention(Module[B]):
    """Causal grouped-query self-attention: ``n_heads`` query heads share ``n_kv_heads`` key/value heads."""

    q_proj: Linear[B]
    k_proj: Linear[B]
    v_proj: Linear[B]
    o_proj: Linear[B]
    n_heads: int
    n_kv_heads: int

    def forward(
        self, x: Tensor[B, D3], rotary: HalfRotary[B], start: int, cache: KvCache[B] | None, layer: int
    ) -> Tensor[B, D3]:
        """``[batch, seq, hidden]`` in and out, the positions ``start..start + seq``."""
        batch, seq, width = x.dims()
        head_dim = width // self.n_heads
        query = self.q_proj.forward(x).reshape((batch, seq, self.n_heads, head_dim)).swap_dims(1, 2)
        key = self.k_proj.forward(x).reshape((batch, seq, self.n_kv_heads, head_dim)).swap_dims(1, 2)
        value = self.v_proj.forward(x).reshape((batch, seq, self.n_kv_heads, head_dim)).swap_dims(1, 2)
        query, key = rotary.forward(query, start), rotary.forward(key, start)
        if cache is not None:
            key, value = cache.write(layer, key, value)
        context = causal_attention(query, key, value).swap_dims(1, 2).reshape((batch, seq, width))
        return self.o_proj.forward(context)


class LlamaMlp(Module[B]):
    """SwiGLU: ``down_proj(silu(gate_proj(x)) * up_proj(x))``."""

    gate_proj: Linear[B]
    up_proj: Linear[B]
    down_proj: Linear[B]

    def forward(self, x: Tensor[B, D3]) -> Tensor[B, D3]:
        """``[batch, seq, hidden]`` in and out."""
        return self.down_proj.forward(activation.silu(self.gate_proj.forward(x)) * self.up_proj.forward(x))


class LlamaBlock(Module[B]):
    """``x + attn(rms(x))``, then ``x + mlp(rms(x))``."""

    input_layernorm: RmsNorm[B]
    self_attn: LlamaAttention[B]
    post_attention_layernorm: RmsNorm[B]
    mlp: LlamaMlp[B]

    def forward(
        self, x: Tensor[B, D3], rotary: HalfRotary[B], start: int, cache: KvCache[B] | None, layer: int
    ) -> Tensor[B, D3]:
        """``[batch, seq, hidden]`` in and out."""
        x = x + self.self_attn.forward(self.input_layernorm.forward(x), rotary, start, cache, layer)
        return x + self.mlp.forward(self.post_attention_layernorm.forward(x))


class Llama(Module[B]):
    """Llama's language model: token ids ``[batch, seq]`` to next-token logits ``[batch, seq, vocab]``.

    Example:
        >>> from ferrum.backend import NdArray
        >>> device = NdArray.device()
        >>> model = LlamaConfig(256, 16, 32, 1, 4, 2, 32).init(device)
        >>> model.forward(Tensor.from_ints([[1, 2, 3]], device)).dims()
        (1, 3, 256)
    """

    embed_tokens: Embedding[B]
    layers: list[LlamaBlock[B]]
    norm: RmsNorm[B]
    lm_head: Linear[B]
    rotary: HalfRotary[B]

    @property
    def max_positions(self) -> int:
        """The longest sequence the rotary tables cover."""
        return self.rotary.cos.dims()[0]

    @property
    def vocab_size(self) -> int:
        """How many token ids the model knows."""
        return self.embed_tokens.weight.shape()[0]

    def new_cache(self, batch: int, max_len: int) -> KvCache[B]:
        """An empty cache for ``batch`` sequences of up to ``max_len`` positions."""
        if max_len > self.max_positions:
            raise ValueError(f"Llama: max_len {max_len} exceeds the model's {self.max_positions} positions")
        attn = self.layers[0].self_attn
        head_dim = self.rotary.cos.dims()[1]
        device = self.embed_tokens.weight.val().device()
        return KvCache(len(self.layers), batch, attn.n_kv_heads, max_len, head_dim, device)

    def forward(
        self, ids: Tensor[B, D2, Int], cache: KvCache[B] | None = None, last_only: bool = False
    ) -> Tensor[B, D3]:
        """Logits ``[batch, seq, vocab]`` (``[batch, 1, vocab]`` with ``last_only``) for ``ids``
        ``[batch, seq]``.

        Without a cache, ``ids`` are positions ``0..seq``; with one, they follow the
        ``cache.length`` positions it holds, whose keys and values it keeps for the next call.
        """
        seq = ids.dims()[1]
        start = step_start("Llama", cache, seq, self.max_positions)
        x = self.embed_tokens.forward(ids)
        for i, block in enumerate(self.layers):
            x = block.forward(x, self.rotary, start, cache, i)
        return self.lm_head.forward(self.norm.forward(step_end(x, cache, seq, last_only)))
