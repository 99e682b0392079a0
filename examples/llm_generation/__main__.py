"""``python -m examples.llm_generation``: GPT-2 and Llama from Hugging Face checkpoints, with a KV cache.

Loads the small random GPT-2 and Llama this folder ships (``<name>.config.json`` and
``<name>.safetensors``, written by ``scripts/make_llm_generation_fixtures.py``) into ferrum
modules, checks their logits for a prompt against those ``transformers`` computed
(``<name>.expected.npz``, within 1e-4), then generates greedily with the KV cache and
without it and checks both continuations against ``transformers``'. Options: ``--model
gpt2|llama|both``, ``--tokens N`` (new tokens, default 16: as many as the reference holds),
``--smoke`` (4 tokens).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from ferrum import Device, Tensor
from ferrum.backend import NdArray

from ..common.cli import example_parser
from .generate import CausalLm, generate
from .weights import load_gpt2, load_llama

HERE = Path(__file__).resolve().parent
TOLERANCE = 1e-4


def check(name: str, model: CausalLm[Any], tokens: int) -> bool:
    """Run ``model`` against ``transformers``' reference; print what it gives; whether all agrees."""
    device = NdArray.device()
    expected = np.load(HERE / f"{name}.expected.npz")
    prompt, reference = expected["prompt"], expected["continuation"][:, :tokens]
    ok = True
    logits = np.asarray(model.forward(Tensor.from_numpy(prompt.astype(np.int64), device)).to_numpy())
    diff = float(np.abs(logits - expected["logits"]).max())
    ok &= diff <= TOLERANCE
    print(f"{name}: prompt {prompt[0].tolist()}")
    print(f"  max |logit - transformers'| {diff:.2e} (tolerance {TOLERANCE:.0e})")
    for use_cache in (True, False):
        start = time.perf_counter()
        out = generate(model, prompt, tokens, device, use_cache=use_cache)
        ms = (time.perf_counter() - start) * 1e3 / tokens
        same = bool(np.array_equal(out, reference))
        ok &= same
        label = "with KV cache" if use_cache else "without cache"
        print(f"  {label}: {out[0].tolist()}  ({ms:.2f} ms/token; same as transformers: {same})")
    return ok


def main() -> int:
    parser = example_parser("llm_generation", __doc__)
    parser.add_argument("--model", choices=("gpt2", "llama", "both"), default="both")
    parser.add_argument("--tokens", type=int, default=16)
    parser.add_argument("--smoke", action="store_true", help="generate 4 tokens")
    args = parser.parse_args()
    tokens = 4 if args.smoke else args.tokens
    if not 1 <= tokens <= 16:
        parser.error(f"--tokens must be 1..16 (the reference holds 16), found {tokens}")
    device = NdArray.device()
    names = ("gpt2", "llama") if args.model == "both" else (args.model,)
    loaders: dict[str, Callable[[Path, Path, Device[NdArray]], CausalLm[NdArray]]] = {
        "gpt2": load_gpt2,
        "llama": load_llama,
    }
    failures = 0
    for name in names:
        model = loaders[name](HERE / f"{name}.config.json", HERE / f"{name}.safetensors", device)
        if not check(name, model, tokens):
            failures += 1
    if failures:
        print(f"{failures} of the models disagree with transformers", file=sys.stderr)
        return 1
    print(f"{' and '.join(names)} generate transformers' greedy continuation, with and without the cache")
    return 0


if __name__ == "__main__":
    sys.exit(main())
