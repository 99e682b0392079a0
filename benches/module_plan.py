"""ferrum's own modules in inference, op by op and through ``ferrum.jit.trace``, against onnxruntime.

    python benches/module_plan.py [--rounds 9] [--only SUBSTRING]

Runs with a Python that has onnx and onnxruntime (and, for the GPT-2 case, torch and transformers:
never ferrum's dependencies); ferrum is the one that Python imports, else the checkout's ``.venv``'s.
Two models, each in ``valid()`` on NdArray:

- ``encoder``: a BERT-style ``nn.TransformerEncoder`` (d_model 32, d_ff 64, 4 heads, 2 layers,
  post-norm, GELU), random weights; onnxruntime runs the same weights in a graph written here with
  ``onnx.helper`` (MatMul/Add, Reshape/Transpose, Softmax, LayerNormalization, Gelu; opset 20).
- ``gpt2``: the GPT-2 of examples/llm_generation (its stored weights), one forward over the whole
  sequence; onnxruntime runs transformers' ``GPT2LMHeadModel`` with the same weights, exported by
  torch's TorchScript exporter (opset 17, no cache).

Each case first checks that the three agree (max difference printed), then the engines take turns
round by round, each running calls for at least 50 ms per round (the mean per call is the round's
time; ``--median-of N``: the median of N single calls, which a loaded machine's preemptions move
less). Columns: medians over the rounds; ``eager``: the module called op by op; ``plan``: the
traced plan; ``kernels``: the plan's instructions' own time (``Plan.profile``), so ``eager -
kernels`` is what the op-by-op call spends outside the engine (dispatch); ratios are the median of
per-round ratios with their lowest-highest.

Measured on 2026-12-05 on the 2-core development machine under load from other builds (load average
6-7), onnxruntime 1.32.0, 9 rounds, ``--median-of 200``, ms (ratios to onnxruntime, median and
lowest-highest of the rounds):

    case             eager  plan  kernels  ort    eager/ort          plan/ort
    encoder b1 s16   0.147  0.070  0.057  0.064  2.29 (2.26-2.31)   1.11 (1.10-1.11)
    encoder b2 s16   0.183  0.106  0.091  0.097  1.88 (1.65-1.90)   1.09 (0.96-1.14)
    encoder b2 s128  0.778  0.651  0.624  0.637  1.23 (1.20-1.24)   1.02 (1.01-1.05)
    gpt2 b1 s16      0.258  0.140  0.129  0.177  1.46 (1.26-1.50)   0.79 (0.70-0.81)
    gpt2 b2 s16      0.380  0.245  0.232  0.248  1.53 (1.38-1.56)   1.00 (0.87-1.03)
    gpt2 b2 s64      1.165  0.817  0.778  0.869  1.35 (1.27-1.39)   0.94 (0.92-0.97)

Op by op, 40-60 % of a short-sequence call is spent outside the engine's kernels (``eager -
kernels``); the plan leaves 10-20 µs of it (the call, the argument walk, the plan's own steps).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import site
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # examples/ and tests/support
if importlib.util.find_spec("ferrum") is None:
    # A Python with onnxruntime but without ferrum (a separate torch venv): the checkout's dev venv.
    _PYTHON = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    site.addsitedir(str(ROOT / ".venv" / "lib" / _PYTHON / "site-packages"))

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from ferrum import Tensor  # noqa: E402
from ferrum.backend import NdArray  # noqa: E402
from ferrum.jit import Traced, trace  # noqa: E402
from ferrum.nn.transformer import TransformerEncoderConfig, TransformerEncoderInput  # noqa: E402
from harness import (  # noqa: E402
    SPIN_SETTLE_S,
    Report,
    add_report_args,
    alternate,
    mean_over,
    median_of,
    median_range,
    round_ratios,
)
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

MIN_ROUND_S = 0.05
DEVICE = NdArray.device()
LLM = ROOT / "examples" / "llm_generation"


def _session(ort: Any, model: onnx.ModelProto) -> Any:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 2
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def encoder_onnx(encoder: Any, n_heads: int) -> onnx.ModelProto:
    """The post-norm encoder stack as an ONNX graph with the module's weights (opset 20)."""
    nodes: list[onnx.NodeProto] = []
    inits: list[onnx.TensorProto] = []
    count = [0]

    def const(value: np.ndarray[Any, Any]) -> str:
        count[0] += 1
        name = f"c{count[0]}"
        inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(op: str, inputs: list[str], **attrs: Any) -> str:
        count[0] += 1
        out = f"v{count[0]}"
        nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def linear(x: str, layer: Any) -> str:
        y = node("MatMul", [x, const(layer.weight.val().to_numpy())])
        return node("Add", [y, const(layer.bias.val().to_numpy())])

    def norm(x: str, layer: Any) -> str:
        gamma, beta = layer.gamma.val().to_numpy(), layer.beta.val().to_numpy()
        return node("LayerNormalization", [x, const(gamma), const(beta)], axis=-1, epsilon=layer.epsilon)

    shape = const(np.array([0, 0, n_heads, -1], dtype=np.int64))
    flat = const(np.array([0, 0, -1], dtype=np.int64))
    x = "x"
    for layer in encoder.layers:
        mha = layer.mha
        heads = [node("Reshape", [linear(x, lin), shape]) for lin in (mha.query, mha.key, mha.value)]
        q, k, v = (node("Transpose", [h], perm=[0, 2, 1, 3]) for h in heads)
        kt = node("Transpose", [k], perm=[0, 1, 3, 2])
        scale = const(np.array(1.0 / np.sqrt(mha.d_k), dtype=np.float32))
        scores = node("Mul", [node("MatMul", [q, kt]), scale])
        context = node("MatMul", [node("Softmax", [scores], axis=-1), v])
        merged = node("Reshape", [node("Transpose", [context], perm=[0, 2, 1, 3]), flat])
        x = norm(node("Add", [x, linear(merged, mha.output)]), layer.norm_1)
        inner = node("Gelu", [linear(x, layer.pwff.linear_inner)])
        x = norm(node("Add", [x, linear(inner, layer.pwff.linear_outer)]), layer.norm_2)
    nodes[-1].output[0] = "y"
    d_model = encoder.layers[0].mha.d_model
    graph = helper.make_graph(
        nodes,
        "encoder",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", d_model])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", d_model])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


Case = tuple[dict[str, Callable[[], Any]], Any, list[Any]]
"""A case's engines by name, its traced function and the plan's inputs (for the profile)."""


def encoder_case(batch: int, seq: int, ort: Any) -> Case:
    n_heads = 4
    encoder = TransformerEncoderConfig(32, 64, n_heads, 2).with_dropout(0.0).init(DEVICE).valid()
    x_np = np.random.default_rng(0).standard_normal((batch, seq, 32)).astype(np.float32)
    x = Tensor.from_numpy(x_np, DEVICE)
    fast = trace(encoder, TransformerEncoderInput(x))
    engines: dict[str, Callable[[], Any]] = {
        "eager": lambda: encoder(TransformerEncoderInput(x)),
        "plan": lambda: fast(TransformerEncoderInput(x)),
    }
    if ort is not None:
        session = _session(ort, encoder_onnx(encoder, n_heads))
        engines["ort"] = lambda: session.run(None, {"x": x_np})
    return engines, fast, [x]


def gpt2_case(batch: int, seq: int, ort: Any) -> Case:
    from examples.llm_generation.weights import load_gpt2

    model = load_gpt2(LLM / "gpt2.config.json", LLM / "gpt2.safetensors", DEVICE)
    ids_np = np.random.default_rng(0).integers(0, model.vocab_size, (batch, seq), dtype=np.int64)
    ids = Tensor.from_numpy(ids_np, DEVICE)
    fast = trace(model.forward, ids)
    engines: dict[str, Callable[[], Any]] = {"eager": lambda: model.forward(ids), "plan": lambda: fast(ids)}
    if ort is not None:
        session = _session(ort, gpt2_onnx())
        engines["ort"] = lambda: session.run(None, {"input_ids": ids_np})
    return engines, fast, [ids]


def gpt2_onnx() -> onnx.ModelProto:
    """transformers' GPT-2 with the example's config and weights, exported without a cache (opset 17)."""
    import io

    import torch  # type: ignore[import-not-found, unused-ignore]
    import transformers  # type: ignore[import-not-found, unused-ignore]
    from safetensors.torch import load_file  # type: ignore[import-not-found, unused-ignore]

    config = transformers.GPT2Config.from_json_file(str(LLM / "gpt2.config.json"))
    config.use_cache = False
    config._attn_implementation = "eager"
    model = transformers.GPT2LMHeadModel(config).eval()
    state = load_file(str(LLM / "gpt2.safetensors"))
    model.load_state_dict(state, strict=False)

    class Logits(torch.nn.Module):  # type: ignore[misc, unused-ignore]
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any) -> Any:
            # an explicit all-ones mask keeps transformers' packed-sequence check (aten::diff) out
            mask = torch.ones_like(input_ids)
            return self.model(input_ids=input_ids, attention_mask=mask, use_cache=False).logits

    buffer = io.BytesIO()
    example = torch.zeros((1, 8), dtype=torch.int64)
    axes = {"input_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}
    with torch.no_grad():
        torch.onnx.export(
            Logits(), (example,), buffer, input_names=["input_ids"], output_names=["logits"],
            dynamic_axes=axes, opset_version=17, dynamo=False,
        )  # fmt: skip
    return onnx.load_from_string(buffer.getvalue())


CASES: dict[str, Callable[[Any], Case]] = {
    "encoder b1 s16": lambda ort: encoder_case(1, 16, ort),
    "encoder b2 s16": lambda ort: encoder_case(2, 16, ort),
    "encoder b2 s128": lambda ort: encoder_case(2, 128, ort),
    "gpt2 b1 s16": lambda ort: gpt2_case(1, 16, ort),
    "gpt2 b2 s16": lambda ort: gpt2_case(2, 16, ort),
    "gpt2 b2 s64": lambda ort: gpt2_case(2, 64, ort),
}


def _numpy(out: Any) -> np.ndarray[Any, Any]:
    if isinstance(out, list):
        out = out[0]
    return out if isinstance(out, np.ndarray) else out.to_numpy()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--only", default="", help="cases whose name contains this")
    parser.add_argument(
        "--median-of", type=int, default=0,
        help="time each round as the median of this many single calls (robust to a loaded machine's"
        " preemptions) instead of the mean over 50 ms of calls",
    )  # fmt: skip
    add_report_args(parser)
    args = parser.parse_args(argv)
    report = Report("module_plan", {"rounds": args.rounds, "only": args.only})
    ort: Any
    try:  # by name: onnxruntime is no dependency (and has no type stubs)
        ort = importlib.import_module("onnxruntime")
    except ImportError:
        ort = None
    print(
        f"{'case':16s} {'eager ms':>9s} {'plan ms':>8s} {'kernels':>8s} {'ort ms':>7s} {'max diff':>9s}"
        "  eager/ort (median, low-high)  plan/ort (median, low-high)"
    )
    for case, make in CASES.items():
        if args.only not in case:
            continue
        engines, fast, plan_inputs = make(ort)
        outs = {name: _numpy(fn()) for name, fn in engines.items()}
        diff = max(float(np.abs(o - outs["eager"]).max()) for o in outs.values())
        measure = median_of(args.median_of) if args.median_of else mean_over(MIN_ROUND_S)
        stats = alternate(engines, args.rounds, warmup=3, settle_s=SPIN_SETTLE_S, measure=measure)
        eager, plan = stats["eager"], stats["plan"]
        kernels = _kernel_seconds(fast, plan_inputs)
        metrics: dict[str, float] = {
            "eager ms": eager.median * 1e3, "plan ms": plan.median * 1e3, "kernels ms": kernels * 1e3
        }
        line = f"{case:16s} {eager.median * 1e3:9.3f} {plan.median * 1e3:8.3f} {kernels * 1e3:8.3f}"
        if "ort" in stats:
            other = stats["ort"]
            eager_r, plan_r = round_ratios(eager, other), round_ratios(plan, other)
            line += f" {other.median * 1e3:7.3f} {diff:9.1e}  {median_range(eager_r):28s}"
            line += f" {median_range(plan_r)}"
            metrics |= {"ort ms": other.median * 1e3, "eager/ort": statistics.median(eager_r)}
            metrics["plan/ort"] = statistics.median(plan_r)
        print(line, flush=True)
        report.add(case, metrics, plan)
    report.finish(args)
    return 0


def _kernel_seconds(traced: Traced[..., Any], inputs: list[Any]) -> float:
    """The median over 20 profiled runs of the summed instruction times of ``traced``'s plan."""
    plan = traced.plans()[-1]
    return statistics.median(sum(t for _, _, t in plan.profile(inputs)[1]) for _ in range(20))


if __name__ == "__main__":
    sys.exit(main())
