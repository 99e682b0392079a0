"""Greedy generation with GPT-2 and Llama: ferrum's own modules with a KV cache against onnxruntime.

    /work/torch-venv/bin/python benches/llm_generation.py [--rounds 9] [--tokens 64] [--only gpt2]

For each model (a ``transformers`` ``GPT2LMHeadModel`` and ``LlamaForCausalLM`` with random
seeded weights, in two sizes: ``small``, the example's fixture config (hidden 64, 2 layers), and
``base``, GPT-2-small-like (hidden 768, 12 layers, 12 heads; Llama with 4 key/value heads, MLP
2048, vocabulary 32000)), the script

- saves the weights as safetensors and loads them into the example's ferrum modules
  (``examples/llm_generation``), exactly as a user's checkpoint;
- exports the model with the TorchScript exporter (``dynamo=False``, opset 17) as one graph
  taking ``input_ids`` and every layer's past keys and values and returning the last position's
  logits and the present keys and values, and runs it in onnxruntime (2 intra-op threads);
- generates ``--tokens`` new tokens greedily from a 16-token prompt at batch 1, in the same loop
  shape for every engine: the prompt once, then one token per step, each the argmax of the
  previous logits. ferrum runs with its KV cache (``ferrum``) and without, recomputing the
  whole sequence each step (``ferrum-nocache``, in the small size only: it is quadratic).

Before timing, every engine's continuation is checked against ``transformers``' own (the same
token ids). The engines take turns round by round (``--rounds``, at least 9); the table gives
each engine's median milliseconds per new token (whole generation, prompt included, divided by
the number of new tokens) with its lowest-highest over the rounds, and the median of the
per-round ratios ferrum / onnxruntime (below 1: ferrum is faster). Needs torch, transformers,
onnx and onnxruntime (never ferrum's dependencies); ferrum comes from the dev venv.

Measured on 2026-12-05 on the 2-core development machine while other builds ran (load average
about 9), onnxruntime 1.32.0, 9 rounds, ms per token (ferrum / onnxruntime, median of the rounds):
gpt2-small 0.91 against 1.11 (0.69), llama-small 0.84 against 1.14 (0.70); without the cache
ferrum takes 4.1-5.5. gpt2-base 170 against 154 (1.11, rounds 1.01-1.27), llama-base 121
against 120 (1.00, 0.94-1.12). At the small size a step is a hundred-odd engine calls and
ferrum's are cheaper than onnxruntime's nodes; at the base size over 90 % of ferrum's step
is the f32 products of one row by each weight (``[1, 768] @ [768, 2304 | 768 | 3072]``,
``[1, 3072] @ [3072, 768]``), bound by memory bandwidth as onnxruntime's are.
"""

from __future__ import annotations

import argparse
import io
import json
import site
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
site.addsitedir(str(ROOT / ".venv" / "lib" / "python3.11" / "site-packages"))
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from harness import SPIN_SETTLE_S, Report, add_report_args, alternate, median_range, round_ratios  # noqa: E402

PROMPT_LEN = 16
Generator = Callable[[np.ndarray, int], np.ndarray]
SIZES: dict[str, dict[str, dict[str, Any]]] = {
    "small": {
        "gpt2": {"vocab_size": 256, "n_positions": 128, "n_embd": 64, "n_layer": 2, "n_head": 4},
        "llama": {
            "vocab_size": 256, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
            "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 128,
        },
    },
    "base": {
        "gpt2": {"vocab_size": 50257, "n_positions": 1024, "n_embd": 768, "n_layer": 12, "n_head": 12},
        "llama": {
            "vocab_size": 32000, "hidden_size": 768, "intermediate_size": 2048, "num_hidden_layers": 12,
            "num_attention_heads": 12, "num_key_value_heads": 4, "max_position_embeddings": 1024,
        },
    },
}


def build(kind: str, sizes: dict[str, Any], seed: int) -> Any:
    """A ``transformers`` model with random weights (eval mode, eager attention)."""
    import torch  # type: ignore[import-not-found, unused-ignore]
    import transformers  # type: ignore[import-not-found, unused-ignore]

    torch.manual_seed(seed)
    if kind == "gpt2":
        config: Any = transformers.GPT2Config(
            **sizes, activation_function="gelu_new", resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
            initializer_range=0.1, bos_token_id=0, eos_token_id=0,
        )
        model: Any = transformers.GPT2LMHeadModel
    else:
        config = transformers.LlamaConfig(
            **sizes, initializer_range=0.1, tie_word_embeddings=False, bos_token_id=0, eos_token_id=0,
            pad_token_id=None,
        )
        model = transformers.LlamaForCausalLM
    config._attn_implementation = "eager"
    return model(config).eval()


def n_layers_heads(model: Any) -> tuple[int, int, int]:
    """Layers, key/value heads and head size of a ``transformers`` causal LM."""
    c = model.config
    if hasattr(c, "n_layer"):
        return c.n_layer, c.n_head, c.n_embd // c.n_head
    return c.num_hidden_layers, c.num_key_value_heads, c.hidden_size // c.num_attention_heads


def torch_greedy(model: Any, prompt: np.ndarray, tokens: int) -> np.ndarray:
    """``transformers``' own greedy continuation, through its KV cache (the reference)."""
    import torch  # type: ignore[import-not-found, unused-ignore]

    with torch.no_grad():
        out = model(input_ids=torch.from_numpy(prompt), use_cache=True)
        new = []
        for _ in range(tokens):
            token = out.logits[:, -1].argmax(-1, keepdim=True)
            new.append(token)
            out = model(input_ids=token, cache=out.past_key_values, use_cache=True)
    return np.asarray(torch.cat(new, 1).numpy(), dtype=np.int64)


def export_onnx(model: Any) -> bytes:
    """The model as one ONNX graph: ``input_ids`` and flat past keys/values in, the last position's
    logits and the present keys/values out (TorchScript exporter, opset 17, dynamic lengths)."""
    import torch  # type: ignore[import-not-found, unused-ignore]
    from transformers import DynamicCache  # type: ignore[import-not-found, unused-ignore]

    layers, kv_heads, head_dim = n_layers_heads(model)

    class Step(torch.nn.Module):  # type: ignore[misc, unused-ignore]
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: torch.Tensor, *past: torch.Tensor) -> tuple[torch.Tensor, ...]:
            cache = DynamicCache(list(zip(past[0::2], past[1::2], strict=True)))
            out = self.model(input_ids=input_ids, cache=cache, use_cache=True)
            present = [t for layer in out.past_key_values.layers for t in (layer.keys, layer.values)]
            return (out.logits[:, -1], *present)

    past_names = [f"past_{i}_{kv}" for i in range(layers) for kv in ("key", "value")]
    present_names = [f"present_{i}_{kv}" for i in range(layers) for kv in ("key", "value")]
    # Two new positions after three cached ones: the trace takes the general (masked) path.
    ids = torch.zeros((1, 2), dtype=torch.int64)
    past = [torch.zeros((1, kv_heads, 3, head_dim)) for _ in past_names]
    axes: dict[str, dict[int, str]] = {"input_ids": {1: "seq"}}
    axes.update({n: {2: "past"} for n in past_names})
    axes.update({n: {2: "total"} for n in present_names})
    buffer = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(
            Step(), (ids, *past), buffer, input_names=["input_ids", *past_names],
            output_names=["logits", *present_names], dynamic_axes=axes, opset_version=17, dynamo=False,
        )
    return buffer.getvalue()


def ort_generator(model: Any) -> Generator:
    """Greedy generation by onnxruntime running the exported graph step by step."""
    import onnxruntime as ort  # type: ignore[import-not-found, import-untyped, unused-ignore]

    layers, kv_heads, head_dim = n_layers_heads(model)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    session = ort.InferenceSession(export_onnx(model), options, providers=["CPUExecutionProvider"])
    past_names = [f"past_{i}_{kv}" for i in range(layers) for kv in ("key", "value")]

    def run(prompt: np.ndarray, tokens: int) -> np.ndarray:
        empty = np.zeros((prompt.shape[0], kv_heads, 0, head_dim), np.float32)
        feed: dict[str, np.ndarray] = {"input_ids": prompt, **{n: empty for n in past_names}}
        new = []
        for step in range(tokens):
            logits, *present = session.run(None, feed)
            token = logits.argmax(-1).reshape(-1, 1).astype(np.int64)
            new.append(token)
            if step + 1 < tokens:
                feed = {"input_ids": token, **dict(zip(past_names, present, strict=True))}
        return np.concatenate(new, 1)

    return run


def ferrum_generator(model: Any, kind: str, folder: Path, use_cache: bool) -> Generator:
    """Greedy generation by the example's ferrum modules, loaded from the model's safetensors file."""
    from ferrum.backend import NdArray
    from safetensors.torch import save_file  # type: ignore[import-not-found, import-untyped, unused-ignore]

    from examples.llm_generation.generate import generate
    from examples.llm_generation.weights import load_gpt2, load_llama

    config, weights = folder / f"{kind}.config.json", folder / f"{kind}.safetensors"
    if not weights.exists():
        state = {k: v.detach().contiguous().clone() for k, v in model.state_dict().items()}
        if model.config.tie_word_embeddings:
            state.pop("lm_head.weight", None)
        save_file(state, str(weights))
        config.write_text(json.dumps(model.config.to_dict(), default=str), encoding="utf-8")
    device = NdArray.device()
    ferrum_model: Any = (load_gpt2 if kind == "gpt2" else load_llama)(config, weights, device)

    def run(prompt: np.ndarray, tokens: int) -> np.ndarray:
        return generate(ferrum_model, prompt, tokens, device, use_cache=use_cache)

    return run


def bound(run: Generator, prompt: np.ndarray, tokens: int) -> Callable[[], object]:
    """``run(prompt, tokens)`` as a zero-argument call for ``alternate``."""
    return lambda: run(prompt, tokens)


def run_case(
    case: str, kind: str, sizes: dict[str, Any], seed: int, tmp: Path, args: Any, report: Report
) -> list[str]:
    """Check and time one model's engines; its table rows."""
    model = build(kind, sizes, seed)
    rng = np.random.default_rng(seed)
    prompt = rng.integers(1, sizes["vocab_size"], (1, PROMPT_LEN)).astype(np.int64)
    reference = torch_greedy(model, prompt, args.tokens)
    folder = tmp / case
    folder.mkdir()
    engines = {
        "ferrum": ferrum_generator(model, kind, folder, use_cache=True),
        "onnxruntime": ort_generator(model),
    }
    if case.endswith("small"):
        engines["ferrum-nocache"] = ferrum_generator(model, kind, folder, use_cache=False)
    for name, run in engines.items():
        got = run(prompt, args.tokens)
        if not np.array_equal(got, reference):
            raise SystemExit(f"{case}: {name} generates {got.tolist()}, transformers {reference.tolist()}")
    candidates = {name: bound(run, prompt, args.tokens) for name, run in engines.items()}
    stats = alternate(candidates, args.rounds, warmup=1, settle_s=SPIN_SETTLE_S, rotate=True)
    rows = []
    for name, st in stats.items():
        ms = [t * 1e3 / args.tokens for t in st.times_s]
        ratio = round_ratios(st, stats["onnxruntime"]) if name != "onnxruntime" else None
        spread = f"({min(ms):.3f}-{max(ms):.3f})"
        ratios = median_range(ratio) if ratio else ""
        rows.append(f"{case:<12} {name:<15} {statistics.median(ms):>9.3f} {spread:>18} {ratios:>20}")
        ratio_median = statistics.median(ratio) if ratio else None
        metrics = {"ms_per_token": statistics.median(ms), "ratio_to_ort": ratio_median}
        report.add(f"{case}/{name}", metrics, st)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--only", default="", help="cases (gpt2-small, llama-base, ...) containing this")
    add_report_args(parser)
    args = parser.parse_args(argv)
    if args.rounds < 9:
        parser.error(f"--rounds must be at least 9, found {args.rounds}")
    report = Report("llm_generation", {"rounds": args.rounds, "tokens": args.tokens, "prompt": PROMPT_LEN})
    header = f"{'case':<12} {'engine':<15} {'ms/token':>9} {'(lowest-highest)':>18} {'ferrum/ort':>20}"
    lines = [header, "-" * len(header)]
    with tempfile.TemporaryDirectory() as tmp:
        for size, kinds in SIZES.items():
            for seed, (kind, sizes) in enumerate(kinds.items()):
                case = f"{kind}-{size}"
                if args.only in case:
                    rows = run_case(case, kind, sizes, seed, Path(tmp), args, report)
                    print("\n".join(rows), flush=True)
                    lines += rows
    print()
    print("\n".join(lines))
    report.finish(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
