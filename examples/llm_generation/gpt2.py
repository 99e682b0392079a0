"""GPT-2 as ferrum modules: learned positions, pre-LayerNorm blocks, GELU-tanh MLP, tied LM head.

The field names are those of Hugging Face's ``GPT2LMHeadModel`` state dict without its
``transformer.`` prefix; its ``Conv1D`` layers store their weights ``[in, out]``, which is
already ferrum's ``Linear`` layout, so loading renames the LayerNorm parameters and nothing else
(``weights.gpt2_store``).
"""

from __future__ import annotations

import math
from typing import Any, TypeVar

from ferrum import D2, D3, Device, Int, Tensor, activation, config
from ferrum.backend import Backend
from ferrum.module import Module
from ferrum.nn import Embedding, EmbeddingConfig, LayerNorm, LayerNormConfig, Linear, LinearConfig

from .kv_cache import KvCache, causal_attention, step_end, step_start

B = TypeVar("B", bound=Backend)

# gelu_tanh(x) = 0.5 x (1 + tanh(c (x + 0.044715 x^3))) = x sigmoid(2 c (x + 0.044715 x^3)), c = sqrt(2 / pi)
_GELU_SCALE = 2.0 * math.sqrt(2.0 / math.pi)


def gelu_tanh(x: Tensor[B, Any]) -> Tensor[B, Any]:
    """GELU with the tanh approximation (Hugging Face's ``gelu_new``), element-wise."""
    inner = x * (x.square() * 0.044715 + 1.0)
    out: Tensor[B, Any] = x * activation.sigmoid(inner * _GELU_SCALE)
    return out


@config
class Gpt2Config:
    """Sizes of a GPT-2 model, named as Hugging Face's ``GPT2Config`` (``from_hf`` reads its
    ``config.json``).

    Example:
        >>> from ferrum.backend import NdArray
        >>> Gpt2Config(256, 32, 16, 1, 2).init(NdArray.device()).max_positions
        32
    """

    vocab_size: int
    n_positions: int
    n_embd: int
    n_layer: int
    n_head: int
    layer_norm_epsilon: float = 1e-5

    @staticmethod
    def from_hf(fields: dict[str, Any]) -> Gpt2Config:
        """The sizes from a ``transformers`` GPT-2 config (``config.json`` as a dict)."""
        if fields.get("activation_function", "gelu_new") not in ("gelu_new", "gelu_pytorch_tanh"):
            raise ValueError(
                f"GPT-2: only the tanh GELU (gelu_new) is supported, found {fields['activation_function']!r}"
            )
        return Gpt2Config(
            vocab_size=int(fields["vocab_size"]),
            n_positions=int(fields["n_positions"]),
            n_embd=int(fields["n_embd"]),
            n_layer=int(fields["n_layer"]),
            n_head=int(fields["n_head"]),
            layer_norm_epsilon=float(fields.get("layer_norm_epsilon", 1e-5)),
        )

    def init(self, device: Device[B]) -> Gpt2[B]:
        """A model with fresh weights on ``device`` (``weights.load_gpt2`` replaces them)."""
        if self.n_embd % self.n_head:
            raise ValueError(f"Gpt2Config: n_embd {self.n_embd} is not a multiple of n_head {self.n_head}")
        width = self.n_embd
        norm = LayerNormConfig(width, epsilon=self.layer_norm_epsilon)
        return Gpt2(
            wte=EmbeddingConfig(self.vocab_size, width).init(device),
            wpe=EmbeddingConfig(self.n_positions, width).init(device),
            h=[
                Gpt2Block(
                    ln_1=norm.init(device),
                    attn=Gpt2Attention(
                        c_attn=LinearConfig(width, 3 * width).init(device),
                        c_proj=LinearConfig(width, width).init(device),
                        n_head=self.n_head,
                    ),
                    ln_2=norm.init(device),
                    mlp=Gpt2Mlp(
                        c_fc=LinearConfig(width, 4 * width).init(device),
                        c_proj=LinearConfig(4 * width, width).init(device),
                    ),
                )
                for _ in range(self.n_layer)
            ],
            ln_f=norm.init(device),
        )


class Gpt2Attention(Module[B]):
    """Causal self-attention with one fused query/key/value projection ``c_attn``."""

    c_attn: Linear[B]
    c_proj: Linear[B]
    n_head: int

    def forward(self, x: Tensor[B, D3], cache: KvCache[B] | None, layer: int) -> Tensor[B, D3]:
        """``[batch, seq, n_embd]`` in and out; ``cache`` holds the earlier positions' keys and values."""
        batch, seq, width = x.dims()
        heads = self.n_head
        qkv = self.c_attn.forward(x).reshape((batch, seq, 3 * heads, width // heads)).swap_dims(1, 2)
        query, key, value = (qkv.narrow(1, i * heads, heads) for i in range(3))
        if cache is not None:
            key, value = cache.write(layer, key, value)
        context = causal_attention(query, key, value).swap_dims(1, 2).reshape((batch, seq, width))
        return self.c_proj.forward(context)


class Gpt2Mlp(Module[B]):
    """``c_proj(gelu_tanh(c_fc(x)))``, 4x wide inside."""

    c_fc: Linear[B]
    c_proj: Linear[B]

    def forward(self, x: Tensor[B, D3]) -> Tensor[B, D3]:
        """``[batch, seq, n_embd]`` in and out."""
        return self.c_proj.forward(gelu_tanh(self.c_fc.forward(x)))


class Gpt2Block(Module[B]):
    """A pre-LayerNorm transformer block: ``x + attn(ln_1(x))``, then ``x + mlp(ln_2(x))``."""

    ln_1: LayerNorm[B]
    attn: Gpt2Attention[B]
    ln_2: LayerNorm[B]
    mlp: Gpt2Mlp[B]

    def forward(self, x: Tensor[B, D3], cache: KvCache[B] | None, layer: int) -> Tensor[B, D3]:
        """``[batch, seq, n_embd]`` in and out."""
        x = x + self.attn.forward(self.ln_1.forward(x), cache, layer)
        return x + self.mlp.forward(self.ln_2.forward(x))


class Gpt2(Module[B]):
    """GPT-2's language model: token ids ``[batch, seq]`` to next-token logits ``[batch, seq, vocab]``.

    Example:
        >>> from ferrum.backend import NdArray
        >>> device = NdArray.device()
        >>> model = Gpt2Config(256, 32, 16, 1, 2).init(device)
        >>> model.forward(Tensor.from_ints([[1, 2, 3]], device)).dims()
        (1, 3, 256)
    """

    wte: Embedding[B]
    wpe: Embedding[B]
    h: list[Gpt2Block[B]]
    ln_f: LayerNorm[B]

    @property
    def max_positions(self) -> int:
        """The longest sequence the learned positions cover."""
        return self.wpe.weight.shape()[0]

    @property
    def vocab_size(self) -> int:
        """How many token ids the model knows."""
        return self.wte.weight.shape()[0]

    def new_cache(self, batch: int, max_len: int) -> KvCache[B]:
        """An empty cache for ``batch`` sequences of up to ``max_len`` positions."""
        if max_len > self.max_positions:
            raise ValueError(f"GPT-2: max_len {max_len} exceeds the model's {self.max_positions} positions")
        width = self.wte.weight.shape()[1]
        heads = self.h[0].attn.n_head if self.h else 1
        return KvCache(len(self.h), batch, heads, max_len, width // heads, self.wte.weight.val().device())

    def forward(
        self, ids: Tensor[B, D2, Int], cache: KvCache[B] | None = None, last_only: bool = False
    ) -> Tensor[B, D3]:
        """Logits ``[batch, seq, vocab]`` (``[batch, 1, vocab]`` with ``last_only``) for ``ids``
        ``[batch, seq]``.

        Without a cache, ``ids`` are positions ``0..seq``; with one, they follow the
        ``cache.length`` positions it holds, whose keys and values it keeps for the next call.
        """
        batch, seq = ids.dims()
        start = step_start("GPT-2", cache, seq, self.max_positions)
        positions = self.wpe.weight.val().narrow(0, start, seq)
        x: Tensor[B, D3] = self.wte.forward(ids) + positions.reshape((1, seq, positions.dims()[1]))
        for i, block in enumerate(self.h):
            x = block.forward(x, cache, i)
        x = self.ln_f.forward(step_end(x, cache, seq, last_only))
        # The LM head is the token embedding, transposed (tied weights).
        width = x.dims()[2]
        flat: Tensor[B, D2] = x.reshape((-1, width))
        return (flat @ self.wte.weight.val().transpose()).reshape((batch, -1, self.vocab_size))
