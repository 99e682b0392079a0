#!/usr/bin/env python3
"""Write the PyTorch references that tests/nn/test_torch_parity.py compares ferrum's layers to (needs torch).

    /path/to/torch-venv/bin/python scripts/make_nn_torch_fixtures.py   # writes tests/fixtures/nn_torch

deform_conv2d.npz needs torchvision too (torchvision.ops.deform_conv2d).

Not run by the tests (they never need torch); the outputs are committed. Every case is one
``<case>.npz`` (float32, fixed seeds, small sizes) holding:

``in.<name>``          the inputs (bool masks and int targets as they are);
``param.<key>``        the module's state dict in torch's own layout and names (the test loads it
                       through ferrum's PyTorchToBurnAdapter, as a torch checkpoint would be);
``out.<name>``         the outputs;
``w.<name>``           fixed weights: the scalar loss is ``sum(sum(out.<name> * w.<name>))``
                       (integer outputs, pooling's indices, have none and stay out of it);
``grad_in.<name>``     that loss's gradient for each float input;
``grad_param.<key>``   and for each parameter (same layout as ``param.<key>``).

Masks follow Burn's convention, which is torch's for boolean masks: true marks a key (a position)
that must not be attended to. Burn's attention mask is ``[batch, seq_q, seq_k]``; torch wants
``[batch * heads, seq_q, seq_k]``, so the script repeats it per head. ``scaled_dot_product_attention``
takes the opposite convention (true = may attend): the script inverts the mask there.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "nn_torch"

Outputs = dict[str, torch.Tensor]


def _inputs(seed: int, **shapes: tuple[int, ...]) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return {k: (torch.rand(s, generator=gen) * 2 - 1).requires_grad_() for k, s in shapes.items()}


def save(
    case: str,
    run: Callable[..., Outputs],
    inputs: dict[str, torch.Tensor],
    module: nn.Module | None = None,
    seed: int = 0,
) -> None:
    """Run ``run(**inputs)``, backpropagate ``sum(out * w)`` and write everything to ``<case>.npz``."""
    outputs = run(**inputs)
    gen = torch.Generator().manual_seed(seed + 1000)
    # Integer outputs (pooling indices) are compared as they are and stay out of the loss.
    weights = {k: torch.randn(v.shape, generator=gen) for k, v in outputs.items() if v.is_floating_point()}
    loss = sum((outputs[k] * w).sum() for k, w in weights.items())
    assert isinstance(loss, torch.Tensor)
    loss.backward()
    arrays: dict[str, np.ndarray] = {}
    for k, v in inputs.items():
        arrays[f"in.{k}"] = v.detach().numpy()
        if v.requires_grad:
            assert v.grad is not None, f"{case}: {k} got no gradient"
            arrays[f"grad_in.{k}"] = v.grad.numpy()
    for k, v in outputs.items():
        arrays[f"out.{k}"] = v.detach().numpy()
        if k in weights:
            arrays[f"w.{k}"] = weights[k].numpy()
    if module is not None:
        for k, p in module.named_parameters():
            assert p.grad is not None, f"{case}: {k} got no gradient"
            arrays[f"param.{k}"] = p.detach().numpy()
            arrays[f"grad_param.{k}"] = p.grad.numpy()
    np.savez_compressed(OUT / f"{case}.npz", **arrays)


def _mask(seed: int, shape: tuple[int, ...]) -> torch.Tensor:
    """A random boolean mask (true = masked) that leaves the last key of every row visible."""
    gen = torch.Generator().manual_seed(seed)
    mask = torch.rand(shape, generator=gen) < 0.35
    mask[..., -1] = False  # a fully masked row is NaN in torch and uniform in Burn (min_float -1e4)
    return mask


def mha() -> None:
    torch.manual_seed(1)
    module = nn.MultiheadAttention(8, 2, dropout=0.0, batch_first=True)
    with torch.no_grad():  # torch starts the biases at zero: make them count
        module.in_proj_bias.uniform_(-0.5, 0.5)
        module.out_proj.bias.uniform_(-0.5, 0.5)
    inputs = _inputs(1, query=(2, 4, 8), key=(2, 5, 8), value=(2, 5, 8))
    inputs["mask_pad"] = _mask(2, (2, 5))
    inputs["mask_attn"] = _mask(3, (2, 4, 5))

    def run(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, mask_pad: torch.Tensor,
            mask_attn: torch.Tensor) -> Outputs:  # fmt: skip
        context, weights = module(
            query, key, value, key_padding_mask=mask_pad, attn_mask=mask_attn.repeat_interleave(2, 0),
            need_weights=True, average_attn_weights=False,
        )  # fmt: skip
        return {"context": context, "weights": weights}

    save("mha", run, inputs, module, seed=1)


def decoder(norm_first: bool) -> None:
    torch.manual_seed(2)
    layer = nn.TransformerDecoderLayer(
        8, 2, dim_feedforward=16, dropout=0.0, activation="gelu", batch_first=True, norm_first=norm_first
    )
    with torch.no_grad():  # LayerNorm starts as the identity: make the three norms tell apart
        for norm in (layer.norm1, layer.norm2, layer.norm3):
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.uniform_(-0.5, 0.5)
    module = nn.TransformerDecoder(layer, 1)
    inputs = _inputs(2, target=(2, 4, 8), memory=(2, 5, 8))
    inputs["memory_mask_pad"] = _mask(4, (2, 5))

    def run(target: torch.Tensor, memory: torch.Tensor, memory_mask_pad: torch.Tensor) -> Outputs:
        causal = torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1)
        out = module(
            target, memory, tgt_mask=causal, memory_key_padding_mask=memory_mask_pad, tgt_is_causal=True
        )
        return {"y": out}

    save("decoder_prenorm" if norm_first else "decoder", run, inputs, module, seed=2)


def encoder() -> None:
    """Two pre-norm encoder layers, a padding mask (the store fixtures: one layer, no mask, no gradients)."""
    torch.manual_seed(16)
    layer = nn.TransformerEncoderLayer(
        8, 2, dim_feedforward=16, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
    )
    with torch.no_grad():
        for norm in (layer.norm1, layer.norm2):
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.uniform_(-0.5, 0.5)
    module = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    inputs = _inputs(16, x=(2, 5, 8))
    inputs["mask_pad"] = _mask(17, (2, 5))
    save(
        "encoder_masked",
        lambda x, mask_pad: {"y": module(x, src_key_padding_mask=mask_pad)},
        inputs,
        module,
        16,
    )


class CrossAttention(nn.Module):
    """Burn's CrossAttention in torch: grouped key/value heads through scaled_dot_product_attention."""

    def __init__(self, d_model: int, d_context: int, n_heads: int, n_heads_kv: int, d_head: int) -> None:
        super().__init__()
        self.heads, self.heads_kv, self.d_head = n_heads, n_heads_kv, d_head
        self.query = nn.Linear(d_model, n_heads * d_head)
        self.key = nn.Linear(d_context, n_heads_kv * d_head)
        self.value = nn.Linear(d_context, n_heads_kv * d_head)
        self.output = nn.Linear(n_heads * d_head, d_model)

    def forward(self, query: torch.Tensor, context: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        def heads(x: torch.Tensor, n: int) -> torch.Tensor:
            return x.reshape(x.shape[0], x.shape[1], n, self.d_head).transpose(1, 2)

        q = heads(self.query(query), self.heads)
        k, v = heads(self.key(context), self.heads_kv), heads(self.value(context), self.heads_kv)
        # SDPA's boolean mask is true where attention is allowed: the opposite of Burn's.
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=~mask[:, None, None, :], enable_gqa=True)
        return self.output(out.transpose(1, 2).reshape(query.shape[0], query.shape[1], -1))


def cross_attention() -> None:
    torch.manual_seed(11)
    module = CrossAttention(8, 6, 4, 2, 3)
    inputs = _inputs(11, query=(2, 4, 8), context=(2, 5, 6))
    inputs["mask"] = _mask(12, (2, 5))
    save(
        "cross_attention",
        lambda query, context, mask: {"y": module(query, context, mask)},
        inputs,
        module,
        11,
    )


def bilstm() -> None:
    torch.manual_seed(3)
    module = nn.LSTM(3, 4, batch_first=True, bidirectional=True)

    def run(x: torch.Tensor) -> Outputs:
        y, (h, c) = module(x)
        return {"y": y, "h": h, "c": c}

    save("bilstm", run, _inputs(3, x=(2, 5, 3)), module, seed=3)


def recurrent() -> None:
    """nn.LSTM and nn.GRU from given initial states (the store fixtures start from zeros, no gradients)."""
    torch.manual_seed(12)
    lstm = nn.LSTM(3, 4, batch_first=True)

    def run_lstm(x: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor) -> Outputs:
        y, (h, c) = lstm(x, (h0[None], c0[None]))
        return {"y": y, "h": h[0], "c": c[0]}

    save("lstm_state", run_lstm, _inputs(12, x=(2, 5, 3), h0=(2, 4), c0=(2, 4)), lstm, seed=12)
    gru = nn.GRU(3, 4, batch_first=True)
    save("gru_state", lambda x, h0: {"y": gru(x, h0[None])[0]}, _inputs(13, x=(2, 5, 3), h0=(2, 4)), gru, 13)


def conv3d() -> None:
    torch.manual_seed(4)
    module = nn.Conv3d(4, 6, (2, 3, 2), stride=(1, 2, 1), padding=(1, 0, 1), dilation=(1, 1, 2), groups=2)
    save("conv3d", lambda x: {"y": module(x)}, _inputs(4, x=(2, 4, 4, 5, 5)), module, seed=4)


def conv_transpose3d() -> None:
    torch.manual_seed(5)
    module = nn.ConvTranspose3d(
        4,
        6,
        (2, 3, 2),
        stride=(2, 1, 2),
        padding=(1, 0, 0),
        output_padding=(1, 0, 0),
        dilation=(1, 2, 1),
        groups=2,
    )
    save("conv_transpose3d", lambda x: {"y": module(x)}, _inputs(5, x=(2, 4, 3, 3, 2)), module, seed=5)


class DeformConv(nn.Module):
    """torchvision.ops.deform_conv2d with its own weight and bias (ferrum's DeformConv2d keys)."""

    def __init__(self) -> None:
        super().__init__()
        gen = torch.Generator().manual_seed(9)
        self.weight = nn.Parameter(torch.rand((6, 2, 3, 2), generator=gen) - 0.5)  # two weight groups
        self.bias = nn.Parameter(torch.rand(6, generator=gen) - 0.5)

    def forward(self, x: torch.Tensor, offset: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        from torchvision.ops import deform_conv2d

        return deform_conv2d(
            x, offset, self.weight, self.bias, stride=(1, 2), padding=(1, 0), dilation=(2, 1), mask=mask
        )


def deform_conv() -> None:
    """Two offset groups; offsets up to 1.5 pixels (some taps land outside the image, read as zero)."""
    module = DeformConv()
    inputs = _inputs(10, x=(2, 4, 5, 6), offset=(2, 24, 3, 3), mask=(2, 12, 3, 3))
    with torch.no_grad():
        inputs["offset"] *= 1.5
        inputs["mask"].mul_(0.5).add_(0.5)

    def run(x: torch.Tensor, offset: torch.Tensor, mask: torch.Tensor) -> Outputs:
        return {"y": module(x, offset, mask), "y_no_mask": module(x, offset, None)}

    save("deform_conv2d", run, inputs, module, seed=10)


def interpolate() -> None:
    # ferrum (Burn's CPU backend) aligns corners for linear and cubic; its nearest is torch's "nearest"
    # (source index floor(i * in / out)); torch's cubic uses a = -0.75 like Burn's.
    def run(x2: torch.Tensor, x1: torch.Tensor) -> Outputs:
        out: Outputs = {}
        for size in ((7, 3), (2, 9)):
            tag = f"{size[0]}x{size[1]}"
            out[f"nearest_{tag}"] = F.interpolate(x2, size=size, mode="nearest")
            out[f"linear_{tag}"] = F.interpolate(x2, size=size, mode="bilinear", align_corners=True)
            out[f"cubic_{tag}"] = F.interpolate(x2, size=size, mode="bicubic", align_corners=True)
        out["nearest1d"] = F.interpolate(x1, size=9, mode="nearest")
        out["linear1d"] = F.interpolate(x1, size=9, mode="linear", align_corners=True)
        # torch has no 1-d cubic: bicubic on a height of one (its vertical weights then sum to one).
        out["cubic1d"] = F.interpolate(x1[:, :, None], size=(1, 9), mode="bicubic", align_corners=True)[
            :, :, 0
        ]
        return out

    save("interpolate", run, _inputs(6, x2=(2, 3, 4, 5), x1=(2, 3, 5)), seed=6)


def elementwise() -> None:
    """Glu, the two losses, unfold and the linalg functions: no parameters, one file."""
    inputs = _inputs(7, glu=(2, 6, 3), unfold=(2, 3, 5, 6), a=(4, 3), b=(4, 3), cos1=(5, 6), cos2=(5, 6),
                     norm=(3, 7), poisson_log=(3, 4))  # fmt: skip
    gen = torch.Generator().manual_seed(8)
    inputs["poisson_rate"] = (torch.rand((3, 4), generator=gen) * 2 + 0.1).requires_grad_()
    inputs["poisson_target"] = torch.randint(0, 5, (3, 4), generator=gen).float()
    inputs["cos_target"] = torch.tensor([1, -1, 1, -1, -1])

    def run(glu: torch.Tensor, unfold: torch.Tensor, a: torch.Tensor, b: torch.Tensor, cos1: torch.Tensor,
            cos2: torch.Tensor, norm: torch.Tensor, poisson_log: torch.Tensor, poisson_rate: torch.Tensor,
            poisson_target: torch.Tensor, cos_target: torch.Tensor) -> Outputs:  # fmt: skip
        out = {
            "glu": F.glu(glu, 1),
            "unfold": F.unfold(unfold, (2, 3), dilation=(1, 2), padding=(1, 0), stride=(2, 1)),
            "cross": torch.linalg.cross(a, b, dim=1),
            "cosine_similarity": F.cosine_similarity(cos1, cos2, dim=1, eps=1e-8).unsqueeze(1),
            "poisson_log_full": nn.PoissonNLLLoss(log_input=True, full=True)(poisson_log, poisson_target),
            "poisson_rate": nn.PoissonNLLLoss(log_input=False, full=False)(poisson_rate, poisson_target),
            "cosine_embedding": nn.CosineEmbeddingLoss(margin=0.2)(cos1, cos2, cos_target),
        }
        for name, order in (("l1", 1.0), ("l2", 2.0), ("l3", 3.0), ("linf", float("inf"))):
            out[f"norm_{name}"] = torch.linalg.vector_norm(norm, order, dim=1, keepdim=True)
        return {k: v.reshape(1) if v.dim() == 0 else v for k, v in out.items()}

    save("elementwise", run, inputs, seed=7)


def functional() -> None:
    """Pooling with indices, scaled dot-product attention, Reflect/Edge padding, normalize, the other norms
    and interpolation by a scale factor."""
    inputs = _inputs(14, pool1=(2, 3, 9), pool2=(2, 3, 7, 6), q=(2, 2, 4, 3), k=(2, 2, 5, 3), v=(2, 2, 5, 3),
                     pad=(2, 3, 4), norm=(3, 7), resize=(1, 2, 5, 4))  # fmt: skip
    inputs["attn_mask"] = _mask(15, (2, 1, 4, 5))

    def run(**t: torch.Tensor) -> Outputs:
        p1, i1 = F.max_pool1d(t["pool1"], 3, 2, padding=1, dilation=2, ceil_mode=True, return_indices=True)
        p2, i2 = F.max_pool2d(
            t["pool2"], (3, 2), (2, 1), padding=(1, 1), dilation=(1, 2), return_indices=True
        )
        out = {
            "max_pool1d": p1,
            "max_pool1d_indices": i1,
            "max_pool2d": p2,
            "max_pool2d_indices": i2,
            # SDPA's boolean mask is true where attention is allowed: the opposite of Burn's.
            "attention": F.scaled_dot_product_attention(t["q"], t["k"], t["v"], attn_mask=~t["attn_mask"]),
            "pad_reflect": F.pad(t["pad"], (2, 1, 1, 2), mode="reflect"),
            "pad_edge": F.pad(t["pad"], (3, 0, 0, 1), mode="replicate"),
            "normalize_l2": F.normalize(t["norm"], 2.0, 1, 1e-12),
            "normalize_l1": F.normalize(t["norm"], 1.0, 1, 1e-12),
            "norm_l0": torch.linalg.vector_norm(t["norm"], 0, dim=1, keepdim=True),
            "norm_lneginf": torch.linalg.vector_norm(t["norm"], float("-inf"), dim=1, keepdim=True),
            # ferrum (as Burn) turns a scale factor into an output size, then resamples to that size:
            # torch's recompute_scale_factor=True (torch's default maps nearest's coordinates by
            # 1 / scale instead; with align_corners=True linear ignores the factor beyond the size).
            "scale_nearest": F.interpolate(
                t["resize"], scale_factor=(1.7, 0.6), mode="nearest", recompute_scale_factor=True
            ),
            "scale_linear": F.interpolate(
                t["resize"], scale_factor=(1.7, 0.6), mode="bilinear", align_corners=True
            ),
        }
        return out

    save("functional", run, inputs, seed=14)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for make in (
        mha,
        encoder,
        cross_attention,
        bilstm,
        recurrent,
        conv3d,
        conv_transpose3d,
        deform_conv,
        interpolate,
        elementwise,
        functional,
    ):
        make()
    decoder(norm_first=False)
    decoder(norm_first=True)
    total = sum(p.stat().st_size for p in OUT.glob("*.npz"))
    print(f"wrote {len(list(OUT.glob('*.npz')))} files, {total} bytes, to {OUT}")


if __name__ == "__main__":
    main()
