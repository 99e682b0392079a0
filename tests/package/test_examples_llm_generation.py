"""examples/llm_generation: GPT-2 and Llama as ferrum modules against ``transformers``' own outputs.

The references (``<name>.expected.npz`` next to the example, written by
scripts/make_llm_generation_fixtures.py with torch and transformers) hold the prompt's logits,
the greedy continuation through transformers' KV cache, and the logits of one forward over prompt
and continuation. The pieces (cache, grouped attention, rotary positions) are also checked
against NumPy spelled out here.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from ferrum import Tensor
from ferrum.backend import NdArray
from mypy import api as mypy_api

from examples.llm_generation.generate import CausalLm, generate
from examples.llm_generation.kv_cache import KvCache, causal_attention
from examples.llm_generation.llama import HalfRotary
from examples.llm_generation.weights import load_gpt2, load_llama

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "examples" / "llm_generation"
DEVICE = NdArray.device()
MODELS = ("gpt2", "llama")


def load(name: str) -> CausalLm[Any]:
    loader = load_gpt2 if name == "gpt2" else load_llama
    return loader(HERE / f"{name}.config.json", HERE / f"{name}.safetensors", DEVICE)


@pytest.fixture(scope="module", params=MODELS)
def case(request: pytest.FixtureRequest) -> tuple[str, CausalLm[Any], Any]:
    name: str = request.param
    return name, load(name), np.load(HERE / f"{name}.expected.npz")


def test_prompt_logits_match_transformers(case: tuple[str, CausalLm[Any], Any]) -> None:
    _, model, expected = case
    logits = model.forward(Tensor.from_numpy(expected["prompt"], DEVICE)).to_numpy()
    assert logits.shape == expected["logits"].shape
    np.testing.assert_allclose(logits, expected["logits"], rtol=0, atol=1e-4)


def test_cached_steps_give_the_logits_of_one_full_forward(case: tuple[str, CausalLm[Any], Any]) -> None:
    """Prompt, then one token at a time through the cache: each step's logits are transformers'
    logits at that position of a single forward over the whole sequence."""
    _, model, expected = case
    prompt, continuation, full = expected["prompt"], expected["continuation"], expected["full_logits"]
    cache = model.new_cache(1, full.shape[1])
    steps = [model.forward(Tensor.from_numpy(prompt, DEVICE), cache).to_numpy()]
    for i in range(continuation.shape[1] - 1):
        steps.append(model.forward(Tensor.from_numpy(continuation[:, i : i + 1], DEVICE), cache).to_numpy())
    assert cache.length == full.shape[1]
    np.testing.assert_allclose(np.concatenate(steps, axis=1), full, rtol=0, atol=1e-4)


def test_greedy_continuation_is_transformers(case: tuple[str, CausalLm[Any], Any]) -> None:
    _, model, expected = case
    out = generate(model, expected["prompt"], 16)  # on the model's device
    np.testing.assert_array_equal(out, expected["continuation"])


def test_generation_without_cache_is_the_same(case: tuple[str, CausalLm[Any], Any]) -> None:
    _, model, expected = case
    cached = generate(model, expected["prompt"], 16, DEVICE, use_cache=True)
    recomputed = generate(model, expected["prompt"], 16, DEVICE, use_cache=False)
    np.testing.assert_array_equal(cached, recomputed)


def test_batch_of_two_prompts_generates_each_alone(case: tuple[str, CausalLm[Any], Any]) -> None:
    _, model, expected = case
    prompt = expected["prompt"]
    other = prompt[:, ::-1].copy()
    both = generate(model, np.concatenate([prompt, other]), 6, DEVICE)
    np.testing.assert_array_equal(both[:1], expected["continuation"][:, :6])
    np.testing.assert_array_equal(both[1:], generate(model, other, 6, DEVICE, use_cache=False))


# ------------------------------------------------------------------ bad input


def test_prompt_longer_than_max_length_is_refused(case: tuple[str, CausalLm[Any], Any]) -> None:
    _, model, _ = case
    limit = model.max_positions
    message = rf"need {limit + 1} positions, more than the model's max length {limit}"
    with pytest.raises(ValueError, match=message):
        generate(model, np.ones((1, limit), np.int64), 2, DEVICE)
    with pytest.raises(ValueError, match=r"positions 0\.\.\d+ exceed"):
        model.forward(Tensor.from_numpy(np.ones((1, limit + 1), np.int64), DEVICE))


@pytest.mark.parametrize("bad", [256, -1])
def test_token_ids_outside_the_vocabulary_are_refused(case: tuple[str, CausalLm[Any], Any], bad: int) -> None:
    _, model, _ = case
    prompt = np.array([[5, 6, bad, 7]])
    with pytest.raises(ValueError, match=rf"token id {bad} at \[0, 2\] is outside the vocabulary 0\.\.255"):
        generate(model, prompt, 3, DEVICE)


@pytest.mark.parametrize(
    ("prompt", "tokens", "message"),
    [
        ([1, 2, 3], 2, r"\[batch, prompt_len\] with both non-zero, found shape \(3,\)"),
        ([[]], 2, r"found shape \(1, 0\)"),
        ([[1.5, 2.0]], 2, "integer token ids, found dtype float64"),
        ([[1, 2]], 0, "max_new_tokens must be a positive int, found 0"),
    ],
)
def test_malformed_requests_are_refused(prompt: Any, tokens: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        generate(load("gpt2"), prompt, tokens, DEVICE)


def test_cache_refuses_positions_past_its_length() -> None:
    model = load("llama")
    cache = model.new_cache(1, 4)
    model.forward(Tensor.from_numpy(np.array([[1, 2, 3]]), DEVICE), cache)
    with pytest.raises(ValueError, match="3 positions are filled and 2 more do not fit in max_len 4"):
        model.forward(Tensor.from_numpy(np.array([[4, 5]]), DEVICE), cache)
    assert cache.length == 3
    with pytest.raises(ValueError, match="max_len 65 exceeds the model's 64 positions"):
        model.new_cache(1, 65)


def test_weights_of_another_model_are_refused() -> None:
    message = r"llama\.safetensors: the module's tensors wte\.weight, .* not in the file"
    with pytest.raises(ValueError, match=message):
        load_gpt2(HERE / "gpt2.config.json", HERE / "llama.safetensors", DEVICE)


def test_weights_of_another_size_are_refused_naming_the_tensor(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    fields = (HERE / "gpt2.config.json").read_text()
    config.write_text(fields.replace('"n_positions": 64', '"n_positions": 32'))
    with pytest.raises(ValueError, match=r"wpe\.weight: expected shape \[32, 64\], found \[64, 64\]"):
        load_gpt2(config, HERE / "gpt2.safetensors", DEVICE)


def test_unsupported_config_is_named(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text((HERE / "gpt2.config.json").read_text().replace('"gelu_new"', '"relu"'))
    with pytest.raises(ValueError, match="only the tanh GELU"):
        load_gpt2(config, HERE / "gpt2.safetensors", DEVICE)
    config.write_text("[1, 2]")
    with pytest.raises(ValueError, match="expected a JSON object, found list"):
        load_gpt2(config, HERE / "gpt2.safetensors", DEVICE)


# ------------------------------------------------------------------ the pieces, against NumPy


def test_kv_cache_writes_each_step_after_the_last() -> None:
    rng = np.random.default_rng(0)
    cache: KvCache[Any] = KvCache(2, 1, 2, 6, 3, DEVICE)
    first, second = rng.standard_normal((1, 2, 4, 3)), rng.standard_normal((1, 2, 1, 3))
    for chunk in (first, second):
        t = Tensor.from_numpy(chunk.astype(np.float32), DEVICE)
        keys, values = cache.write(1, t, -t)
        cache.advance(chunk.shape[2])
    both = np.concatenate([first, second], axis=2)
    np.testing.assert_allclose(keys.to_numpy(), both, atol=1e-6)
    np.testing.assert_allclose(values.to_numpy(), -both, atol=1e-6)
    stored = cache.keys[1].to_numpy()
    assert stored.shape == (1, 2, 6, 3) and not stored[:, :, 5:].any()
    assert not cache.keys[0].to_numpy().any()
    with pytest.raises(Exception, match=r"expected key and value \[1, 2, new, 3\], found \[1, 3, 1, 3\]"):
        cache.write(0, Tensor.zeros((1, 3, 1, 3), DEVICE), Tensor.zeros((1, 3, 1, 3), DEVICE))


def numpy_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Hugging Face's eager attention: keys repeated per query head, causal from the end."""
    heads, kv_heads = q.shape[1], k.shape[1]
    k, v = np.repeat(k, heads // kv_heads, axis=1), np.repeat(v, heads // kv_heads, axis=1)
    seq, total = q.shape[2], k.shape[2]
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(q.shape[3])
    scores = np.where(np.arange(total)[None, :] > np.arange(total - seq, total)[:, None], -np.inf, scores)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    return (weights / weights.sum(-1, keepdims=True)) @ v  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("heads", "kv_heads", "seq", "total"), [(4, 2, 3, 7), (4, 4, 1, 5), (6, 2, 5, 5), (2, 1, 1, 1)]
)
def test_grouped_causal_attention_matches_numpy(heads: int, kv_heads: int, seq: int, total: int) -> None:
    rng = np.random.default_rng(heads * 100 + seq)
    q = rng.standard_normal((2, heads, seq, 8)).astype(np.float32)
    k, v = (rng.standard_normal((2, kv_heads, total, 8)).astype(np.float32) for _ in range(2))
    out = causal_attention(*(Tensor.from_numpy(a, DEVICE) for a in (q, k, v))).to_numpy()
    np.testing.assert_allclose(out, numpy_attention(q, k, v), rtol=1e-5, atol=1e-5)


def test_half_rotary_is_hugging_faces_rotate_half() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 2, 3, 8)).astype(np.float32)
    rope: HalfRotary[Any] = HalfRotary.new(16, 8, 500.0, DEVICE)
    out = rope.forward(Tensor.from_numpy(x, DEVICE), 5).to_numpy()
    inv_freq = 500.0 ** -(np.arange(0, 8, 2) / 8)
    angles = np.arange(5, 8)[:, None] * np.concatenate([inv_freq, inv_freq])[None, :]
    rotated = np.concatenate([-x[..., 4:], x[..., :4]], axis=-1)
    np.testing.assert_allclose(out, x * np.cos(angles) + rotated * np.sin(angles), rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ as a user runs it


def test_example_runs_and_agrees_with_transformers() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "examples.llm_generation", "--smoke"],
        capture_output=True, text=True, timeout=300, cwd=ROOT, env=env,
    )
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    for name in MODELS:
        tokens = np.load(HERE / f"{name}.expected.npz")["continuation"][0, :4].tolist()
        assert f"  with KV cache: {tokens}" in done.stdout, done.stdout
        assert f"  without cache: {tokens}" in done.stdout, done.stdout
    assert "gpt2 and llama generate transformers' greedy continuation" in done.stdout


def test_example_passes_mypy_strict(tmp_path: Path) -> None:
    out, err, status = mypy_api.run(
        ["--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(tmp_path / "cache"), "--strict",
         str(HERE), str(ROOT / "benches" / "llm_generation.py")]
    )
    assert status == 0, out + err
