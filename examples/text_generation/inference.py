"""Sampling (Burn's example trains only): load the trained model and continue prompts, one
character at a time, each step computing only the newest position (an autoregressive cache)."""

from __future__ import annotations

import os

import numpy as np
from ferrum import D2, Device, Int, Tensor
from ferrum.backend import NdArray
from ferrum.record import CompactRecorder

from .data import CharTokenizer
from .model import TextGenerationModel, TextGenerationModelConfig
from .training import ExperimentConfig


def load(artifact_dir: str, device: Device[NdArray]) -> tuple[TextGenerationModel[NdArray], CharTokenizer]:
    """The trained model and its tokenizer, from ``config.json`` and ``model.mpk`` in ``artifact_dir``."""
    cfg = ExperimentConfig.load(os.path.join(artifact_dir, "config.json"))
    tokenizer = CharTokenizer(cfg.alphabet)
    model = TextGenerationModelConfig(
        cfg.transformer, tokenizer.vocab_size(), tokenizer.pad_token(), cfg.max_seq_length
    ).init(device)
    return model.load_file(os.path.join(artifact_dir, "model"), CompactRecorder(), device), tokenizer


def sample(
    model: TextGenerationModel[NdArray],
    tokenizer: CharTokenizer,
    prompt: str,
    max_new_tokens: int,
    temperature: float,
    rng: np.random.Generator,
) -> str:
    """``prompt`` and what the model writes after it: until ``[END]``, ``max_new_tokens`` characters
    or the model's last position. ``temperature`` 0 takes the likeliest character each time."""
    if temperature < 0:
        raise ValueError(f"sample: temperature must be >= 0, found {temperature}")
    tokens = [tokenizer.start_token(), *tokenizer.encode(prompt, False)]
    if len(tokens) >= model.max_seq_length:
        raise ValueError(
            f"sample: the prompt has {len(prompt)} characters; the model reads at most "
            f"{model.max_seq_length - 2} after [START]"
        )
    device = NdArray.device()
    cache = model.transformer.new_autoregressive_cache()
    # Only characters may follow: [START] and [PAD] never do; [END] stops.
    banned = [tokenizer.start_token(), tokenizer.pad_token()]
    written: list[int] = []
    while len(written) < max_new_tokens and len(tokens) < model.max_seq_length:
        ids: Tensor[NdArray, D2, Int] = Tensor.from_ints([tokens], device)
        logits = model.next_token_logits(ids, cache).to_numpy()[0].astype(np.float64)
        logits[banned] = -np.inf
        if temperature == 0:
            token = int(np.argmax(logits))
        else:
            scaled = (logits - logits.max()) / temperature
            probs = np.exp(scaled)
            token = int(rng.choice(len(probs), p=probs / probs.sum()))
        if token == tokenizer.end_token():
            break
        tokens.append(token)
        written.append(token)
    return prompt + tokenizer.decode(written)


def generate(
    artifact_dir: str,
    device: Device[NdArray],
    prompts: list[str],
    max_new_tokens: int = 200,
    temperature: float = 0.8,
    seed: int = 0,
) -> list[str]:
    """Each prompt continued by the model trained into ``artifact_dir``; each is printed."""
    model, tokenizer = load(artifact_dir, device)
    rng = np.random.default_rng(seed)
    texts = []
    for i, prompt in enumerate(prompts):
        text = sample(model, tokenizer, prompt, max_new_tokens, temperature, rng)
        print(f"=== Sample {i} (prompt {prompt!r}) ===\n{text}\n")
        texts.append(text)
    return texts
