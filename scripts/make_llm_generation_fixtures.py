#!/usr/bin/env python3
"""Small random GPT-2 and Llama models from ``transformers``, with their logits and greedy continuations.

    /work/torch-venv/bin/python scripts/make_llm_generation_fixtures.py

Needs torch, transformers and safetensors (yardsticks in a separate environment, never ferrum's
dependencies); not run by the example or the tests. Writes, for ``gpt2`` and ``llama``, into
``examples/llm_generation/``:

- ``<name>.safetensors``: the model's state dict as Hugging Face names it (GPT-2's tied
  ``lm_head.weight`` left out, as ``save_pretrained`` does);
- ``<name>.config.json``: the ``transformers`` config (``config.to_dict()``);
- ``<name>.expected.npz``: ``prompt`` ``[1, P]`` (int64), ``logits`` ``[1, P, vocab]`` for it,
  ``continuation`` ``[1, 16]`` (greedy, each token the argmax of the previous step's logits, through
  ``transformers``' own KV cache) and ``full_logits`` ``[1, P + 15, vocab]``: one forward over prompt
  and continuation (the logits every cached step must reproduce).

Weights are drawn with a fixed seed and a wider initialiser than the default (0.02) so that the
greedy continuation has clear winners: the script prints the smallest gap between the best and the
second-best logit over the 16 steps, which must stay far above the 1e-4 the tests allow.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
import transformers
from safetensors.torch import save_file

OUT = Path(__file__).resolve().parent.parent / "examples" / "llm_generation"
PROMPT_LEN = 10
NEW_TOKENS = 16
VOCAB = 256


def gpt2() -> transformers.PreTrainedModel:
    config = transformers.GPT2Config(
        vocab_size=VOCAB,
        n_positions=64,
        n_embd=64,
        n_layer=2,
        n_head=4,
        activation_function="gelu_new",
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        initializer_range=0.1,
        bos_token_id=0,
        eos_token_id=0,
    )
    config._attn_implementation = "eager"
    return transformers.GPT2LMHeadModel(config)


def llama() -> transformers.PreTrainedModel:
    config = transformers.LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        rms_norm_eps=1e-6,
        initializer_range=0.1,
        tie_word_embeddings=False,
        bos_token_id=0,
        eos_token_id=0,
        pad_token_id=None,
    )
    config._attn_implementation = "eager"
    return transformers.LlamaForCausalLM(config)


def greedy(model: transformers.PreTrainedModel, prompt: torch.Tensor) -> tuple[torch.Tensor, float]:
    """``NEW_TOKENS`` argmax tokens through the model's KV cache, and the smallest top-1/top-2 gap."""
    out = model(input_ids=prompt, use_cache=True)
    past, logits = out.past_key_values, out.logits[:, -1]
    tokens: list[torch.Tensor] = []
    gap = float("inf")
    for _ in range(NEW_TOKENS):
        top = torch.topk(logits, 2, dim=-1).values
        gap = min(gap, float((top[:, 0] - top[:, 1]).min()))
        token = logits.argmax(dim=-1, keepdim=True)
        tokens.append(token)
        out = model(input_ids=token, cache=past, use_cache=True)
        past, logits = out.past_key_values, out.logits[:, -1]
    return torch.cat(tokens, dim=1), gap


def write(name: str, model: transformers.PreTrainedModel, seed: int) -> None:
    model.eval()
    generator = torch.Generator().manual_seed(seed)
    prompt = torch.randint(1, VOCAB, (1, PROMPT_LEN), generator=generator)
    with torch.no_grad():
        logits = model(input_ids=prompt).logits
        continuation, gap = greedy(model, prompt)
        full = torch.cat([prompt, continuation[:, :-1]], dim=1)
        full_logits = model(input_ids=full).logits
    state = {k: v.detach().contiguous().clone() for k, v in model.state_dict().items()}
    if model.config.tie_word_embeddings:
        state.pop("lm_head.weight", None)
    # Causal-mask buffers of older transformers versions are not weights.
    state = {k: v for k, v in state.items() if not k.endswith((".attn.bias", ".attn.masked_bias"))}
    save_file(state, str(OUT / f"{name}.safetensors"))
    (OUT / f"{name}.config.json").write_text(
        json.dumps(model.config.to_dict(), indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8"
    )
    np.savez_compressed(
        OUT / f"{name}.expected.npz",
        prompt=prompt.numpy().astype(np.int64),
        logits=logits.numpy().astype(np.float32),
        continuation=continuation.numpy().astype(np.int64),
        full_logits=full_logits.numpy().astype(np.float32),
    )
    size = (OUT / f"{name}.safetensors").stat().st_size
    print(f"{name}: {len(state)} tensors, {size / 1e3:.0f} kB; continuation {continuation.tolist()[0]}")
    print(f"  smallest top-1/top-2 logit gap over the greedy steps: {gap:.4f}")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    print(f"torch {torch.__version__}, transformers {transformers.__version__}")
    torch.manual_seed(0)
    write("gpt2", gpt2(), 1)
    torch.manual_seed(2)
    write("llama", llama(), 3)


if __name__ == "__main__":
    main()
